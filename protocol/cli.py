"""The ``damka`` command line.

Each command is a small ``_add_<name>(subparsers)`` function that declares its arguments and
sets ``run``; adding a command (analyse, bench, hub, dxp, match, play) means writing one more
and listing it in ``_COMMANDS``. Bad input never shows a traceback: it gives one line
``damka: error: ...`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from time import perf_counter
from typing import Callable, Sequence

from engine import BACKEND, __version__
from engine.board import Board
from engine.fen import parse_fen, write_fen
from engine.hashsize import MAX_HASH_MB, MIN_HASH_MB
from engine.notation import write_pdn
from engine.perft import divide as engine_divide
from engine.perft import perft as engine_perft
from engine.squares import square_number
from engine.variants import Variant, get_variant, variant_names
from protocol.egtb_cli import add_egtb, load_tables
from protocol.training.cli import add_selfplay, add_tune

__all__ = ["main", "build_parser"]

PROG = "damka"
#: deeper than this is a typo, not a request (and beyond what any core's ply stack holds)
MAX_DEPTH = 64


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not usage + error, and no SystemExit here
        raise UsageError(message)


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be a positive integer, not {text!r}") from None
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"depth must be between 1 and {MAX_DEPTH}, not {value}")
    return value


def _threads(text: str) -> int:
    """A --threads value: 1 up to the cores this process may use."""
    from engine.threads import check_threads

    try:
        return check_threads(int(text))
    except ValueError as exc:
        message = str(exc) if text.strip().lstrip("+-").isdigit() else \
            f"threads must be a positive integer, not {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def _add_threads(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--threads", type=_threads, default=1, metavar="N",
                   help=f"{what} on N threads, 1 up to the number of cores (default 1)")


def _variant_label(variant: Variant) -> str:
    """A name that get_variant reads back, house rule included."""
    return variant.name if variant.forced_capture else f"{variant.name}-nocapture"


# -- perft -------------------------------------------------------------------------------


def _add_perft(subparsers) -> None:
    p = subparsers.add_parser(
        "perft",
        help="count the leaves of the legal-move tree (move generator test and speed)",
        description="Perft: for each depth 1..N the leaf count, the time and nodes per second.",
    )
    p.add_argument("--variant", default="international",
                   help=f"rule set or alias (default international; {', '.join(variant_names())})")
    p.add_argument("--fen", help="start from this FEN (default: the rule set's start position)")
    p.add_argument("--depth", type=_depth, required=True, help=f"deepest depth, 1..{MAX_DEPTH}")
    p.add_argument("--divide", action="store_true",
                   help="at the deepest depth, the leaf count per root move, then the total")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per depth: variant, fen, depth, nodes, seconds, nps")
    p.add_argument("--no-forced-capture", action="store_true",
                   help='the "no forced capture" house rule (8x8 rule sets only)')
    _add_threads(p, "count")
    p.set_defaults(run=_run_perft)


def _run_perft(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    if args.no_forced_capture:
        variant = variant.with_forced_capture(False)
    position = parse_fen(variant, args.fen if args.fen is not None else variant.start_fen)
    fen = write_fen(variant, position, compact=True)
    board = Board(variant, position)
    label = _variant_label(variant)
    if args.json:
        import json

        def emit_depth(depth: int, nodes: int, seconds: float) -> None:
            record = {"variant": label, "fen": fen, "depth": depth, "nodes": nodes,
                      "seconds": round(seconds, 6), "nps": _nps(nodes, seconds)}
            print(json.dumps(record), flush=True)

        def emit_move(name: str, nodes: int) -> None:
            print(json.dumps({"move": name, "nodes": nodes}), flush=True)
    else:
        print(f"perft {label} {fen}" + (f" threads {args.threads}" if args.threads > 1 else ""))
        print(f"{'depth':>5} {'nodes':>15} {'seconds':>10} {'nodes/s':>13}", flush=True)

        def emit_depth(depth: int, nodes: int, seconds: float) -> None:
            print(f"{depth:>5} {nodes:>15} {seconds:>10.3f} {_nps(nodes, seconds):>13}", flush=True)

        def emit_move(name: str, nodes: int) -> None:
            print(f"{name:<24} {nodes:>15}", flush=True)

    tty = sys.stderr.isatty()
    seconds = 0.0
    for depth in range(1, args.depth + 1):
        # a depth that will take seconds (the one before took a tenth): a progress line
        progress = _PerftProgress(depth) if tty and seconds > PERFT_PROGRESS_AFTER else None
        start = perf_counter()
        divide = args.divide and depth == args.depth
        if divide:
            rows = engine_divide(board, depth, args.threads, on_item=progress)
            nodes = sum(n for _, n in rows)
        else:
            nodes = engine_perft(board, depth, args.threads, on_item=progress)
        seconds = perf_counter() - start
        if progress is not None:
            progress.clear()
        if divide:
            for name, count in _divide_rows(variant, rows):
                emit_move(name, count)
        emit_depth(depth, nodes, seconds)
    return 0


#: seconds the depth before took for perft to show a progress line (a depth costs ~10 times more)
PERFT_PROGRESS_AFTER = 0.1


class _PerftProgress:
    """``damka perft``'s progress on stderr while one depth is counted: subtrees done, time."""

    def __init__(self, depth: int):
        self.depth = depth
        self.start = perf_counter()

    def __call__(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // total
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] depth {self.depth}: {done}/{total} "
              f"subtrees, {perf_counter() - self.start:.0f} s", end="", file=sys.stderr,
              flush=True)

    def clear(self) -> None:
        print(f"\r{' ' * 72}\r", end="", file=sys.stderr, flush=True)


