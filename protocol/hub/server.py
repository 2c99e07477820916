"""``damka hub``: the Hub protocol (version 2, Scan's) on stdin/stdout.

A thin translator over the search facade (engine.search.Engine). A reader thread feeds a
queue, so ``ping``, ``stop`` and ``ponder-hit`` are served while a search runs; any other
command ends the search first (its ``done`` is written), then runs, as Scan does. Bad input
gets ``error message="..."`` and the previous state is kept. Nothing is written before
``hub``, every line is flushed, and nothing goes to stderr.

A GUI waits for the answers the protocol promises, so they always come: ``ready`` only once
the engine for the parameters set is built (hash table, databases, weights; else an ``error``
that says what to change), and ``done`` for every ``go``, also when the search fails. Writing
never raises and never breaks a line: text echoed from the client has its control characters
escaped, and a character the output's encoding lacks is written as an escape.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, TextIO

from typing import TYPE_CHECKING

from engine import __version__
from engine.board import Board
from engine.errors import DamkaError
from engine.printable import printable as _printable
from engine.hashsize import DEFAULT_HASH_MB, MAX_HASH_MB, MIN_HASH_MB
from engine.levels import LEVELS
from engine.threads import max_threads
from engine.timeman import DEFAULT_OVERHEAD
from engine.move import Move
from engine.variants import INTERNATIONAL, VARIANTS, Variant, get_variant

if TYPE_CHECKING:
    from concurrent.futures import Future

    from engine.search import Engine, Limits, SearchInfo, SearchResult

from protocol.hub import pydraughts
from protocol.hub.text import HubSyntaxError, format_line, parse_line

__all__ = ["HubServer", "main", "hub_score"]

#: the Hub ``variant`` parameter's values, from the rules records (international first)
VARIANT_VALUES = tuple(v.hub_name for v in VARIANTS)
#: seconds per move when a ``go`` comes without a ``level`` (Scan would search "forever")
DEFAULT_MOVETIME = 2.0
EVAL_CLAMP = 8000  # hundredths: evaluation scores stay within +-80.00 men (docs/protocols.md 1.5)


def hub_score(score: int, mate_score: int = 30000, mate_threshold: int = 29000) -> str:
    """A score as Hub shows it: men with two decimals; a forced result in N plies as
    +-(100 - N/100), the 99.xx band that GUIs read as a win or loss."""
    if score > mate_threshold:
        return f"{100 - (mate_score - score) / 100:.2f}"
    if score < -mate_threshold:
        return f"{-(100 - (mate_score + score) / 100):.2f}"
    score = max(-EVAL_CLAMP, min(EVAL_CLAMP, score))
    return f"{score / 100:.2f}"


@dataclass
class Params:
    """The engine parameters a GUI can set with ``set-param``."""

    variant: Variant = INTERNATIONAL
    hash_mb: int = DEFAULT_HASH_MB
    threads: int = 1  #: search threads (Lazy SMP), 1 up to the cores
    level: str = "full"
    #: None: the default overhead, which shrinks with the time per move (engine.timeman)
    move_overhead_ms: int | None = None
    forced_capture: bool = True
    pydraughts: bool = False  #: pydraughts' own 8x8 position layout and move numbering
    line_pacing_ms: int = 0  #: a pause after each line, for clients that read badly
    #: endgame databases directory ("" none); used when it holds files for the rule set
    egtb_path: str = ""


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off", "none"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _int(text: str, low: int, high: int) -> int:
    try:
        value = int(float(text))
    except (ValueError, OverflowError):  # OverflowError: inf, 1e400
        raise ValueError(f"not a number: {text!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{value} is outside {low}..{high}")
    return value


#: the longest error message sent whole (the rest is cut, its length said)
ERROR_CHARS = 400


class HubError(Exception):
    """A command that cannot be carried out: reported as ``error message=...``."""


class EngineUnavailable(HubError):
    """The engine cannot be built for the parameters set (memory, databases, weights); the
    message says which parameter to change."""


#: the parameters that shape the engine built (the others are applied before each search)
ENGINE_PARAMS = frozenset({"variant", "forced-capture", "hash-mb", "hash", "tt-size-mb",
                           "threads", "egtb-path"})
def printable(text: str) -> str:
    """Text as the Hub may write it in a value: engine.printable's (a line break would end
    the line, an escape sequence act on a terminal or a GUI's log), and ``"``, which would
    end the quoted value, becomes ``'``."""
    return _printable(text).replace('"', "'")


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class HubServer:
    """The Hub dialogue of one engine process (input and output are injectable for tests)."""

    def __init__(self, out: TextIO = sys.stdout):
        self.out = out
        self.params = Params()
        self._write_lock = threading.Lock()
        self._engine: "Engine | None" = None
        self._warm_thread: threading.Thread | None = None
        self._warm_key: tuple | None = None
        self._engine_lock = threading.Lock()
        self._engine_key: tuple | None = None
        self.board: Board | None = None
        self.limits: "Limits | None" = None
        #: set once the running search's done (or its error) is sent; None: no search
        self._search_finished: threading.Event | None = None
        self._quit = False
        #: the reader of our output has gone (a GUI that exited without quit, `| head`)
        self.output_lost = False
        self._lines: "queue.Queue[tuple[float, str] | None] | None" = None
        self._received = 0.0
        self._pos_source: tuple | None = None  # (variant, pos text) the board was built from
        self._pos_moves: list[str] = []
        #: an init succeeded: from then on a set-param that shapes the engine rebuilds it at
        #: once, so that a failure is that set-param's error, not the next go's
        self._initialised = False

    # -- output ----------------------------------------------------------------------------

    def send(self, command: str, *flags: str, **args: object) -> None:
        args = {k: printable(v) if isinstance(v, str) else v for k, v in args.items()}
        line = format_line(command, *flags, **args) + "\n"
        with self._write_lock:
            if self.output_lost:
                return
            try:
                try:
                    self.out.write(line)
                except UnicodeEncodeError:  # (main() makes stdout escape; this is for other outs)
                    encoding = getattr(self.out, "encoding", None) or "ascii"
                    self.out.write(line.encode(encoding, "backslashreplace").decode(encoding))
                self.out.flush()
            except (OSError, ValueError):  # a broken pipe, or a closed file
                self._lose_output()
                return
            if self.params.line_pacing_ms:
                time.sleep(self.params.line_pacing_ms / 1000)

    def _lose_output(self) -> None:
        """No one reads us any more: stop the search and end the dialogue quietly (nothing
        could be said about it), as at the end of input."""
        self.output_lost = True
        self._quit = True
        if self.searching and self._engine is not None:
            self._engine.stop()
        if self._lines is not None:
            self._lines.put(None)  # wake the loop if it waits for input

    def error(self, message: str) -> None:
        if len(message) > ERROR_CHARS:  # a bad line of megabytes is not echoed back whole
            message = f"{message[:ERROR_CHARS]}... ({len(message)} characters)"
        self.send("error", message=message)  # (send makes it one line, whatever it quotes)

    # -- the loop --------------------------------------------------------------------------

    def serve(self, lines: "queue.Queue[tuple[float, str] | None]") -> None:
        """Handle lines until ``quit`` or end of input (None in the queue). Each line comes
        with the time it arrived: a search's clock starts when its ``go`` arrived."""
        self._lines = lines
        while not self._quit:
            item = lines.get()
            if item is None:
                break
            self.handle(item[1], item[0])
        self._end_search()

    def handle(self, line: str, received: float | None = None) -> None:
        """One input line; never raises."""
        self._received = time.monotonic() if received is None else received
        if not line.strip():
            return
        try:
            command, args = parse_line(line)
        except HubSyntaxError as exc:
            self.error(f"bad syntax: {exc}")
            return
        if self.searching:
            if command == "ping":
                self.send("pong")
                return
            if command == "stop":
                self._engine.stop()
                return
            if command == "ponder-hit":
                self._engine.ponderhit()
                return
            self._end_search()  # any other command ends the search first
        handler: Callable | None = getattr(self, "cmd_" + command.replace("-", "_"), None)
        if handler is None:
            self.error(f"unknown command: {command}")
            return
        try:
            handler(args)
        except (HubError, DamkaError, ValueError) as exc:
            self.error(str(exc))
        except Exception as exc:  # never die on input; say what happened
            self.error(f"internal error: {type(exc).__name__}: {exc}")

    @property
    def searching(self) -> bool:
        return self._search_finished is not None and not self._search_finished.is_set()

    def _end_search(self) -> None:
        finished = self._search_finished
        if finished is not None:
            if not finished.is_set() and self._engine is not None:
                self._engine.stop()
            finished.wait()
            self._search_finished = None

    # -- handshake and parameters ----------------------------------------------------------

    def cmd_hub(self, args: dict) -> None:
        self.send("id", name="damka", version=__version__, author="damka developers", country="NL")
        p = self.params
        self.send("param", name="variant", value=p.variant.hub_name, type="enum",
                  values=" ".join(VARIANT_VALUES))
        self.send("param", name="hash-mb", value=p.hash_mb, type="int", min=MIN_HASH_MB,
                  max=MAX_HASH_MB)
        self.send("param", name="threads", value=p.threads, type="int", min=1, max=max_threads())
        self.send("param", name="level", value=p.level, type="enum", values=" ".join(reversed(list(LEVELS))))
        overhead = p.move_overhead_ms
        if overhead is None:
            overhead = round(DEFAULT_OVERHEAD * 1000)
        self.send("param", name="move-overhead", value=overhead, type="int", min=0, max=5000)
        self.send("param", name="forced-capture", value=p.forced_capture, type="bool")
        self.send("param", name="pydraughts-8x8", value=p.pydraughts, type="bool")
        self.send("param", name="line-pacing", value=p.line_pacing_ms, type="int", min=0, max=100)
        self.send("param", name="egtb-path", value=p.egtb_path, type="string")
        self.send("wait")
        # build and warm the engine for the default parameters while the GUI reads our answer
        # and sets its parameters (started after the answer: a thread busy importing would
        # hold up each of our writes by a GIL switch interval)
        self._warm_thread = threading.Thread(target=self._prepare, name="damka-hub-prepare",
                                             daemon=True)
        self._warm_thread.start()

    def cmd_set_param(self, args: dict) -> None:
        """Sets a parameter. After an init, one that shapes the engine (hash-mb, threads,
        egtb-path, variant) is applied at once: if the engine cannot be built for it, the
        error says so, the old value is kept and so is a working engine."""
        if "name" not in args:
            raise HubError("missing name")
        if "value" not in args:
            raise HubError(f"missing value for {args['name']}")
        name = args["name"].strip().lower()
        before = replace(self.params), self.board
        try:
            self._set_param(name, args["value"], args["name"])
        except ValueError as exc:  # a number or boolean out of its range: name the parameter
            raise HubError(f"{args['name']}: {exc}") from None
        if not (self._initialised and name in ENGINE_PARAMS):
            return
        try:
            self.engine(warm=True)
        except EngineUnavailable as exc:
            self.params, self.board = before
            try:
                self.engine(warm=True)
                kept = f"{args['name']} stays as it was"
            except EngineUnavailable:
                self._initialised = False
                kept = "nor does the engine fit its previous parameters: set them and send init"
            raise HubError(f"{exc} ({kept})") from None

    def _set_param(self, name: str, value: str, given: str) -> None:
        p = self.params
        if name == "variant":
            try:  # the one place a Hub session turns a name into a rule set
                variant = get_variant(value)
            except ValueError:
                raise HubError(f"unknown variant {value!r}; known: {' '.join(VARIANT_VALUES)}") from None
            if not p.forced_capture and variant.size != 8:
                raise HubError("forced-capture=false exists only for the 8x8 variants")
            p.variant = variant
            self.board = None
        elif name in ("hash-mb", "hash", "tt-size-mb"):
            p.hash_mb = _int(value, MIN_HASH_MB, MAX_HASH_MB)
        elif name == "threads":
            p.threads = _int(value, 1, max_threads())
        elif name == "level":
            level = value.strip().lower()
            if level not in LEVELS:
                raise HubError(f"unknown level {value!r}; known: {' '.join(LEVELS)}")
            p.level = level
        elif name == "move-overhead":
            p.move_overhead_ms = _int(value, 0, 5000)
        elif name == "forced-capture":
            forced = _bool(value)
            if not forced and p.variant.size != 8:
                raise HubError("forced-capture=false exists only for the 8x8 variants")
            p.forced_capture = forced
            self.board = None
        elif name in ("pydraughts-8x8", "pydraughts"):
            p.pydraughts = _bool(value)
        elif name == "line-pacing":
            p.line_pacing_ms = _int(value, 0, 100)
        elif name == "egtb-path":
            path = value.strip()
            if path and not Path(path).expanduser().is_dir():
                raise HubError(f"egtb-path {path!r} is not a directory")
            p.egtb_path = path
        else:
            raise HubError(f"unknown parameter {given!r}")

    def cmd_init(self, args: dict) -> None:
        """``ready`` means ready: the engine for the parameters now set is built (its hash
        table allocated, the databases and weights loaded) and warm, so the first search runs
        as fast as the others. Most of the work was started by ``hub`` and went on while the
        GUI set its parameters.

        An engine that cannot be built answers an ``error`` naming the parameter to change
        and no ``ready``: saying ready would only move the failure to the first ``go``, in
        the middle of a game. It stays uninitialised, and an init after a set-param that
        fits answers ``ready``; a ``go`` meanwhile is still answered (see cmd_go)."""
        self._initialised = False
        self.engine(warm=True)
        self._initialised = True
        self.send("ready")

    def _prepare(self) -> None:
        try:
            self.engine(warm=True)
        except Exception:  # reported when the engine is really needed
            pass

    @property
    def variant(self) -> Variant:
        return self.params.variant.with_forced_capture(self.params.forced_capture)

    def engine(self, warm: bool = False) -> "Engine":
        """The search engine for the current parameters, rebuilt lazily when they change.

        The search modules are imported here, not at start-up, so that the handshake comes
        fast. ``warm`` also runs a tiny search on a scratch table once per engine (the code and
        the evaluation's tables are then in memory) and then starts bringing the hash table's
        pages in on their own thread."""
        from engine.search import Engine
        from engine.timeman import TimeSettings

        warming = self._warm_thread
        if warming is not None and warming is not threading.current_thread():
            warming.join()  # its clear() would otherwise race the search about to start
        with self._engine_lock:
            p = self.params
            key = (self.variant, p.hash_mb, p.egtb_path)
            if self._engine is None or self._engine_key != key:
                self._release_engine()
                self._engine = self._build(Engine, *key, prefault=not warm)
                self._engine_key = key
            engine = self._engine
            engine.set_level(p.level)
            if engine.threads != p.threads:
                try:
                    engine.set_threads(p.threads)
                except MemoryError:
                    engine.set_threads(1)
                    raise EngineUnavailable(f"cannot start {p.threads} search threads: out "
                                            "of memory: set fewer threads") from None
            overhead = None if p.move_overhead_ms is None else p.move_overhead_ms / 1000
            engine.time_settings = TimeSettings(move_overhead=overhead)
            if warm and self._warm_key != key:
                try:
                    engine.warm()
                    engine.prefault()
                except Exception as exc:  # a search would fail the same way: say so now
                    raise EngineUnavailable(f"the engine failed its warm-up search: "
                                            f"{_why(exc)}") from None
                self._warm_key = key
            return engine

    def _release_engine(self) -> None:
        """Drop the engine, its hash table's memory first: a new table is asked for next,
        and the two together may not fit where each alone does."""
        old, self._engine, self._engine_key, self._warm_key = self._engine, None, None, None
        if old is not None:
            try:
                old.resize(MIN_HASH_MB)  # (waits for its pages still coming in, then frees)
            except Exception:  # (it goes with its last reference anyway)
                pass

    @staticmethod
    def _build(make: Callable, variant: Variant, hash_mb: int, egtb_path: str,
               prefault: bool) -> "Engine":
        """An Engine, or EngineUnavailable saying what to set instead."""
        tables = None
        if egtb_path:  # (the databases' modules load numpy: only when asked for)
            from engine.egtb import shared_tablebase

            try:
                tables = shared_tablebase(variant, egtb_path)
            except Exception as exc:
                raise EngineUnavailable(f"cannot open the endgame databases in {egtb_path!r}: "
                                        f"{_why(exc)}: set another egtb-path, or an empty "
                                        "one for none") from None
        try:
            # (the table's pages come in after the warm-up: faulting them in at once would
            # hold up its memory allocations and with them `ready`)
            return make(variant, hash_mb=hash_mb, egtb=tables, prefault=prefault)
        except MemoryError as exc:
            if "hash table" in str(exc):
                raise EngineUnavailable(f"cannot allocate a {hash_mb} MB hash table: set a "
                                        "smaller hash-mb") from None
            raise EngineUnavailable(f"out of memory building the engine beside a {hash_mb} MB "
                                    "hash table: set a smaller hash-mb") from None
        except Exception as exc:  # the weights or the databases' files
            raise EngineUnavailable(f"cannot build the engine: {_why(exc)}") from None

    # -- game commands ---------------------------------------------------------------------

    def cmd_new_game(self, args: dict) -> None:
        self.engine().clear()

    def cmd_pos(self, args: dict) -> None:
        variant = self.variant
        text = args.get("pos")
        tokens = args.get("moves", "").split()
        source = (variant, self.params.pydraughts, None if text is None else text.strip())
        board = self.board
        start = len(self._pos_moves)
        if not (board is not None and source == self._pos_source
                and tokens[:start] == self._pos_moves):
            # not a continuation of the last position (clients such as pydraughts resend the
            # whole game every move: then only the new moves are played)
            start = 0
            try:
                if text is None or ("start" in args and not text):
                    board = Board(variant)
                else:
                    board = Board(variant, pydraughts.read_position(variant, source[2], source[1]))
            except DamkaError as exc:
                raise HubError(f"bad position: {exc}") from None
        else:
            board = board.copy()
        for token in tokens[start:]:
            ours = pydraughts.read_move(variant, token, self.params.pydraughts)
            try:
                board.push(ours)
            except DamkaError as exc:
                # with pydraughts-8x8 the board's reason speaks of the move renumbered
                seen = f" (pydraughts-8x8 numbering; {ours} in ours)" if ours != token else ""
                raise HubError(f"illegal move {token}{seen}: {exc}") from None
        self.board = board
        self._pos_source = source
        self._pos_moves = tokens

    def cmd_level(self, args: dict) -> None:
        from engine.limits import MAX_DEPTH, MAX_NODES
        from engine.search import Limits

        def whole(text: str) -> int:  # nodes=1e6 and moves=40.0 are numbers too
            return int(float(text))

        def number(name: str, read: Callable = float, default: str | None = None,
                   within: "tuple[Callable, str] | None" = None):
            """The value of ``name``; ``within`` (a test and what it asks) bounds it, and the
            error names the Hub's own word and the text as it was sent."""
            text = args.get(name, default)
            try:
                value = read(text)
            except (TypeError, ValueError, OverflowError):  # OverflowError: nodes=inf
                kind = "a number" if read is float else "a whole number"
                raise HubError(f"bad level: {name} must be {kind}, not {text!r}") from None
            if within is not None and not within[0](value):
                raise HubError(f"bad level: {name} must be {within[1]}, not {text}")
            return value

        positive = (lambda v: v > 0, "positive")
        not_negative = (lambda v: v >= 0, "0 or more")
        fields: dict = {}
        if "depth" in args:
            fields["depth"] = number("depth", int, within=(
                lambda v: 1 <= v <= MAX_DEPTH, f"between 1 and {MAX_DEPTH}"))
        if "nodes" in args:
            fields["nodes"] = number("nodes", whole, within=(
                lambda v: 1 <= v <= MAX_NODES, f"between 1 and {MAX_NODES}"))
        if "move-time" in args:
            fields["movetime"] = number("move-time", within=positive)
        if "time" in args or "inc" in args or "moves" in args:
            inc = number("inc", within=not_negative) if args.get("inc") else 0.0
            # the increment is added before the move (docs/protocols.md 1.8): it may be spent now
            fields["time_left"] = number("time", default="30", within=not_negative) + inc
            fields["increment"] = inc
            if args.get("moves"):
                moves = number("moves", whole)
                fields["moves_to_go"] = moves if moves > 0 else None
        if "infinite" in args:
            fields = {"infinite": True}
        try:
            self.limits = Limits(**fields) if fields else None
        except (TypeError, ValueError) as exc:
            raise HubError(f"bad level: {exc}") from None

    def cmd_go(self, args: dict) -> None:
        """Starts the search; its thread writes the ``done``. Every go gets its done, as the
        GUI waits for it: when the search cannot start or fails, an ``error`` says why and
        the done carries the move of a minimal search (_fallback_move)."""
        compat = self.params.pydraughts
        variant = self.variant

        def hub_move(move: Move) -> str:
            return pydraughts.write_move(variant, move, compat)

        board = None
        try:
            if self.board is None:
                self.board = Board(variant)
            board = self.board
            self._start_search(board, args, hub_move)
        except Exception as exc:
            self._search_failed(exc, board, hub_move)

    def _start_search(self, board: Board, args: dict, hub_move: Callable) -> None:
        from engine.search import Limits, now

        mode = "ponder" if "ponder" in args else "analyze" if ("analyze" in args or "analyse" in args) else "think"
        limits = self.limits or Limits(movetime=DEFAULT_MOVETIME)
        if mode == "analyze" and self.limits is None:
            limits = Limits(infinite=True)
        self.limits = None  # limits hold for one search (reset after each done)
        if not board.legal_moves:
            self.send("done")
            return
        engine = self.engine()
        infos_sent = []

        def on_info(info: "SearchInfo") -> None:
            infos_sent.append(True)
            fields = {"depth": info.depth}
            fields["score"] = hub_score(info.score)
            fields["nodes"] = info.nodes
            fields["time"] = f"{info.time:.3f}"
            fields["nps"] = f"{info.nps / 1e6:.2f}"
            if info.pv:
                fields["pv"] = " ".join(hub_move(m) for m in info.pv)
            self.send("info", **fields)

        # the clock runs from the moment the go line arrived (on the search's own clock)
        clock_start = now() - (time.monotonic() - self._received)
        finished = threading.Event()

        def finish(future: "Future[SearchResult]") -> None:
            """``done`` for the GUI, sent from the engine's search thread."""
            try:
                answer(future)
            finally:
                finished.set()

        def answer(future: "Future[SearchResult]") -> None:
            info = None
            try:
                result: "SearchResult" = future.result()
                done = {}
                if result.best_move is not None:
                    done["move"] = hub_move(result.best_move)
                    if result.ponder_move is not None:
                        done["ponder"] = hub_move(result.ponder_move)
                    if not infos_sent:
                        # a forced move: no iteration ran, but GUIs still want a score (as
                        # Scan does)
                        pv = " ".join(hub_move(m) for m in result.pv[:2] or (result.best_move,))
                        info = dict(depth=result.depth, score=hub_score(result.score),
                                    nodes=result.nodes, time=f"{result.time:.3f}", pv=pv)
            except Exception as exc:  # reported, and the engine keeps serving
                self._search_failed(exc, board, hub_move)
                return
            if info is not None:
                self.send("info", **info)
            self.send("done", **done)

        self._search_finished = finished
        try:
            engine.search_async(board, limits, on_info, ponder=(mode == "ponder"),
                                clock_start=clock_start, done=finish)
        except BaseException:
            self._search_finished = None
            raise

    def _search_failed(self, exc: BaseException, board: Board | None, hub_move: Callable) -> None:
        """Answers a go whose search could not run or failed: the error, then ``done`` with
        the move of a minimal search, so that the GUI is not left waiting."""
        move = self._fallback_move(board)
        try:
            text = None if move is None else hub_move(move)
        except Exception:
            text = None
        why = str(exc) if isinstance(exc, HubError) else f"search failed: {_why(exc)}"
        try:
            self.error(why if text is None else f"{why} (the move is a minimal search's)")
        except Exception:  # (the done matters more)
            pass
        if text is None:
            self.send("done")
        else:
            self.send("done", move=text)

    @staticmethod
    def _fallback_move(board: Board | None) -> Move | None:
        """The move of a depth-1 search on a fresh engine with the smallest table (the one
        set up may be what failed), else the first legal move of the generator; None when
        there is none."""
        if board is None:
            return None
        try:
            moves = list(board.legal_moves)
        except Exception:
            return None
        if not moves:
            return None
        try:
            from engine.search import Engine, Limits

            scratch = Engine(board.variant, hash_mb=MIN_HASH_MB, prefault=False)
            best = scratch.search(board, Limits(depth=1)).best_move
            if best in moves:
                return best
        except Exception:
            pass
        return moves[0]

    def cmd_ponder_hit(self, args: dict) -> None:
        """Ignored when idle (docs/protocols.md 1.4)."""

    def cmd_stop(self, args: dict) -> None:
        """Ignored when idle: no ``done`` is sent (docs/protocols.md 1.4)."""

    def cmd_ping(self, args: dict) -> None:
        self.send("pong")

    def cmd_quit(self, args: dict) -> None:
        self._quit = True


