"""``damka match``: its arguments and ``run``.

Only the light defaults and argument checkers load with the parser; ``run`` hands the parsed
arguments to protocol.match.main, which builds the match and plays it.
"""

from __future__ import annotations

import argparse

from engine.limits import MAX_NODES
from protocol import args as arg
from protocol.match.defaults import (DEFAULT_CONCURRENCY, DEFAULT_EVENT, DEFAULT_GRACE,
                                     DEFAULT_MAX_MOVES)

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "match",
        help="play a match between engines (Hub, DXP, damka in-process) and rate them",
        description="Play engine-against-engine games: every pair plays each opening twice with "
                    "colours reversed. Engines: 'damka [level=L] [hash=MB] [threads=N] [seed=N] "
                    "[name=N]' (in-process; threads: its search threads, 1 up to the cores), \"cmd='dame hub' [dir=PATH] [param.NAME=VALUE] [name=N]\" "
                    "(a Hub engine), 'dxp=HOST:PORT [name=N]' (a DXP follower). Each finished "
                    "game is appended to --pdn at once; --resume continues a stopped match. "
                    "A progress line goes to stderr, the final table (wins, draws, losses, "
                    "score, Elo with its 95% interval, LOS) to stdout.",
    )
    p.add_argument("--engine", action="append", metavar="SPEC",
                   help="an engine (give two or more; three or more play a round robin)")
    arg.add_variant(p)
    p.add_argument("--tc", metavar="MOVES/TIME+INC",
                   help="game clock in seconds: 40/60+0.5, 60+0.5, 40/60 or 60")
    p.add_argument("--movetime", type=arg.seconds, metavar="SECONDS", help="time per move")
    p.add_argument("--depth", type=arg.depth, help="search depth per move")
    p.add_argument("--nodes", type=arg.int_range("nodes", 1, MAX_NODES), help="nodes per move")
    p.add_argument("--openings", metavar="FILE",
                   help="openings: PDN games, or lines of FENs or moves (default: the start "
                        "position)")
    p.add_argument("--games", type=arg.positive_int("games"), metavar="N",
                   help="games per pair of engines (default: each opening twice)")
    p.add_argument("--concurrency", type=arg.positive_int("concurrency"), default=None,
                   metavar="N", help=f"games played at once (default {DEFAULT_CONCURRENCY}); "
                                     f"with --cluster, games at once on each worker machine "
                                     f"(default one per core)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play the games on a Ray cluster: auto (the cluster this machine "
                        "belongs to), ray://HOST:PORT, or local (Ray started here); needs the "
                        "cluster extra")
    p.add_argument("--pdn", metavar="FILE", help="append every finished game to this PDN file")
    p.add_argument("--resume", action="store_true",
                   help="continue the match whose games are in --pdn")
    p.add_argument("--max-moves", type=arg.int_range("max-moves", 0, 100000),
                   default=DEFAULT_MAX_MOVES, metavar="N",
                   help=f"draw after N moves by each side (0: no limit; default "
                        f"{DEFAULT_MAX_MOVES})")
    p.add_argument("--grace", type=float, default=DEFAULT_GRACE, metavar="SECONDS",
                   help=f"how far past its clock an engine may answer before it loses on time "
                        f"(transport allowance; default {DEFAULT_GRACE:g})")
    p.add_argument("--sprt", metavar="ELO0,ELO1,ALPHA,BETA",
                   help="stop when the sequential probability ratio test decides (two engines)")
    p.add_argument("--event", default=DEFAULT_EVENT, help="the PDN Event tag")
    p.add_argument("--no-comments", action="store_true",
                   help="no score/depth/time comment after each move in the PDN")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not (args.tc or args.movetime or args.depth or args.nodes):
        raise arg.UsageError("give a time control: --tc, --movetime, --depth or --nodes")
    from protocol.match.main import main  # the runner, its players and the engine load now

    return main(args)
