"""``damka perft``: count the leaves of the legal-move tree, depth by depth (a move generator
test and its speed)."""

from __future__ import annotations

import argparse
import sys
from time import perf_counter

from engine.board import Board
from engine.fen import parse_fen, write_fen
from engine.notation import write_pdn
from engine.perft import divide as engine_divide
from engine.perft import perft as engine_perft
from engine.squares import square_number
from engine.variants import Variant

from protocol import args as arg
from protocol.progress import advance, on_terminal, terminal_bar

__all__ = ["add_parser", "run", "nps", "PERFT_PROGRESS_AFTER"]

#: seconds the depth before took for perft to show a progress line (a depth costs ~10 times more)
PERFT_PROGRESS_AFTER = 0.1


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "perft",
        help="count the leaves of the legal-move tree (move generator test and speed)",
        description="Perft: for each depth 1..N the leaf count, the time and nodes per second.",
    )
    arg.add_variant(p)
    p.add_argument("--fen", help="start from this FEN (default: the rule set's start position)")
    p.add_argument("--depth", type=arg.depth, required=True, help=f"deepest depth, 1..{arg.MAX_DEPTH}")
    p.add_argument("--divide", action="store_true",
                   help="at the deepest depth, the leaf count per root move, then the total")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per depth: variant, fen, depth, nodes, seconds, nps")
    arg.add_no_forced_capture(p)
    arg.add_threads(p, "count")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    variant = arg.read_variant(args.variant, args.no_forced_capture)
    position = parse_fen(variant, args.fen if args.fen is not None else variant.start_fen)
    fen = write_fen(variant, position, compact=True)
    board = Board(variant, position)
    label = arg.variant_label(variant)
    if args.json:
        import json

        def emit_depth(depth: int, nodes: int, seconds: float) -> None:
            record = {"variant": label, "fen": fen, "depth": depth, "nodes": nodes,
                      "seconds": round(seconds, 6), "nps": nps(nodes, seconds)}
            print(json.dumps(record), flush=True)

        def emit_move(name: str, nodes: int) -> None:
            print(json.dumps({"move": name, "nodes": nodes}), flush=True)
    else:
        print(f"perft {label} {fen}" + (f" threads {args.threads}" if args.threads > 1 else ""))
        print(f"{'depth':>5} {'nodes':>15} {'seconds':>10} {'nodes/s':>13}", flush=True)

        def emit_depth(depth: int, nodes: int, seconds: float) -> None:
            print(f"{depth:>5} {nodes:>15} {seconds:>10.3f} {nps(nodes, seconds):>13}", flush=True)

        def emit_move(name: str, nodes: int) -> None:
            print(f"{name:<24} {nodes:>15}", flush=True)

    tty = on_terminal()
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


class _PerftProgress:
    """``damka perft``'s progress on a terminal while one depth is counted: subtrees done
    and time (a tqdm bar, cleared when the depth is done; its counts go to stdout)."""

    def __init__(self, depth: int):
        self.bar = terminal_bar(None, f"depth {depth}", unit=" subtrees", leave=False)

    def __call__(self, done: int, total: int) -> None:
        advance(self.bar, done, total)

    def clear(self) -> None:
        self.bar.close()


def nps(nodes: int, seconds: float) -> int:
    """Nodes per second, 0 for a time too short to measure (perft, analyse and bench)."""
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
