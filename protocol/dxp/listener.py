"""The DXP transport: sockets, the pacing of our messages, and the listen/accept and connect
loops of ``damka dxp``.

Its own module so that the session (protocol.dxp.session) never touches a socket. Each
connection has its own thread (reading the socket, and waking the session when a deadline
passes), its own session and its own engine; ``max_sessions`` of them play at once, and a
connection beyond that is told "busy" (a CHAT, and GAMEACC code 2 for its GAMEREQ).
``run_connection`` explains the locking between the reading thread and the search thread.
"""

from __future__ import annotations

import itertools
import select
import socket
import sys
import threading
import time
import traceback
from typing import Callable, Iterable

from engine.printable import printable
from engine.search import Engine

from protocol.dxp.codec import (
    AcceptCode,
    BackAccept,
    Chat,
    GameAccept,
    GameRequest,
    Message,
    Reassembler,
    encode,
)
from protocol.dxp.defaults import DEFAULT_HOST, DEFAULT_MAX_SESSIONS, DEFAULT_PORT
from protocol.dxp.records import GameRecord
from protocol.dxp.session import NAME, DxpSession, DxpSettings, Log, MatchProgress, SearchDone
from protocol.dxp.transport import send_all

__all__ = [
    "DEFAULT_HOST",
    "PACE",
    "DEFAULT_MAX_SESSIONS",
    "BUSY_WAIT",
    "BUSY_LINGER",
    "POLL_CAP",
    "MAX_WAITING",
    "run_connection",
    "refuse_busy",
    "DxpServer",
    "connect",
    "parse_address",
    "play",
]

#: the least time between two of our messages with nothing received in between, and always
#: after GAMEACC or BACKACC: pydraughts merges messages that arrive together and loses the
#: second, and a widely used client loses a first move sent right after GAMEACC
PACE = 0.1
#: a connection beyond the limit waits this long for a session to end before it is told busy
BUSY_WAIT = 0.5
#: ... then this long for its GAMEREQ (answered with GAMEACC code 2) before it is closed
BUSY_LINGER = 2.0
#: the longest the reading thread sleeps before it asks the session for its next deadline
POLL_CAP = 0.2
#: seconds between a finished search's looks at whether it is still wanted, while the
#: connection's thread holds the session
CALLBACK_POLL = 0.02


class _Writer:
    """Writes messages, keeping PACE between two of ours with nothing received between them
    (and always after GAMEACC/BACKACC); ``on_sent(message, at)`` hears when each went out."""

    def __init__(self, sock: socket.socket, pace: float, trace: Log | None,
                 on_sent: Callable[[Message, float], object] | None = None):
        self.sock = sock
        self.pace = pace
        self.trace = trace
        self.on_sent = on_sent
        self.last_sent = -1e9
        self.last: Message | None = None
        self.received_since = True

    def send(self, messages: Iterable[Message]) -> bool:
        for message in messages:
            wait = self.last_sent + self.pace - time.monotonic()
            paced = not self.received_since or isinstance(self.last, (GameAccept, BackAccept))
            if paced and wait > 0:
                time.sleep(wait)
            try:
                send_all(self.sock, encode(message))
            except OSError:  # (a peer that never reads: TimeoutError after SEND_TIMEOUT)
                return False
            if self.trace:
                self.trace(f"> {message.to_text()}")
            self.last_sent = time.monotonic()
            self.last = message
            self.received_since = False
            if self.on_sent is not None:
                self.on_sent(message, self.last_sent)
        return True


