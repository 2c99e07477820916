"""A client that drives a Hub engine process: ours, Scan, dame-rs's ``dame hub``, ...

A small state machine over the dialogue of docs/protocols.md section 1::

    new --start()--> ready --go--> searching --done--> ready ... --quit()/kill()--> closed

``start`` sends ``hub``, reads ``id``/``param`` up to ``wait``, sets the parameters (the rule
set through the ``variant`` parameter) and waits for ``ready`` after ``init``. One reader thread
per pipe fills a queue.Queue and the client waits with ``queue.get(timeout=...)``: no select()
on pipes (Windows has none), no busy waiting. Every wait has a timeout; an engine that does not
speak Hub, dies or stops answering raises a HubClientError subclass that says so and quotes
what the engine printed. ``info`` lines may come in any order and with any fields, unknown
lines are kept in ``extra`` and ignored, ``error`` lines are collected.
"""

from __future__ import annotations

import collections
import enum
import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from engine.board import Board
from engine.fen import parse_fen
from engine.limits import Limits
from engine.move import Move
from engine.notation import write_hub_position
from engine.position import Position
from engine.printable import printable
from engine.variants import Variant, as_variant

from protocol.hub.text import HubSyntaxError, format_line, parse_line

__all__ = [
    "HubClient",
    "level_line",
    "budget",
    "HubInfo",
    "HubResult",
    "HubClientError",
    "HubProtocolError",
    "HubTimeoutError",
    "HubEngineDied",
]


class HubClientError(RuntimeError):
    """Anything that stops a Hub engine from being used; the message says which engine and why."""


class HubProtocolError(HubClientError):
    """The program does not speak Hub (for example it was started without its ``hub`` argument)."""


class HubTimeoutError(HubClientError):
    """The engine did not answer in time. ``late_result`` holds a ``done`` that came after
    ``stop`` (the engine is then usable again), else None."""

    late_result: "HubResult | None" = None


class HubEngineDied(HubClientError):
    """The engine process ended (or closed its pipes) while the client needed it."""

    returncode: "int | None" = None


class State(enum.Enum):
    NEW = "new"
    READY = "ready"
    SEARCHING = "searching"
    BROKEN = "broken"  #: a search that could not be stopped: only quit()/kill() remain
    CLOSED = "closed"


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def level_line(limits: Limits) -> str:
    """The ``level`` line of one ``go`` (docs/protocols.md 1.8) for the search limits.

    ``depth``, ``nodes`` and ``movetime`` are caps and may be combined. ``time_left`` is what
    the engine's clock shows before its move, ``increment`` what is added after it and
    ``moves_to_go`` the moves left to the next control. Hub lets an engine spend ``time + inc``
    (the increment counts before the move), so the client sends ``time - inc`` as pydraughts
    does, and the engine cannot overstep the clock. ``infinite`` searches until ``stop``.
    """
    if limits.infinite:
        return "level infinite"
    args: dict[str, object] = {}
    if limits.time_left is not None:
        if limits.moves_to_go is not None:
            args["moves"] = limits.moves_to_go
        args["time"] = _seconds(limits.time_left - limits.increment)
        if limits.increment:
            args["inc"] = _seconds(limits.increment)
    if limits.movetime is not None:
        args["move_time"] = _seconds(limits.movetime)
    if limits.depth is not None:
        args["depth"] = limits.depth
    if limits.nodes is not None:
        args["nodes"] = limits.nodes
    if not args:
        raise ValueError("a Hub go needs depth, nodes, movetime, a clock or infinite")
    return format_line("level", **args)


def budget(limits: Limits) -> float | None:
    """The longest a search under these limits may take, if a clock bounds it."""
    if limits.infinite:
        return None
    bounds = []
    if limits.movetime is not None:
        bounds.append(limits.movetime)
    if limits.time_left is not None:
        bounds.append(max(limits.time_left, 0.0))
    return min(bounds) if bounds else None


def _number(args: Mapping[str, str], key: str, kind: Callable):
    try:
        return kind(args[key]) if key in args else None
    except ValueError:
        return None