def _read_stdin(lines: "queue.Queue[tuple[float, str] | None]") -> None:
    """Lines of UTF-8; bytes that are not UTF-8 come through as escapes (``\\xff``), so
    the answer (an error, most likely) names them. Input that cannot be read any more is
    the end of input: the loop must hear of it, not wait for ever."""
    try:
        stream = sys.stdin.buffer
        while True:
            raw = stream.readline()
            if not raw:
                break
            lines.put((time.monotonic(), raw.decode("utf-8", "backslashreplace")))
    except Exception:  # (a closed or broken stdin)
        pass
    finally:
        lines.put(None)


def main(argv: list[str] | None = None) -> int:
    """Run the Hub dialogue on stdin/stdout until ``quit`` or end of input."""
    lines: "queue.Queue[tuple[float, str] | None]" = queue.Queue()
    try:  # a character the encoding lacks (cp1252 on Windows pipes) is written as an escape
        sys.stdout.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError):  # (not a TextIOWrapper: send() escapes)
        pass
    threading.Thread(target=_read_stdin, args=(lines,), name="damka-hub-stdin", daemon=True).start()
    server = HubServer(sys.stdout)
    server.serve(lines)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # (the reader has gone: nothing more can be said)
        pass
    # the stdin reader may still be blocked in a read: leave without waiting for it (a normal
    # interpreter exit would abort on the reader's lock); a lost reader is status 1, as for
    # every other command whose output is cut (protocol/cli.py)
    os._exit(1 if server.output_lost else 0)


if __name__ == "__main__":
    sys.exit(main())
