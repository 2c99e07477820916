"""The Hub engine keeps its promises when things go wrong (issue 30, items 2, 4 and 12): ``ready``
only when the engine is built, a ``done`` for every ``go``, output that never raises on a
character its encoding lacks, input that never kills it, and no control character of the
client's echoed raw."""

from __future__ import annotations

import io
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import Future

import pytest

from engine import Board
from protocol.hub.server import HubServer
from protocol.hub.text import parse_line

from hub_process import HUB_COMMAND, HubProcess

#: an address-space cap under which a 4096 MB hash table cannot be had but the engine runs
MEMORY_CAP = 3 * 1024**3


class Hub(HubProcess):
    """HubProcess with a memory cap or an output encoding of its own; it writes UTF-8 (what
    the engine reads) and reads the output strictly in that encoding."""

    def __init__(self, memory_cap: int | None = None, encoding: str = "utf-8"):
        env = None
        if encoding != "utf-8":
            import os

            env = {**os.environ, "PYTHONIOENCODING": encoding}

        def cap() -> None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

        self.encoding = encoding
        self.proc = subprocess.Popen(
            HUB_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, preexec_fn=cap if memory_cap else None)
        self.lines: "queue.Queue[tuple[float, str | None]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put((time.monotonic(), raw.decode(self.encoding).rstrip("\n")))
        self.lines.put((time.monotonic(), None))

    def send(self, line: str) -> None:
        self.send_bytes(line.encode("utf-8") + b"\n")

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def quit(self) -> str:
        """Ends the process with ``quit``; its stderr (it must exit 0)."""
        self.send("quit")
        assert self.proc.wait(timeout=10) == 0
        return self.proc.stderr.read().decode("utf-8", "backslashreplace")


def _legal(board: Board, done_line: str) -> bool:
    command, args = parse_line(done_line)
    return command == "done" and board.parse_move(args["move"]) in board.legal_moves


needs_rlimit = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS caps memory on Linux")


# -- item 2: ready means ready, and every go gets its done ----------------------------------


@needs_rlimit
def test_init_that_cannot_allocate_the_hash_says_so_and_no_ready():
    hub = Hub(memory_cap=MEMORY_CAP)
    try:
        hub.send("hub")
        hub.expect("wait")
        hub.send("set-param name=hash-mb value=4096")
        hub.send("init")
        hub.send("ping")
        error = parse_line(hub.recv())
        assert error[0] == "error" and "4096 MB hash table" in error[1]["message"]
        assert "set a smaller hash-mb" in error[1]["message"]
        assert hub.recv() == "pong"  # and no ready came before it
        # a go all the same is answered: the error, then a legal move
        hub.send("pos start")
        hub.send("level move-time=0.2")
        hub.send("go think")
        done, before = hub.expect("done")
        assert [parse_line(line)[0] for line in before] == ["error"]
        assert "hash-mb" in before[0]
        assert _legal(Board(), done)
        # a size that fits: init answers ready, and the searches are normal ones
        hub.send("set-param name=hash-mb value=64")
        hub.send("init")
        assert hub.recv() == "ready"
        hub.send("level depth=3")
        hub.send("go think")
        done, before = hub.expect("done")
        assert before and all(line.startswith("info") for line in before)
        assert _legal(Board(), done)
        assert hub.quit() == ""
    finally:
        hub.close()


@needs_rlimit
def test_set_param_after_init_is_applied_at_once_and_a_failure_keeps_the_engine():
    hub = Hub(memory_cap=MEMORY_CAP)
    try:
        hub.handshake(hash_mb="1024")
        hub.send("set-param name=hash-mb value=4096")
        message = parse_line(hub.recv())[1]["message"]
        assert "4096 MB hash table" in message and "hash-mb stays" in message
        hub.send("set-param name=threads value=2")  # (these fit: no answer)
        hub.send("set-param name=hash-mb value=512")
        hub.send("pos start")
        hub.send("level depth=3")
        hub.send("go think")
        done, before = hub.expect("done")
        assert not [line for line in before if not line.startswith("info")], before
        assert _legal(Board(), done)
        assert hub.quit() == ""
    finally:
        hub.close()


def _server() -> tuple[HubServer, io.StringIO]:
    out = io.StringIO()
    server = HubServer(out)
    server.handle("init")
    assert out.getvalue() == "ready\n"
    return server, out