@dataclass(frozen=True)
class HubInfo:
    """One ``info`` line: the usual fields (None when absent or unreadable) and all of ``args``."""

    depth: int | None
    mean_depth: float | None
    score: float | None  #: in men, from the side to move; +-99.xx is a forced result
    nodes: int | None
    time: float | None
    nps: float | None  #: millions of nodes per second
    pv: tuple[str, ...]
    args: Mapping[str, str]

    @classmethod
    def parse(cls, args: Mapping[str, str]) -> "HubInfo":
        return cls(
            depth=_number(args, "depth", int),
            mean_depth=_number(args, "mean-depth", float),
            score=_number(args, "score", float),
            nodes=_number(args, "nodes", int),
            time=_number(args, "time", float),
            nps=_number(args, "nps", float),
            pv=tuple(args.get("pv", "").split()),
            args=dict(args),
        )


@dataclass
class HubResult:
    """What a search gave: unpacks as ``move, ponder, infos``.

    ``move`` is None for a bare ``done`` (no move); ``elapsed`` runs from ``go`` to ``done``
    as the client saw it; ``errors`` are the ``error`` messages sent meanwhile.
    """

    move: str | None
    ponder: str | None
    infos: list[HubInfo] = field(default_factory=list)
    elapsed: float = 0.0
    errors: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator:
        return iter((self.move, self.ponder, self.infos))


@dataclass
class _Search:
    started: float
    infos: list[HubInfo] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    result: HubResult | None = None


def _start_and_moves(
    variant: Variant, position: "Board | Position | str | None", moves: Sequence["Move | str"]
) -> tuple[Position, list[str]]:
    """The ``pos`` position and the Hub moves after it.

    A Board is sent as the Hub GUI does: the position after its last irreversible move and the
    king moves since (so the engine sees repetitions), then ``moves``.
    """
    before: list[str] = []
    if isinstance(position, Board):
        replay = position.copy()
        taken: list[Move] = []
        while replay.move_stack:
            last = replay.move_stack[-1]
            replay.pop()
            if last.captured or not replay.position.kings >> last.origin & 1:
                replay.push(last)
                break
            taken.append(last)
        start = replay.position
        before = [m.hub(variant) for m in reversed(taken)]
    elif position is None:
        start = parse_fen(variant, variant.start_fen)
    elif isinstance(position, Position):
        start = position
    elif ":" in position:
        start = parse_fen(variant, position)
    else:
        start = Board.from_hub(variant, position).position
    return start, before + [m.hub(variant) if isinstance(m, Move) else str(m) for m in moves]


