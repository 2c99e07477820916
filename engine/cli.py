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

from . import __version__, _core
from .fen import parse_fen, write_fen
from .move import Move
from .notation import write_pdn
from .squares import square_number
from .variants import Variant, get_variant, variant_names

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
    p.set_defaults(run=_run_perft)


def _run_perft(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    if args.no_forced_capture:
        variant = variant.with_forced_capture(False)
    position = parse_fen(variant, args.fen if args.fen is not None else variant.start_fen)
    fen = write_fen(variant, position, compact=True)
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
        print(f"perft {label} {fen}")
        print(f"{'depth':>5} {'nodes':>15} {'seconds':>10} {'nodes/s':>13}", flush=True)

        def emit_depth(depth: int, nodes: int, seconds: float) -> None:
            print(f"{depth:>5} {nodes:>15} {seconds:>10.3f} {_nps(nodes, seconds):>13}", flush=True)

        def emit_move(name: str, nodes: int) -> None:
            print(f"{name:<24} {nodes:>15}", flush=True)

    for depth in range(1, args.depth + 1):
        start = perf_counter()
        if args.divide and depth == args.depth:
            rows = _core.divide(variant, position, depth)
            seconds = perf_counter() - start
            for name, nodes in _divide_rows(variant, rows):
                emit_move(name, nodes)
            nodes = sum(n for _, n in rows)
        else:
            nodes = _core.perft(variant, position, depth)
            seconds = perf_counter() - start
        emit_depth(depth, nodes, seconds)
    return 0


def _nps(nodes: int, seconds: float) -> int:
    return round(nodes / seconds) if seconds > 0 else 0


def _divide_rows(variant: Variant, rows) -> list[tuple[str, int]]:
    """Root moves in PDN (short where unambiguous), in square-number order."""
    moves = [(Move.from_core(t), n) for t, n in rows]
    legal = [m for m, _ in moves]

    def key(item):
        m = item[0]
        return ([square_number(variant, s) for s in m.path],
                sorted(square_number(variant, s) for s in m.captured))

    return [(write_pdn(variant, m, legal), n) for m, n in sorted(moves, key=key)]


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
    from protocol.hub import main as hub_main  # imported only when it runs

    return hub_main()


_COMMANDS: list[Callable] = [_add_perft, _add_hub]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="damka: a draughts engine (international 10x10 and the 8x8 rule sets).",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} (backend: {_core.BACKEND}; Python {sys.version.split()[0]})",
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
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``damka perft ... | head``): silence the final flush too
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