def _go(server: HubServer, out: io.StringIO, go: str) -> tuple[list[str], str]:
    start = len(out.getvalue())
    server.handle('pos start moves="32-28 19-23"')
    server.handle("level depth=3")
    server.handle(go)
    server._end_search()
    lines = out.getvalue()[start:].splitlines()
    assert lines and lines[-1].startswith("done"), lines
    assert sum(line.startswith("done") for line in lines) == 1, lines
    return lines[:-1], lines[-1]


GOES = ["go think", "go ponder", "go analyze"]


def _board() -> Board:
    board = Board()
    board.push("32-28")
    board.push("19-23")
    return board


@pytest.mark.parametrize("go", GOES)
def test_a_search_that_cannot_start_is_answered_error_then_done(go):
    server, out = _server()

    def broken(*args, **kwargs):
        raise RuntimeError("no search today")

    server.engine().search_async = broken
    before, done = _go(server, out, go)
    assert [parse_line(line)[0] for line in before] == ["error"]
    assert "RuntimeError: no search today" in before[0]
    assert _legal(_board(), done)
    # the capture is the only move; a depth-1 search finds it (the generator would too)
    assert parse_line(done)[1]["move"] == "28x19x23"


@pytest.mark.parametrize("go", GOES)
def test_a_search_that_fails_on_its_thread_is_answered_error_then_done(go):
    server, out = _server()

    def failing(*args, done=None, **kwargs):  # the facade's contract: done is called back
        future = Future()
        if done is not None:
            future.add_done_callback(done)
        future.set_exception(MemoryError("out of memory in the search"))
        return future

    server.engine().search_async = failing
    before, done = _go(server, out, go)
    assert [parse_line(line)[0] for line in before] == ["error"]
    assert "MemoryError" in before[0]
    assert _legal(_board(), done)


@pytest.mark.parametrize("go", GOES)
def test_when_even_a_minimal_search_fails_done_has_the_generators_first_move(go, monkeypatch):
    from engine.search import Engine

    server, out = _server()
    server.handle("pos start")
    monkeypatch.setattr(Engine, "search_async", lambda *a, **k: 1 / 0)
    monkeypatch.setattr(Engine, "search", lambda *a, **k: 1 / 0)
    start = len(out.getvalue())
    server.handle(go)
    server._end_search()
    lines = out.getvalue()[start:].splitlines()
    assert [parse_line(line)[0] for line in lines] == ["error", "done"]
    assert "ZeroDivisionError" in lines[0]
    board = Board()
    assert parse_line(lines[1])[1]["move"] == next(iter(board.legal_moves)).hub(board.variant)


def test_a_failed_go_leaves_the_engine_serving():
    server, out = _server()
    engine = server.engine()
    real = engine.search_async
    engine.search_async = lambda *a, **k: 1 / 0
    _go(server, out, "go think")
    engine.search_async = real
    before, done = _go(server, out, "go think")
    assert before and all(line.startswith("info") for line in before)
    assert _legal(_board(), done)


# -- item 4: output that never raises, input that never kills -------------------------------


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_characters_the_output_encoding_lacks_are_escaped(encoding):
    hub = Hub(encoding=encoding)
    try:
        hub.send("hub")
        hub.expect("wait")
        for name, shown in [("varianté", "varianté" if encoding == "cp1252" else r"variant\xe9"),
                            ("€→😀", ("€" if encoding == "cp1252" else r"\u20ac")
                             + r"\u2192\U0001f600")]:
            hub.send(f"set-param name={name} value=x")
            command, args = parse_line(hub.recv())
            assert command == "error" and shown in args["message"], args
        hub.send("ping")
        assert hub.recv() == "pong"
        hub.send("init")
        assert hub.recv() == "ready"
        hub.send("level depth=1")
        hub.send("go think")
        done, _ = hub.expect("done")
        assert _legal(Board(), done)
        assert hub.quit() == ""
    finally:
        hub.close()