class HubClient:
    """Drives one Hub engine process.

    ``command`` is the program and its arguments (with ``hub`` for most engines), ``cwd`` its
    directory (Scan loads its data from there), ``options`` Hub parameters to set, ``variant``
    the rule set, a Variant or a name (sent as the ``variant`` parameter; an engine without
    one plays only international). Timeouts in seconds: ``start_timeout`` up to ``wait``,
    ``init_timeout`` up to ``ready``, ``reply_timeout`` for ``pong`` and ``done`` after
    ``stop``; a search may run ``search_margin`` past its clock budget, or ``search_timeout``
    without a clock.
    """

    def __init__(
        self,
        command: Sequence[str],
        cwd: "str | os.PathLike[str] | None" = None,
        options: "Mapping[str, object] | None" = None,
        variant: "str | Variant" = "international",
        *,
        name: str | None = None,
        env: "Mapping[str, str] | None" = None,
        start_timeout: float = 10.0,
        init_timeout: float = 60.0,
        reply_timeout: float = 5.0,
        search_margin: float = 5.0,
        search_timeout: float = 300.0,
    ):
        if isinstance(command, (str, bytes)):
            raise TypeError("command must be a list of arguments, e.g. ['scan', 'hub']")
        self.command = [str(c) for c in command]
        self.cwd = cwd
        self.options = dict(options or {})
        self.variant = as_variant(variant)
        self.name = name or Path(self.command[0]).name
        self.env = env
        self.start_timeout = start_timeout
        self.init_timeout = init_timeout
        self.reply_timeout = reply_timeout
        self.search_margin = search_margin
        self.search_timeout = search_timeout
        self.state = State.NEW
        self.id: dict[str, str] = {}
        self.params: dict[str, dict[str, str]] = {}  #: declared parameters by name
        self.errors: list[str] = []  #: every ``error`` message the engine sent
        self.extra: collections.deque[str] = collections.deque(maxlen=100)  #: ignored lines
        self._proc: subprocess.Popen | None = None
        self._stderr_thread: threading.Thread | None = None
        #: (arrival time, line) as the reader thread read them; None at the end of output
        self._lines: "queue.Queue[tuple[float, str] | None]" = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._recent: collections.deque[str] = collections.deque(maxlen=8)
        self._search: _Search | None = None
        self._pongs = 0
        self._ready = False
        self._waited = False

    # -- process and lines --------------------------------------------------------------------

    @property
    def process(self) -> "subprocess.Popen | None":
        return self._proc

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _spawn(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=None if self.env is None else dict(self.env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                # its own process group, ended whole: an engine started through a wrapper
                # (``bash -c "scan hub"``) that hangs must not outlive a kill of the wrapper
                start_new_session=_GROUPS,
            )
        except OSError as exc:
            raise HubClientError(f"cannot start {self.name} ({' '.join(self.command)}): {exc}") from exc
        threading.Thread(target=self._read_stdout, name=f"hub-{self.name}-out", daemon=True).start()
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, name=f"hub-{self.name}-err", daemon=True
        )
        self._stderr_thread.start()

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            for line in self._proc.stdout:
                self._lines.put((time.monotonic(), line.rstrip("\r\n")))
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        try:
            for line in self._proc.stderr:
                self._stderr.append(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def _send(self, line: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise HubClientError(f"{self.name} is not running")
        try:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            raise self._died(f"sending {line.split(' ', 1)[0]!r}") from None

    def _said(self) -> str:
        """What the engine printed lately (stdout and stderr), for error messages."""
        parts = []
        if self._recent:
            parts.append("it printed " + " | ".join(repr(s) for s in self._recent))
        else:
            parts.append("it printed nothing")
        if self._stderr:
            parts.append("stderr: " + " | ".join(list(self._stderr)[-5:]))
        return "; ".join(parts)

    def _died(self, doing: str) -> HubClientError:
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=1.0)  # its last words, for the message
        if self.state is not State.CLOSED:
            self.state = State.BROKEN
        how = f"exited with code {code}" if code is not None else "closed its output"
        if not self._waited:
            error: HubClientError = HubProtocolError(
                f"{self.name} {how} before finishing the Hub handshake ({doing}); {self._said()}."
                " Is it a Hub engine, started with its `hub` argument?"
            )
        else:
            error = HubEngineDied(f"{self.name} {how} while {doing}; {self._said()}")
        error.returncode = code  # type: ignore[attr-defined]
        return error

    def _pump(self, done: Callable[[], bool], timeout: float | None, doing: str) -> None:
        """Handle engine lines until ``done()`` holds; HubTimeoutError after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not done():
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise HubTimeoutError(
                    f"{self.name} did not answer within {timeout:g} s while {doing}; {self._said()}"
                )
            try:
                item = self._lines.get(timeout=wait)
            except queue.Empty:
                continue
            if item is None:
                self._lines.put(None)  # keep the end of output visible to later waits
                raise self._died(doing)
            self._handle(*item)

    def _handle(self, arrived: float, line: str) -> None:
        """One engine line; ``arrived`` is when the reader thread read it (a search's
        ``elapsed`` ends there, not when this thread got round to it)."""
        if not line.strip():
            return
        self._recent.append(line)
        try:
            command, args = parse_line(line)
        except HubSyntaxError:
            self.extra.append(line)
            return
        search = self._search
        if command == "info" and search is not None:
            search.infos.append(HubInfo.parse(args))
        elif command == "done" and search is not None and search.result is None:
            search.result = HubResult(
                move=args.get("move") or None,
                ponder=args.get("ponder") or None,
                infos=search.infos,
                elapsed=arrived - search.started,
                errors=search.errors,
            )
        elif command == "pong":
            self._pongs += 1
        elif command == "error":
            message = args.get("message", line)
            self.errors.append(message)
            if search is not None:
                search.errors.append(message)
        elif command == "id" and not self._waited:  # (its name reaches tables and logs)
            self.id.update({key: printable(value) for key, value in args.items()})
        elif command == "param" and not self._waited and "name" in args:
            self.params[args["name"]] = args
        elif command == "wait":
            self._waited = True
        elif command == "ready":
            self._ready = True
        else:
            self.extra.append(line)

    def _require(self, *states: State) -> None:
        if self.state not in states:
            raise HubClientError(
                f"{self.name} is {self.state.value}; this needs it "
                + " or ".join(s.value for s in states)
            )

    # -- the dialogue -----------------------------------------------------------------------

    def start(self) -> "HubClient":
        """Start the engine: ``hub`` ... ``wait``, the parameters, ``init`` ... ``ready``."""
        self._require(State.NEW)
        self._spawn()
        try:
            self._send("hub")
            self._pump(lambda: self._waited, self.start_timeout, "answering `hub`")
        except HubTimeoutError:
            self.kill()
            raise HubProtocolError(
                f"{self.name} did not answer `hub` with `wait` within {self.start_timeout:g} s; "
                f"{self._said()}. Is it a Hub engine, started with its `hub` argument?"
            ) from None
        except HubClientError:
            self.kill()
            raise
        self.name = self.id.get("name", self.name)
        try:
            settings = self._settings()
        except HubClientError:
            self.quit()
            raise
        errors_before = len(self.errors)
        for key, value in settings.items():
            self._send(format_line("set-param", name=key, value=value))
        self._send("init")
        try:
            self._pump(lambda: self._ready, self.init_timeout, "answering `init`")
        except HubClientError:
            self.kill()
            raise
        rejected = self.errors[errors_before:]
        if rejected:
            self.quit()
            raise HubClientError(
                f"{self.name} rejected its parameters {settings}: {'; '.join(rejected)}"
            )
        self.state = State.READY
        return self

    def _settings(self) -> dict[str, object]:
        """The ``set-param`` values: the options, then the rule set if they do not name it."""
        declared = ", ".join(self.params) or "none"
        for key in self.options:
            if key not in self.params:
                raise HubClientError(
                    f"{self.name} has no parameter {key!r} (it declares: {declared})"
                )
        settings: dict[str, object] = dict(self.options)
        variant = self.variant
        if "variant" not in settings:
            if "variant" in self.params:
                values = self.params["variant"].get("values", "").split()
                if values and variant.hub_name not in values:
                    raise HubClientError(
                        f"{self.name} does not play {variant.name} (its variants: {' '.join(values)})"
                    )
                settings["variant"] = variant.hub_name
            elif variant.name != "international":
                raise HubClientError(
                    f"{self.name} declares no variant parameter, so it plays only international "
                    f"draughts, not {variant.name}"
                )
        if not variant.forced_capture and "forced-capture" not in settings:
            if "forced-capture" not in self.params:
                raise HubClientError(f"{self.name} has no forced-capture parameter for the house rule")
            settings["forced-capture"] = False
        return settings

    def set_param(self, name: str, value: object) -> None:
        """Set a parameter between searches (the engine answers only if it objects)."""
        self._require(State.READY)
        self._send(format_line("set-param", name=name, value=value))

    def new_game(self) -> None:
        """Tell the engine the next search belongs to a new game (Scan clears its hash)."""
        self._require(State.READY)
        self._send("new-game")

    def start_search(
        self,
        position: "Board | Position | str | None" = None,
        moves: Sequence["Move | str"] = (),
        limits: Limits = Limits(movetime=1.0),
        mode: str = "think",
    ) -> None:
        """Send ``pos``, ``level`` and ``go <mode>`` (think, ponder or analyze) and return."""
        self._require(State.READY)
        if mode not in ("think", "ponder", "analyze"):
            raise ValueError(f"unknown search mode {mode!r}")
        level = level_line(limits)
        start, hub_moves = _start_and_moves(self.variant, position, moves)
        pos_args: dict[str, object] = {"pos": write_hub_position(self.variant, start)}
        if hub_moves:
            pos_args["moves"] = " ".join(hub_moves)
        self._send(format_line("pos", **pos_args))
        self._send(level)
        self._search = _Search(time.monotonic())
        self._send(f"go {mode}")
        self.state = State.SEARCHING

    def wait_done(self, timeout: float | None) -> HubResult:
        """Wait for ``done``. On timeout send ``stop`` and raise HubTimeoutError (with the
        late ``done``, if the engine still gave one within ``reply_timeout``)."""
        self._require(State.SEARCHING)
        search = self._search
        assert search is not None
        try:
            self._pump(lambda: search.result is not None, timeout, "searching")
        except HubTimeoutError as timed_out:
            late = None
            try:
                self._send("stop")
                self._pump(lambda: search.result is not None, self.reply_timeout, "stopping")
                late = search.result
            except HubClientError:
                pass
            if late is None:
                self.state = State.BROKEN
            else:
                self._finish()
            timed_out.late_result = late
            raise timed_out
        return self._finish()

    def _finish(self) -> HubResult:
        assert self._search is not None and self._search.result is not None
        result = self._search.result
        self._search = None
        self.state = State.READY
        return result

    def go(
        self,
        position: "Board | Position | str | None" = None,
        moves: Sequence["Move | str"] = (),
        limits: Limits = Limits(movetime=1.0),
        *,
        timeout: float | None = None,
    ) -> HubResult:
        """Search and return ``(best_move, ponder_move, infos)`` (a HubResult).

        ``position`` is a Board (its history is sent too), a Position, a FEN or a Hub position
        string, or None for the start position; ``moves`` (Move or Hub text) are played from
        it. ``timeout`` defaults to the limits' clock budget plus ``search_margin``.
        """
        if timeout is None:
            bound = budget(limits)
            timeout = self.search_timeout if bound is None else bound + self.search_margin
        self.start_search(position, moves, limits)
        return self.wait_done(timeout)

    def stop(self, timeout: float | None = None) -> HubResult | None:
        """End the current search and return its result (None when idle)."""
        if self.state is not State.SEARCHING:
            return None
        self._send("stop")
        return self.wait_done(self.reply_timeout if timeout is None else timeout)

    def ponder_hit(self) -> None:
        self._require(State.SEARCHING)
        self._send("ponder-hit")

    def ping(self, timeout: float | None = None) -> float:
        """Send ``ping``, wait for ``pong`` (also during a search); returns the round trip."""
        self._require(State.READY, State.SEARCHING)
        expected = self._pongs + 1
        sent = time.monotonic()
        self._send("ping")
        self._pump(lambda: self._pongs >= expected,
                   self.reply_timeout if timeout is None else timeout, "answering `ping`")
        return time.monotonic() - sent

    def quit(self, timeout: float | None = None) -> int | None:
        """Send ``quit`` and wait for the process to end; kill it if it does not. Returns its
        exit code (None if it was never started)."""
        proc = self._proc
        if proc is None:
            self.state = State.CLOSED
            return None
        if proc.poll() is None:
            try:
                self._send("quit")
                assert proc.stdin is not None
                proc.stdin.close()
            except (HubClientError, OSError, ValueError):
                pass
            try:
                proc.wait(timeout=self.reply_timeout if timeout is None else timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        _kill_group(proc)  # what the engine left running behind it
        self._close()
        return proc.returncode

    def kill(self) -> None:
        """End the process and its process group at once (what a wrapper started too)."""
        proc = self._proc
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            _kill_group(proc)
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:  # pragma: no cover - an unkillable process
                pass
        self._close()

    def _close(self) -> None:
        self.state = State.CLOSED
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> "HubClient":
        if self.state is State.NEW:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.quit()

    def __repr__(self) -> str:
        return f"<HubClient {self.name} {self.variant.name} {self.state.value}>"


#: engines get a process group of their own where the system has them (not on Windows)
_GROUPS = hasattr(os, "killpg")


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the engine's process group, if any of it is left."""
    if not _GROUPS:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # the group is gone already
        pass
