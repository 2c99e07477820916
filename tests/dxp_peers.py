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
from protocol.dxp.server import DxpServer, DxpSettings, append_pdn, play

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