@pytest.mark.parametrize("encoding", ["ascii", "utf-8"])
def test_bytes_that_are_not_utf8_get_an_error_and_the_engine_goes_on(encoding):
    hub = Hub(encoding=encoding)
    try:
        hub.send("hub")
        hub.expect("wait")
        hub.send_bytes(b"\xff\xfe\n")
        command, args = parse_line(hub.recv())
        assert command == "error" and r"\xff\xfe" in args["message"]
        hub.send_bytes(b"set-param name=variant value=engl\xe9sh\n")
        command, args = parse_line(hub.recv())
        assert command == "error" and "unknown variant" in args["message"]
        assert r"\xe9sh" in args["message"]  # (the byte, shown as an escape)
        hub.send("ping")
        assert hub.recv() == "pong"
        assert hub.quit() == ""
    finally:
        hub.close()


# -- item 12: no control character of the client's reaches the output raw -------------------


CONTROL_LINES = [
    'set-param name="a\x1b[2Jb" value=1',  # unknown parameter (quoted in the message)
    'set-param name="x\x1b]0;pwned\x07"',  # missing value (the name as it came)
    "frobnicate\x9b31m",  # unknown command; CSI, a C1 control
    'pos start moves="32-28 \x1b[31m"',  # illegal move
    'set-param name="a\rb\x00c\u202ed\u2028e" value=1',  # CR, NUL, a bidi override, a LS
    'level depth="\x1b"',
]


def test_control_characters_from_the_client_are_escaped_in_answers():
    out = io.StringIO()
    server = HubServer(out)
    for line in CONTROL_LINES:
        start = len(out.getvalue())
        server.handle(line)
        answer = out.getvalue()[start:]
        assert answer.endswith("\n") and answer.count("\n") == 1, (line, answer)
        text = answer[:-1]
        assert text.isprintable(), (line, answer)  # no control, format or separator character
        command, args = parse_line(text)
        assert command == "error"
    assert "\\x1b[2J" in out.getvalue() and "\\x9b31m" in out.getvalue()
    assert "\\u202e" in out.getvalue() and "\\x00" in out.getvalue()


def test_control_characters_over_the_pipe():
    hub = Hub()
    try:
        hub.send("hub")
        hub.expect("wait")
        hub.send_bytes(b'set-param name="\x1b[2J\rquit" value=1\n')
        answer = hub.recv()
        assert answer.isprintable() and "\\x1b[2J" in answer
        hub.send_bytes(b"frob\xc2\x9b[2J\n")  # CSI (U+009B) is a name character in Hub syntax
        answer = hub.recv()
        assert answer.isprintable() and "\\x9b[2J" in answer
        hub.send("ping")
        assert hub.recv() == "pong"
        assert hub.quit() == ""
    finally:
        hub.close()


class _ReaderGoneAfter(io.StringIO):
    """An output whose reader goes away after ``lines`` lines (a GUI that exits without quit)."""

    def __init__(self, lines: int):
        super().__init__()
        self.left = lines

    def write(self, text: str) -> int:
        if self.left <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= text.count("\n")
        return super().write(text)


def test_a_reader_that_goes_away_stops_the_search_and_ends_the_dialogue():
    lines: "queue.Queue[tuple[float, str] | None]" = queue.Queue()
    for line in ("hub", "init", "go analyse"):
        lines.put((time.monotonic(), line))
    out = _ReaderGoneAfter(lines=0)
    server = HubServer(out)
    server.handle("hub")  # the first write breaks: no exception comes out
    assert server.output_lost and out.getvalue() == ""

    out = _ReaderGoneAfter(lines=12)  # id, the params, wait, ready: then the search's info
    server = HubServer(out)
    loop = threading.Thread(target=server.serve, args=(lines,), daemon=True)
    loop.start()
    loop.join(30)  # no end of input and no quit: losing the reader ends the loop
    assert not loop.is_alive(), "the dialogue went on without a reader"
    assert server.output_lost and not server.searching
    assert "ready" in out.getvalue().splitlines()


def test_damka_hub_exits_quietly_when_its_output_is_closed():
    proc = subprocess.Popen(HUB_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        proc.stdin.write("hub\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("id ")
        proc.stdout.close()  # like `damka hub | head -1`
        for line in ("init", "go analyse", "ping"):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        rc = proc.wait(timeout=60)  # stdin stays open: the lost output alone ends it
        assert proc.stderr.read() == ""  # no traceback
        assert rc == 1  # as every damka command whose output is cut (protocol/cli.py)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
