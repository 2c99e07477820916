"""``damka analyse``: search a position, one line per finished iteration, then the best move.

The search (engine.search) and the endgame databases load only when the command runs.
"""

from __future__ import annotations

import argparse

from engine.board import Board
from engine.hashsize import DEFAULT_HASH_MB
from engine.limits import MAX_NODES

from protocol import args as arg

__all__ = ["add_parser", "run", "format_score", "pdn_line"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "analyse",
        aliases=["analyze"],
        help="search a position and print each iteration and the best move",
        description="Search a position: one line per finished iteration (depth, selective "
                    "depth, score in hundredths of a man from the side to move, #N for a win "
                    "in N moves and #-N for a loss, nodes, nodes per second, seconds, "
                    "principal variation in PDN), then 'bestmove M [ponder R]'.",
    )
    arg.add_variant(p)
    p.add_argument("--fen", help="the position (default: the rule set's start position)")
    p.add_argument("--moves", default="",
                   help="moves played from that position first, separated by spaces "
                        "(they count for repetitions and the draw rules)")
    limit = p.add_mutually_exclusive_group(required=True)
    limit.add_argument("--depth", type=arg.depth, help=f"search depth, 1..{arg.MAX_DEPTH}")
    limit.add_argument("--time", type=arg.seconds, help="seconds to search")
    limit.add_argument("--nodes", type=arg.int_range("nodes", 1, MAX_NODES), help="nodes to search")
    p.add_argument("--level", default="full", help="easy, medium, hard or full (default full)")
    p.add_argument("--seed", type=int, default=0, help="seed of a weaker level's choice")
    arg.add_hash(p, DEFAULT_HASH_MB)
    arg.add_threads(p, "search")
    arg.add_no_forced_capture(p)
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help="probe the endgame databases in DIR (without DIR: the default "
                        "directory; see damka egtb)")
    p.set_defaults(run=run)


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


def run(args: argparse.Namespace) -> int:
    from engine.levels import get_level
    from engine.search import Engine, Limits
    from engine.timeman import TimeSettings

    variant = arg.read_variant(args.variant, args.no_forced_capture)
    level = get_level(args.level)
    board = Board(variant, args.fen)
    for text in args.moves.split():
        board.push(text)
    limits = Limits(depth=args.depth, nodes=args.nodes, movetime=args.time)
    egtb = arg.egtb_dir(args.egtb)
    if egtb is not None:
        from protocol.egtb_command import load_tables

        load_tables(variant, egtb)
    # analysis has no transport to allow for: --time is the search's own time
    engine = Engine(variant, hash_mb=args.hash, level=level, seed=args.seed,
                    time_settings=TimeSettings(move_overhead=0.0), threads=args.threads,
                    egtb=egtb)
    print(f"analyse {arg.variant_label(variant)} {board.fen(compact=True)} level {level.name}"
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
