"""``damka selfplay``: its arguments and ``run``; the games are played by
protocol.training.selfplay_main, imported (with numpy and the workers) only when it runs.
Bad input raises ValueError (one line, exit status 2)."""

from __future__ import annotations

import argparse

from engine.limits import MAX_NODES

from protocol import args as arg

from .defaults import (DEFAULT_HASH_MB, DEFAULT_MAX_PLIES, DEFAULT_NODES, DEFAULT_RANDOM_PLIES,
                       DEFAULT_SEED)
from .options import (add_egtb, add_hash, add_max_plies, add_seed, add_variant, add_workers,
                      need_train_extra, read_variant)

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "selfplay",
        help="play engine-against-itself games and write them as training data",
        description="Play games between identical engines at a fixed budget per move, from "
                    "varied openings, on every core, and write every position with its search "
                    "score and the game's result as numpy .npz chunks (docs/training.md). "
                    "The same --seed gives the same games; rerunning with the same --out goes "
                    "on where it stopped; Ctrl-C keeps the finished games.",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the data directory")
    p.add_argument("--games", required=True, type=arg.bounded(int, "games", 1), metavar="N",
                   help="games the directory should hold (a rerun plays the missing ones)")
    add_variant(p)
    p.add_argument("--nodes", type=arg.bounded(int, "nodes", 1, MAX_NODES), metavar="N",
                   help=f"nodes per move (default {DEFAULT_NODES} when --depth is not given)")
    p.add_argument("--depth", type=arg.bounded(int, "depth", 1, arg.MAX_DEPTH), metavar="D",
                   help="depth per move (with --nodes, whichever comes first)")
    p.add_argument("--weights", metavar="FILE", help="the engine's weights (default: its own)")
    p.add_argument("--opponent", metavar="FILE",
                   help="a second weights file whose engine plays one side of every game "
                        "(Black in even games, White in odd ones): games between two "
                        "evaluations, more of them decided (default: the engine plays itself)")
    p.add_argument("--random-plies", type=arg.bounded(int, "random-plies", 0, 200), metavar="K",
                   help=f"random plies before the engines take over, redrawn while a shallow "
                        f"search gives either side a man (default {DEFAULT_RANDOM_PLIES}, 0 "
                        f"with --openings)")
    p.add_argument("--openings", metavar="FILE",
                   help="openings (PDN, or lines of FENs or moves), used in turn")
    p.add_argument("--deviate", type=arg.bounded(float, "deviate", 0.0, 1.0), default=0.0,
                   metavar="P",
                   help="the chance at each move after the opening that the side to move "
                        "plays a random legal move instead of the search's (not recorded): "
                        "positions off the engine's own lines, which its search meets, with "
                        "the results they lead to (default 0; docs/training.md)")
    add_egtb(p)
    add_workers(p, "; with --cluster, on each worker machine")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play the games on a Ray cluster: auto, ray://HOST:PORT, or local "
                        "(Ray started here); needs the cluster extra")
    add_seed(p, DEFAULT_SEED, "the random seed of the openings")
    add_hash(p, DEFAULT_HASH_MB)
    add_max_plies(p, DEFAULT_MAX_PLIES)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    variant = read_variant(args, arg.DEFAULT_VARIANT)
    need_train_extra("selfplay")
    from .selfplay_main import main

    return main(args, variant)