def _nps(nodes: int, seconds: float) -> int:
    return round(nodes / seconds) if seconds > 0 else 0


def _divide_rows(variant: Variant, rows) -> list[tuple[str, int]]:
    """Root moves in PDN (short where unambiguous), in square-number order."""
    moves = list(rows)
    legal = [m for m, _ in moves]

    def key(item):
        m = item[0]
        return ([square_number(variant, s) for s in m.path],
                sorted(square_number(variant, s) for s in m.captured))

    return [(write_pdn(variant, m, legal), n) for m, n in sorted(moves, key=key)]


# -- analyse -----------------------------------------------------------------------------


def _positive_int(what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a positive integer, not {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{what} must be a positive integer, not {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"time must be a number of seconds, not {text!r}") from None
    if not 0 < value < 1e7:
        raise argparse.ArgumentTypeError(f"time must be a positive number of seconds, not {text}")
    return value


def _add_analyse(subparsers) -> None:
    p = subparsers.add_parser(
        "analyse",
        aliases=["analyze"],
        help="search a position and print each iteration and the best move",
        description="Search a position: one line per finished iteration (depth, selective "
                    "depth, score in hundredths of a man from the side to move, #N for a win "
                    "in N moves and #-N for a loss, nodes, nodes per second, seconds, "
                    "principal variation in PDN), then 'bestmove M [ponder R]'.",
    )
    p.add_argument("--variant", default="international",
                   help=f"rule set or alias (default international; {', '.join(variant_names())})")
    p.add_argument("--fen", help="the position (default: the rule set's start position)")
    p.add_argument("--moves", default="",
                   help="moves played from that position first, separated by spaces "
                        "(they count for repetitions and the draw rules)")
    limit = p.add_mutually_exclusive_group(required=True)
    limit.add_argument("--depth", type=_depth, help=f"search depth, 1..{MAX_DEPTH}")
    limit.add_argument("--time", type=_seconds, help="seconds to search")
    limit.add_argument("--nodes", type=_positive_int("nodes"), help="nodes to search")
    p.add_argument("--level", default="full", help="easy, medium, hard or full (default full)")
    p.add_argument("--seed", type=int, default=0, help="seed of a weaker level's choice")
    p.add_argument("--hash", type=_hash_size, default=64, metavar="MB",
                   help=f"hash table size in MB, {MIN_HASH_MB}..{MAX_HASH_MB} (default 64)")
    _add_threads(p, "search")
    p.add_argument("--no-forced-capture", action="store_true",
                   help='the "no forced capture" house rule (8x8 rule sets only)')
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help="probe the endgame databases in DIR (without DIR: the default "
                        "directory; see damka egtb)")
    p.set_defaults(run=_run_analyse)


def _egtb_dir(option: str | None):
    """--egtb: None without the option, the default directory for an empty value."""
    if option is None:
        return None
    from engine.egtb import default_dir

    return option or default_dir()


def format_score(score: int) -> str:
    """Hundredths of a man with a sign, or #N / #-N for a forced win / loss in N moves."""
    from engine.search import mate_in

    mate = mate_in(score)
    if mate is not None:
        return f"#{mate}" if score > 0 else f"#-{-mate}"
    return f"{score:+d}" if score else "0"


def pdn_line(board, moves) -> str:
    """A variation in PDN, each move written against the position it is played in."""
    board = board.copy(stack=False)
    out = []
    for move in moves:
        out.append(board.pdn(move))
        board.push(move)
    return " ".join(out)


def _run_analyse(args: argparse.Namespace) -> int:
    from engine.levels import get_level
    from engine.search import Engine, Limits
    from engine.timeman import TimeSettings

    variant = get_variant(args.variant)
    if args.no_forced_capture:
        variant = variant.with_forced_capture(False)
    level = get_level(args.level)
    board = Board(variant, args.fen)
    for text in args.moves.split():
        board.push(text)
    limits = Limits(depth=args.depth, nodes=args.nodes, movetime=args.time)
    egtb = _egtb_dir(args.egtb)
    if egtb is not None:
        load_tables(variant, egtb)
    # analysis has no transport to allow for: --time is the search's own time
    engine = Engine(variant, hash_mb=args.hash, level=level, seed=args.seed,
                    time_settings=TimeSettings(move_overhead=0.0), threads=args.threads,
                    egtb=egtb)
    print(f"analyse {_variant_label(variant)} {board.fen(compact=True)} level {level.name}"
          + (f" threads {args.threads}" if args.threads > 1 else ""))
    print(f"{'depth':>5} {'seldepth':>8} {'score':>7} {'nodes':>12} {'nodes/s':>10} "
          f"{'seconds':>8}  pv", flush=True)

    def show(info) -> None:
        if info.final:
            print(f"{info.depth:>5} {info.seldepth:>8} {format_score(info.score):>7} "
                  f"{info.nodes:>12} {info.nps:>10} {info.time:>8.3f}  "
                  f"{pdn_line(board, info.pv)}", flush=True)

    result = engine.search(board, limits, on_info=show)
    if result.egtb is not None:
        print(f"egtb {result.egtb}", flush=True)
    if result.best_move is None:
        print("bestmove none (no legal move: the side to move has lost)")
        return 0
    line = f"bestmove {board.pdn(result.best_move)}"
    if result.ponder_move is not None:
        after = board.copy(stack=False)
        after.push(result.best_move)
        line += f" ponder {after.pdn(result.ponder_move)}"
    print(line, flush=True)
    return 0


# -- bench -------------------------------------------------------------------------------


def _add_bench(subparsers) -> None:
    from engine.benchmark import DEFAULT_DEPTH

    p = subparsers.add_parser(
        "bench",
        help="search fixed positions of every rule set; total nodes and speed",
        description="Search a fixed list of positions of every rule set to a fixed depth with "
                    "one thread (the hash cleared before each) and print the nodes of each, "
                    "then the total node count (a signature of the search) and nodes per "
                    "second.",
    )
    p.add_argument("--depth", type=_depth, default=DEFAULT_DEPTH,
                   help=f"search depth, 1..{MAX_DEPTH} (default {DEFAULT_DEPTH})")
    p.add_argument("--hash", type=_hash_size, default=16, metavar="MB",
                   help=f"hash table size in MB, {MIN_HASH_MB}..{MAX_HASH_MB} (default 16)")
    p.set_defaults(run=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    from engine.benchmark import run_bench

    print(f"bench depth {args.depth} hash {args.hash} MB backend {BACKEND}")

    def show(line) -> None:
        r = line.result
        print(f"{line.variant:<14} {r.nodes:>12} {_nps(r.nodes, line.seconds):>10}  {line.fen}",
              flush=True)

    nodes, seconds = run_bench(args.depth, args.hash, on_line=show)
    print(f"nodes {nodes}")
    print(f"seconds {seconds:.3f}")
    print(f"nodes/s {_nps(nodes, seconds)}", flush=True)
    return 0


# -- the parser --------------------------------------------------------------------------

def _add_hub(subparsers) -> None:
    p = subparsers.add_parser(
        "hub",
        help="speak the Hub protocol on stdin/stdout (for draughts GUIs and match runners)",
        description="Run as a Hub engine (Scan's protocol, version 2) on stdin/stdout. "
        "GUIs start the engine as `damka hub`; extra `--name=value` arguments are ignored.",
    )
    p.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(run=_run_hub)


def _run_hub(args: argparse.Namespace) -> int:
    from protocol.hub.server import main as hub_main  # imported only when it runs

    return hub_main()


# -- dxp ---------------------------------------------------------------------------------


def _int_range(name: str, low: int, high: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, not {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be between {low} and {high}, not {value}")
        return value
    return read


#: ``--hash`` of analyse, bench and dxp: the range every front end takes (engine.hashsize)
_hash_size = _int_range("hash size", MIN_HASH_MB, MAX_HASH_MB)


def _seconds_up_to(high: float, zero: bool = False) -> Callable[[str], float]:
    """Seconds in (0, high], or [0, high] with ``zero``. (A name of its own: ``_seconds``
    above serves analyse and match.)"""
    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not (0 <= value if zero else 0 < value) or not value <= high:
            raise argparse.ArgumentTypeError(
                f"seconds must be in {'[' if zero else '('}0, {high:g}], not {value}")
        return value
    return read


def _whole_minutes(text: str) -> int:
    """``damka dxp --time``: refused unless whole minutes (DXP's GAMEREQ has no fractions)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"whole minutes (DXP's GAMEREQ cannot say fractions), not {text!r}") from None
    if not 0 <= value <= 999:
        raise argparse.ArgumentTypeError(f"whole minutes between 0 and 999, not {value}")
    return value


def _add_dxp(subparsers) -> None:
    p = subparsers.add_parser(
        "dxp",
        help="play international draughts over TCP with the DamExchange protocol (DXP)",
        description="Play engine-against-engine games over DXP (10x10 only). By default listen on "
        "127.0.0.1:27531 and follow (answer GAMEREQs); --connect dials out instead, "
        "--initiator requests the games itself.",
    )
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces)")
    p.add_argument("--port", type=_int_range("port", 0, 65535), default=27531,
                   help="port to listen on (default 27531; 0 picks a free one)")
    p.add_argument("--connect", metavar="HOST:PORT", help="connect to a listening program instead")
    p.add_argument("--initiator", action="store_true",
                   help="request the games (colours alternate) instead of following")
    p.add_argument("--time", type=_whole_minutes, default=0, metavar="MINUTES",
                   help="initiator: thinking time per side for a game in whole minutes 0-999, "
                   "as DXP's GAMEREQ has it (0: --move-time per move)")
    p.add_argument("--moves", type=_int_range("moves", 0, 999), default=0, metavar="N",
                   help="initiator: moves per side before the game ends (0: no limit)")
    p.add_argument("--games", type=_int_range("games", 1, 100000), default=2, metavar="N",
                   help="initiator: number of games (default 2)")
    p.add_argument("--colour", "--color", choices=("white", "black"), default="white",
                   help="initiator: our colour in the first game (default white)")
    p.add_argument("--fen", help="initiator: start position (default: the start position)")
    p.add_argument("--pdn", metavar="FILE", help="append every finished game to this PDN file")
    p.add_argument("--hash", type=_hash_size, default=64, metavar="MB",
                   help=f"hash table size in MB, {MIN_HASH_MB}..{MAX_HASH_MB} (default 64)")
    p.add_argument("--level", default="full", choices=("easy", "medium", "hard", "full"),
                   help="playing strength (default full)")
    _add_threads(p, "search each move")
    p.add_argument("--move-time", type=_seconds_up_to(3600), default=1.0, metavar="SECONDS",
                   help="time per move when a game request gives 0 minutes (default 1.0)")
    p.add_argument("--max-sessions", type=_int_range("max-sessions", 1, 64), default=2,
                   metavar="N", help="listening: connections served at once, each with its own "
                   "engine and hash table (memory: N x --hash); more are told busy (default 2)")
    p.add_argument("--idle-timeout", type=_seconds_up_to(86400, zero=True), default=300.0,
                   metavar="SECONDS",
                   help="drop a peer that sends nothing that advances the game (CHATs and "
                   "malformed messages do not) this long, except while its clock runs in a "
                   "game (default 300; 0: never)")
    p.add_argument("--max-minutes", type=_int_range("max-minutes", 0, 999), default=120,
                   metavar="N", help="refuse a game request whose clock is longer than N "
                   "minutes a side (default 120; 0: any)")
    p.add_argument("--no-flag", action="store_true",
                   help="do not claim a game when the peer oversteps the GAMEREQ clock")
    p.add_argument("--quiet", action="store_true", help="no log lines on stdout")
    p.add_argument("--verbose", action="store_true", help="log every message sent and received")
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help="use the endgame databases in DIR (without DIR: the default directory)")
    p.set_defaults(run=_run_dxp)


def _run_dxp(args: argparse.Namespace) -> int:
    from protocol.dxp.command import main as dxp_main  # imported only when it runs

    return dxp_main(args)


# -- play --------------------------------------------------------------------------------


def _add_play(subparsers) -> None:
    p = subparsers.add_parser(
        "play",
        help="play in the browser against the computer or a friend (a local web page)",
        description="Start a local web server with a page to play any rule set against the "
        "computer (easy, medium, hard) or a friend on the same screen; print its address and "
        "open it in the browser when there is one. Needs the 'play' extra: "
        "pip install 'damka[play]'.",
    )
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=_int_range("port", 0, 65535), default=0,
                   help="port to listen on (default 0: a free port)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.set_defaults(run=_run_play)


def _run_play(args: argparse.Namespace) -> int:
    try:  # the web code and its library load only for this command
        from protocol.play.server import serve
    except ImportError as exc:
        raise UsageError(f"{exc}; install the web extra: pip install 'damka[play]'") from None
    return serve(args.host, args.port, browser=not args.no_browser)


# -- match -------------------------------------------------------------------------------


def _add_match(subparsers) -> None:
    p = subparsers.add_parser(
        "match",
        help="play a match between engines (Hub, DXP, damka in-process) and rate them",
        description="Play engine-against-engine games: every pair plays each opening twice with "
                    "colours reversed. Engines: 'damka [level=L] [hash=MB] [threads=N] [seed=N] "
                    "[name=N]' (in-process; threads: its search threads, 1 up to the cores), \"cmd='dame hub' [dir=PATH] [param.NAME=VALUE] [name=N]\" "
                    "(a Hub engine), 'dxp=HOST:PORT [name=N]' (a DXP follower). Each finished "
                    "game is appended to --pdn at once; --resume continues a stopped match. "
                    "A progress line goes to stderr, the final table (wins, draws, losses, "
                    "score, Elo with its 95%% interval, LOS) to stdout.",
    )
    p.add_argument("--engine", action="append", metavar="SPEC",
                   help="an engine (give two or more; three or more play a round robin)")
    p.add_argument("--variant", default="international",
                   help=f"rule set or alias (default international; {', '.join(variant_names())})")
    p.add_argument("--tc", metavar="MOVES/TIME+INC",
                   help="game clock in seconds: 40/60+0.5, 60+0.5, 40/60 or 60")
    p.add_argument("--movetime", type=_seconds, metavar="SECONDS", help="time per move")
    p.add_argument("--depth", type=_depth, help="search depth per move")
    p.add_argument("--nodes", type=_positive_int("nodes"), help="nodes per move")
    p.add_argument("--openings", metavar="FILE",
                   help="openings: PDN games, or lines of FENs or moves (default: the start "
                        "position)")
    p.add_argument("--games", type=_positive_int("games"), metavar="N",
                   help="games per pair of engines (default: each opening twice)")
    p.add_argument("--concurrency", type=_positive_int("concurrency"), default=None,
                   metavar="N", help="games played at once (default 1); with --cluster, games "
                                     "at once on each worker machine (default one per core)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play the games on a Ray cluster: auto (the cluster this machine "
                        "belongs to), ray://HOST:PORT, or local (Ray started here); needs the "
                        "cluster extra")
    p.add_argument("--pdn", metavar="FILE", help="append every finished game to this PDN file")
    p.add_argument("--resume", action="store_true",
                   help="continue the match whose games are in --pdn")
    p.add_argument("--max-moves", type=_int_range("max-moves", 0, 100000), default=200,
                   metavar="N", help="draw after N moves by each side (0: no limit; default 200)")
    p.add_argument("--grace", type=float, default=0.1, metavar="SECONDS",
                   help="how far past its clock an engine may answer before it loses on time "
                        "(transport allowance; default 0.1)")
    p.add_argument("--sprt", metavar="ELO0,ELO1,ALPHA,BETA",
                   help="stop when the sequential probability ratio test decides (two engines)")
    p.add_argument("--event", default="damka match", help="the PDN Event tag")
    p.add_argument("--no-comments", action="store_true",
                   help="no score/depth/time comment after each move in the PDN")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=_run_match)


def _run_match(args: argparse.Namespace) -> int:
    if not (args.tc or args.movetime or args.depth or args.nodes):
        raise UsageError("give a time control: --tc, --movetime, --depth or --nodes")
    from protocol.match.main import main as match_main  # imported only when it runs

    return match_main(args)


_COMMANDS: list[Callable] = [_add_perft, _add_analyse, _add_bench, _add_hub, _add_dxp, _add_play,
                             _add_match, add_selfplay, add_tune, add_egtb]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="damka: a draughts engine (international 10x10 and the 8x8 rule sets).",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} (backend: {BACKEND}; Python {sys.version.split()[0]})",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for add in _COMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hub"]:  # clients add their own --name=value arguments: take no notice
        return _run_hub(argparse.Namespace())
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return args.run(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UsageError, ValueError) as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # a hash table or database the machine cannot hold
        print(f"{PROG}: error: out of memory: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``damka perft ... | head``): silence the final flush too
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:  # a folder that cannot be made, a full disk: what and where
        where = f": {exc.filename}" if exc.filename else ""
        print(f"{PROG}: error: {exc.strerror or _one_line(exc)}{where}", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