def run_connection(sock: socket.socket, session: DxpSession, *, pace: float = PACE,
                   trace: Log | None = None) -> DxpSession:
    """Run one connection to its end (the session is done or the peer went away).

    This thread reads the socket and hands each message to the session at once; a finished
    search calls back from the search thread. Both go through one lock, and each sends what
    the session returned before letting go of it, so messages leave in the session's order.
    (No hand-off between threads on the way: each would add a wake-up to every move.)
    Between messages this thread waits with a timeout: when the session's next deadline
    (``wake_at``: the peer's flag, or its idle timeout) has passed, it calls ``tick``. It
    asks again at least every POLL_CAP seconds, since a search that ends starts the peer's
    clock meanwhile.
    """
    lock = threading.RLock()  # (a cancelled search calls back at once, in the same thread)
    writer = _Writer(sock, pace, trace, on_sent=session.sent)

    def deliver(messages: list[Message]) -> None:  # under the lock
        if not writer.send(messages):
            session.disconnect("sending failed")
        if session.done:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes this thread's poll
            except OSError:
                pass

    def on_search(event: SearchDone) -> None:  # in the search thread
        # a search that is no longer current is not waited on the lock for: the thread that
        # cancelled it holds the lock and may be waiting for this thread (a hash-table clear
        # queued behind this callback, which the next game's search waits for)
        while not lock.acquire(timeout=CALLBACK_POLL):
            if not session.is_current(event):
                return
        try:
            if not session.done:
                deliver(session.search_done(event))
        finally:
            lock.release()

    session.post = on_search
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    frames = Reassembler()
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLPRI)
    try:
        with lock:
            deliver(session.start())
        while not session.done:
            with lock:
                wake = session.wake_at()
            wait = POLL_CAP if wake is None else min(POLL_CAP, max(0.0, wake - time.monotonic()))
            try:
                ready = poller.poll(wait * 1000)
            except OSError as exc:
                with lock:
                    session.disconnect(f"connection error: {exc}")
                break
            if not ready:
                with lock:
                    if session.done:
                        break
                    if wake is not None and time.monotonic() >= wake:
                        deliver(session.tick(time.monotonic()))
                continue
            try:
                data = sock.recv(4096)
                reason = "the peer closed the connection"
            except OSError as exc:
                data, reason = b"", f"connection error: {exc}"
            at = time.monotonic()
            with lock:
                if session.done:
                    break
                if not data:
                    session.disconnect(reason)
                    break
                writer.received_since = True
                for text in frames.feed(data):
                    if trace:
                        trace(f"< {printable(text)}")
                    deliver(session.receive(text, at))
                    if session.done:
                        break
    finally:
        with lock:
            session.close()
        session.join()  # outside the lock: the search thread may be calling back
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
    return session


def refuse_busy(sock: socket.socket, why: str, follower: bool, *, linger: float = BUSY_LINGER,
                name: str = NAME) -> None:
    """A connection we cannot serve now: a CHAT saying so at once; a follower then answers
    the peer's GAMEREQ (if one comes within ``linger`` seconds) with GAMEACC code 2, "refused
    this game, willing to play another" (later). Then the connection is closed."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        send_all(sock, encode(Chat.safe(why)), BUSY_LINGER)
        if follower:
            frames = Reassembler()
            deadline = time.monotonic() + linger
            answered = False
            while not answered:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                sock.settimeout(left)
                data = sock.recv(4096)
                if not data:
                    break
                for text in frames.feed(data):
                    if text.startswith(GameRequest.HEADER):
                        send_all(sock, encode(GameAccept(name, AcceptCode.REFUSED_THIS_GAME)),
                                 BUSY_LINGER)
                        answered = True
                        break
    except OSError:  # (socket.timeout included)
        pass
    finally:
        _close_gently(sock)


def _close_gently(sock: socket.socket, wait: float = 1.0) -> None:
    """Close after the peer has had what we sent: FIN, then read until its end (or ``wait``
    seconds), so that a reset never overtakes our last messages."""
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(4096):
                break
    except OSError:
        pass
    sock.close()


class _EnginePool:
    """Engines for the sessions: made when first needed (``make``), kept for the next session
    (so at most one per session that can run at once: memory is sessions x hash)."""

    def __init__(self, first: Engine | None, make: Callable[[], Engine] | None):
        self._idle: list[Engine] = [first] if first is not None else []
        self._make = make
        self._lock = threading.Lock()

    def get(self) -> Engine | None:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._make() if self._make is not None else None

    def put(self, engine: Engine) -> None:
        with self._lock:
            self._idle.append(engine)


class DxpServer:
    """A listening socket that hands out connections (``play`` serves each in its thread)."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.create_server((host, port), family=family)
        self.sock.settimeout(0.25)  # so that close() from another thread is noticed
        self._closed = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return host, port

    def accept(self, until: Callable[[], bool] | None = None) -> tuple[socket.socket, str] | None:
        """The next connection, or None once the server is closed (or ``until()`` is true,
        asked every quarter of a second)."""
        while not self._closed.is_set() and not (until is not None and until()):
            try:
                conn, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self._closed.is_set():
                    return None
                raise
            conn.settimeout(None)
            return conn, f"{peer[0]}:{peer[1]}"
        return None

    def close(self) -> None:
        self._closed.set()
        self.sock.close()


def connect(host: str, port: int, timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    return sock


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) -> (host, port); ValueError if it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


# -- serving: the listen/accept and connect loops -----------------------------------------


