"""DXP test peers: a raw client that sends and reads messages with timeouts, ``damka dxp``
as a process, and ``play`` listening in a thread. Every socket is on 127.0.0.1 and a port
the system picks."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.search import Engine
from protocol.dxp.codec import Reassembler, decode, encode
from protocol.dxp.listener import DxpServer, play
from protocol.dxp.records import append_pdn
from protocol.dxp.session import DxpSettings

REPO = Path(__file__).resolve().parents[1]
#: the longest an expected event may take on a loaded machine
CEILING = 15.0


class RawPeer:
    """A hand-driven DXP peer: raw bytes or messages out, decoded messages in."""

    def __init__(self, port: int):
        self.opened = time.monotonic()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.frames = Reassembler()
        self.pending: list[str] = []

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, message) -> None:
        self.sock.sendall(encode(message))

    def recv(self, timeout: float = 10.0):
        deadline = time.monotonic() + timeout
        while not self.pending:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = self.sock.recv(4096)
            assert data, "the other side closed the connection"
            self.pending += self.frames.feed(data)
        return decode(self.pending.pop(0))

    def until_closed(self, timeout: float = CEILING) -> list:
        """Every message until the other side closes the connection; fails if it does not."""
        out = [decode(text) for text in self.pending]
        self.pending.clear()
        deadline = time.monotonic() + timeout
        while True:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                raise AssertionError(f"still open after {timeout} s") from None
            except ConnectionResetError:
                return out
            if not data:
                return out
            out += [decode(text) for text in self.frames.feed(data)]

    def close(self) -> None:
        self.sock.close()


class DamkaDxp:
    """``damka dxp`` as a process listening on a free port, its output kept in ``lines``."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "protocol", "dxp", "--port", "0", *args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, bufsize=1,
        )
        first = self.proc.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)$", first.strip())
        assert found, f"unexpected first line {first!r}"
        self.port = int(found.group(1))
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True).start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ServerThread:
    """``play`` listening in a thread as ``damka dxp`` runs it: an engine per session (up to
    ``max_sessions``), log lines in ``lines``, games appended to ``pdn`` if given."""

    def __init__(self, settings: DxpSettings, max_sessions: int = 1, pdn: Path | None = None):
        self.server = DxpServer("127.0.0.1", 0)
        self.port = self.server.address[1]
        self.lines: list[str] = []

        def new_engine() -> Engine:
            return Engine("international", hash_mb=4)

        on_game = (lambda record: append_pdn(pdn, record)) if pdn is not None else None
        self.thread = threading.Thread(
            target=play, args=(new_engine(), settings), daemon=True,
            kwargs=dict(server=self.server, log=self.lines.append, on_game=on_game,
                        max_sessions=max_sessions, new_engine=new_engine))
        self.thread.start()

    def close(self) -> None:
        self.server.close()
        self.thread.join(timeout=CEILING)
        assert not self.thread.is_alive(), "play() did not return"


class RestartingFollower:
    """A DXP follower as engines are served in a restart loop: it listens on one port,
    plays quick legal moves (the first in the generator's order) on one connection, and
    after ``games_per_life`` games closes it and is gone for ``delay`` seconds before it
    listens again, ``lives`` times in all (then never again). ``drop_after`` moves into a
    game it closes the connection mid-game instead (then restarts the same way); with
    ``drop_before_first`` it closes on the first move it is asked for in each game. ``games``
    counts the games that reached their GAMEEND; ``connections`` the connections accepted."""

    def __init__(self, *, lives: int = 100, delay: float = 0.5, games_per_life: int = 1,
                 drop_after: int | None = None, drop_before_first: bool = False):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.lives, self.delay, self.games_per_life = lives, delay, games_per_life
        self.drop_after, self.drop_before_first = drop_after, drop_before_first
        self.games = 0
        self.connections = 0
        self.listening = threading.Event()
        self._closed = threading.Event()
        self._listener: socket.socket | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        assert self.listening.wait(CEILING), "the follower did not start listening"

    def _serve(self) -> None:
        for life in range(self.lives):
            if life and self._closed.wait(self.delay):
                return
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(1)
            listener.settimeout(0.2)
            self._listener = listener
            self.listening.set()
            conn = None
            while not self._closed.is_set():
                try:
                    conn, _ = listener.accept()
                    break
                except TimeoutError:
                    continue
                except OSError:
                    return
            listener.close()  # gone: nobody listens until the next life
            if conn is None:
                return
            self.connections += 1
            with conn:
                self._play(conn)

    def _play(self, conn: socket.socket) -> None:
        from engine.board import Board
        from protocol.dxp.codec import DxpMove, GameAccept, GameEnd, GameRequest
        from protocol.dxp.convert import find_move, move_to_dxp, position_from_dxp

        frames = Reassembler()
        board: Board | None = None
        white = True
        moves = 0
        games = 0
        conn.settimeout(CEILING)

        def our_move() -> bool:
            nonlocal moves
            if board is None or board.white_to_move != white or not board.legal_moves:
                return True
            if self.drop_before_first or (self.drop_after is not None
                                          and moves >= self.drop_after):
                return False  # drop the connection: the caller closes it
            move = next(iter(board.legal_moves))
            board.push(move)
            moves += 1
            conn.sendall(encode(move_to_dxp(move, seconds=1)))
            return True

        while not self._closed.is_set():
            try:
                data = conn.recv(4096)
            except OSError:
                return
            if not data:
                return
            for text in frames.feed(data):
                message = decode(text)
                if isinstance(message, GameRequest):
                    board = Board("international", None if message.position is None
                                  else position_from_dxp(message.position))
                    white, moves = message.follower_white, 0
                    conn.sendall(encode(GameAccept("fake follower")))
                    if not our_move():
                        return
                elif isinstance(message, DxpMove) and board is not None:
                    board.push(find_move(board, message))
                    if not our_move():
                        return
                elif isinstance(message, GameEnd):
                    conn.sendall(encode(GameEnd(message.reason, stop=False)))
                    board = None
                    games += 1
                    self.games += 1
                    if games >= self.games_per_life:
                        return

    def close(self) -> None:
        self._closed.set()
        self.thread.join(timeout=CEILING)
