"""``damka spsa``: its arguments and ``run``; the games are played by
protocol.training.spsa_main, imported (with numpy and the workers) only when it runs. Bad
input raises ValueError (one line, exit status 2)."""

from __future__ import annotations

import argparse

from engine.limits import MAX_NODES

from protocol import args as arg

from .defaults import (DEFAULT_HASH_MB, DEFAULT_MAX_PLIES, DEFAULT_R_END, DEFAULT_RANDOM_PLIES,
                       DEFAULT_SEED, DEFAULT_SPSA_NODES)
from .options import (add_egtb, add_hash, add_max_plies, add_seed, add_variant, add_workers,
                      need_train_extra, read_variant)

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "spsa",
        help="tune a weights file's material terms and table factors by games (SPSA)",
        description="Tune a few dozen knobs of a weights file (each weight of the small "
                    "groups such as material and tempo, a middlegame and an endgame factor on "
                    "each family of tables) by playing the file's two perturbed versions "
                    "against each other, each opening with colours reversed, on every core "
                    "(docs/training.md). The run's directory keeps its state after every "
                    "round: rerunning the same command goes on; Ctrl-C keeps what was played. "
                    "The tuned weights are written to DIR/tuned.dkw.",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the run's directory")
    p.add_argument("--iterations", required=True,
                   type=arg.bounded(int, "iterations", 1, 10_000_000), metavar="N",
                   help="game pairs of the run (its gains shrink toward the last one)")
    add_variant(p)
    p.add_argument("--weights", metavar="FILE",
                   help="the weights to start from (default: the shipped file)")
    p.add_argument("--tune", type=arg.listed(str), metavar="NAME[,NAME...]",
                   help="the evaluation terms to tune, by family (material, trade, tempo, "
                        "pattern, edge, king_square...; default: all; a family of at most 16 "
                        "weights is tuned weight by weight, a larger one by two factors)")
    p.add_argument("--nodes", type=arg.bounded(int, "nodes", 1, MAX_NODES),
                   default=DEFAULT_SPSA_NODES, metavar="N",
                   help=f"nodes per move (default {DEFAULT_SPSA_NODES})")
    p.add_argument("--openings", metavar="FILE",
                   help="openings (PDN, or lines of FENs or moves), used in turn")
    p.add_argument("--random-plies", type=arg.bounded(int, "random-plies", 0, 200), metavar="K",
                   help=f"without --openings, each pair's opening: K random plies, redrawn "
                        f"while a shallow search gives either side a man (default "
                        f"{DEFAULT_RANDOM_PLIES})")
    p.add_argument("--r-end", type=arg.bounded(float, "r-end", 0.0), default=DEFAULT_R_END,
                   metavar="R",
                   help=f"a knob's move per game won at the last iteration, in its steps "
                        f"(default {DEFAULT_R_END:g})")
    add_egtb(p)
    add_workers(p)
    add_seed(p, DEFAULT_SEED, "the random seed of the perturbations and openings")
    add_hash(p, DEFAULT_HASH_MB)
    add_max_plies(p, DEFAULT_MAX_PLIES)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    variant = read_variant(args, arg.DEFAULT_VARIANT)
    need_train_extra("spsa")
    from .spsa_main import main

    return main(args, variant)