def _stdout_log(line: str) -> None:
    sys.stdout.write(f"damka dxp: {line}\n")  # one write: sessions log from several threads
    sys.stdout.flush()


#: connections (served or being told busy) beyond the session limit that may wait at once;
#: more are closed without a word (a flood must not make a thread each)
MAX_WAITING = 16


def play(
    engine: Engine,
    settings: DxpSettings,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    connect_to: tuple[str, int] | None = None,
    on_game: Callable[[GameRecord], object] | None = None,
    log: Log = _stdout_log,
    trace: Log | None = None,
    server: DxpServer | None = None,
    on_session: Callable[[DxpSession], object] | None = None,
    max_sessions: int = 1,
    new_engine: Callable[[], Engine] | None = None,
) -> int:
    """Serve (listen) or play (connect) until done; returns the exit status.

    Listening, each connection gets its own thread, session and engine (``engine`` first,
    then more from ``new_engine``, kept for later sessions), up to ``max_sessions`` at once
    (1 without ``new_engine``); a connection beyond that waits BUSY_WAIT seconds for a free
    session and is then told busy (``refuse_busy``). A follower serves until the server is
    closed; an initiator until all its games are requested. Then the sessions still playing
    are waited for. Connecting, one connection is played to its end. ``on_session`` sees
    each connection's session (for statistics); ``on_game`` is called under a lock.
    """
    progress = MatchProgress()
    counter = itertools.count(1)
    shared = threading.Lock()

    def rounds() -> int:
        with shared:
            return next(counter)

    def finished(record: GameRecord) -> None:
        if on_game is not None:
            with shared:
                on_game(record)

    def session(peer: str, engine: Engine, session_log: Log) -> DxpSession:
        new = DxpSession(engine, settings, on_game=finished, log=session_log, progress=progress,
                         rounds=rounds, site=peer)
        if on_session is not None:
            on_session(new)
        return new

    if connect_to is not None:
        try:
            sock = connect(*connect_to)
        except OSError as exc:
            log(f"cannot connect to {connect_to[0]}:{connect_to[1]}: {exc}")
            return 1
        peer = f"{connect_to[0]}:{connect_to[1]}"
        log(f"connected to {peer}")
        run_connection(sock, session(peer, engine, log), trace=trace)
        log("connection closed")
        return 0

    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
    limit = max_sessions if new_engine is not None else 1
    pool = _EnginePool(engine, new_engine)
    slots = threading.BoundedSemaphore(limit)
    waiting = threading.BoundedSemaphore(limit + MAX_WAITING)
    threads: list[threading.Thread] = []
    busy = f"busy: already playing on {limit} connection{'s' if limit != 1 else ''}; try again later"

    def all_requested() -> bool:
        return settings.match is not None and progress.requested >= settings.match.games

    def serve(sock: socket.socket, peer: str) -> None:
        try:
            if not slots.acquire(timeout=BUSY_WAIT):
                log(f"{peer}: refused: {busy}")
                refuse_busy(sock, busy, follower=settings.match is None, name=settings.name)
                return
            try:
                try:
                    ours = pool.get()
                except (MemoryError, ValueError) as exc:  # (no memory for another hash table)
                    ours = None
                    log(f"{peer}: cannot make an engine: {type(exc).__name__}: {exc}")
                if ours is None:
                    refuse_busy(sock, busy, follower=settings.match is None, name=settings.name)
                    return
                try:
                    run_connection(sock, session(peer, ours, lambda line: log(f"{peer}: {line}")),
                                   trace=None if trace is None else (lambda line: trace(f"{peer} {line}")))
                finally:
                    pool.put(ours)
            finally:
                slots.release()
            log(f"connection from {peer} closed")
        except Exception:  # whatever happened, keep serving
            log(traceback.format_exc().rstrip())
        finally:
            waiting.release()

    server = server or DxpServer(host, port)
    bound_host, bound_port = server.address
    log(f"listening on {bound_host}:{bound_port}")
    try:
        while not all_requested():
            accepted = server.accept(until=all_requested)
            if accepted is None:
                break
            sock, peer = accepted
            if not waiting.acquire(blocking=False):
                log(f"connection from {peer} closed at once: too many connections")
                sock.close()
                continue
            log(f"connection from {peer}")
            thread = threading.Thread(target=serve, args=(sock, peer), name=f"damka-dxp {peer}",
                                      daemon=True)
            threads.append(thread)
            thread.start()
            threads = [t for t in threads if t.is_alive()]
    finally:
        server.close()
        for thread in threads:
            thread.join()
    return 0
