"""The ``damka selfplay`` and ``damka tune`` subcommands: their arguments and what runs them.

``add_selfplay`` and ``add_tune`` declare the arguments on the ``damka`` parser's subparsers;
numpy, scipy and the workers are imported only when a command runs, so the rest of the
command line starts as fast as before. Bad input raises ValueError (one line, exit status 2).
"""

from __future__ import annotations

import argparse
from typing import Callable

from engine.hashsize import MAX_HASH_MB, MIN_HASH_MB
from engine.variants import Variant, get_variant, variant_names

from .defaults import (DEFAULT_HASH_MB, DEFAULT_L2, DEFAULT_MAX_PLIES, DEFAULT_MIN_COUNT,
                       DEFAULT_NODES, DEFAULT_RANDOM_PLIES)

__all__ = ["add_selfplay", "add_tune"]


def bounded(kind: Callable[[str], float], name: str, low: float, high: float | None = None):
    """An argparse type: a number of ``kind`` with ``low <= value (<= high)``."""
    def read(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {what}, not {text!r}") from None
        if value != value or value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"{name} must be {span}, not {text}")
        return value
    return read


def _variant_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default=None,
                   help=f"rule set or alias, '-nocapture' for the house rule "
                        f"({', '.join(variant_names())})")
    p.add_argument("--no-forced-capture", action="store_true",
                   help='the "no forced capture" house rule (8x8 rule sets only)')


def _variant(args: argparse.Namespace, default: str | None) -> Variant | None:
    name = args.variant if args.variant is not None else default
    if name is None:
        return None
    variant = get_variant(name)
    return variant.with_forced_capture(False) if args.no_forced_capture else variant


# -- selfplay ----------------------------------------------------------------------------


def add_selfplay(subparsers) -> None:
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
    p.add_argument("--games", required=True, type=bounded(int, "games", 1), metavar="N",
                   help="games the directory should hold (a rerun plays the missing ones)")
    _variant_argument(p)
    p.add_argument("--nodes", type=bounded(int, "nodes", 1), metavar="N",
                   help=f"nodes per move (default {DEFAULT_NODES} when --depth is not given)")
    p.add_argument("--depth", type=bounded(int, "depth", 1, 64), metavar="D",
                   help="depth per move (with --nodes, whichever comes first)")
    p.add_argument("--weights", metavar="FILE", help="the engine's weights (default: its own)")
    p.add_argument("--random-plies", type=bounded(int, "random-plies", 0, 200), metavar="K",
                   help=f"random plies before the engines take over, redrawn while a shallow "
                        f"search gives either side a man (default {DEFAULT_RANDOM_PLIES}, 0 "
                        f"with --openings)")
    p.add_argument("--openings", metavar="FILE",
                   help="openings (PDN, or lines of FENs or moves), used in turn")
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help="endgame databases (damka egtb build): the engines probe them, and a "
                        "game that reaches a position in them ends with their result "
                        "(without DIR: the default directory)")
    p.add_argument("--workers", type=bounded(int, "workers", 1, 1024), default=None,
                   metavar="N", help="worker processes (default: every core); with --cluster, "
                                     "on each worker machine")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play the games on a Ray cluster: auto, ray://HOST:PORT, or local "
                        "(Ray started here); needs the cluster extra")
    p.add_argument("--seed", type=bounded(int, "seed", 0, 2**63 - 1), default=1, metavar="S",
                   help="the random seed of the openings (default 1)")
    p.add_argument("--max-plies", type=bounded(int, "max-plies", 1, 30000),
                   default=DEFAULT_MAX_PLIES, metavar="N",
                   help=f"a game still going after N plies is a draw (default "
                        f"{DEFAULT_MAX_PLIES})")
    p.add_argument("--hash", type=bounded(int, "hash", MIN_HASH_MB, MAX_HASH_MB),
                   default=DEFAULT_HASH_MB, metavar="MB",
                   help=f"hash table per worker (default {DEFAULT_HASH_MB})")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run_selfplay)


def _run_selfplay(args: argparse.Namespace) -> int:
    variant = _variant(args, "international")
    _need_train_extra("selfplay")
    from .selfplay_main import main

    return main(args, variant)


# -- tune --------------------------------------------------------------------------------


def add_tune(subparsers) -> None:
    p = subparsers.add_parser(
        "tune",
        help="fit evaluation weights to self-play data (logistic regression)",
        description="Fit the evaluation's weights by logistic regression of the game result "
                    "(mixed with the search score by --lambda) on the features of the quiet "
                    "positions of self-play data, with L2 regularisation and a validation "
                    "split by game, and write a weights file (docs/training.md).",
    )
    p.add_argument("data", nargs="+", metavar="DATA_DIR", help="damka selfplay directories")
    p.add_argument("--out", required=True, metavar="FILE", help="the weights file to write")
    _variant_argument(p)
    p.add_argument("--lambda", dest="mix", type=bounded(float, "lambda", 0.0, 1.0), default=0.0,
                   metavar="L", help="weight of the search score in the target (default 0)")
    p.add_argument("--l2", type=bounded(float, "l2", 0.0), default=DEFAULT_L2, metavar="X",
                   help=f"L2 regularisation: a prior on the weights worth X positions of data "
                        f"per squared man (default {DEFAULT_L2:g}; rare pattern entries stay "
                        f"near zero)")
    p.add_argument("--epochs", type=bounded(int, "epochs", 1, 100000), default=300, metavar="N",
                   help="at most N L-BFGS iterations (default 300)")
    p.add_argument("--patience", type=bounded(int, "patience", 1, 100000), default=10,
                   metavar="N", help="stop after N iterations without a better validation "
                                     "loss (default 10)")
    p.add_argument("--min-count", type=bounded(int, "min-count", 0), default=DEFAULT_MIN_COUNT,
                   metavar="N", help=f"weights whose feature appears in fewer than N training "
                                     f"positions keep their initial value (default "
                                     f"{DEFAULT_MIN_COUNT})")
    p.add_argument("--k", type=bounded(float, "k", 1e-3), default=None, metavar="K",
                   help="the scale of sigmoid(eval / K) (default: fitted to the data's scores)")
    p.add_argument("--validation", type=bounded(float, "validation", 0.0, 0.9), default=0.1,
                   metavar="F", help="share of the games held out for validation (default 0.1)")
    p.add_argument("--seed", type=bounded(int, "seed", 0, 2**63 - 1), default=1, metavar="S",
                   help="the seed of the validation split (default 1)")
    p.add_argument("--init", metavar="FILE", help="start from these weights (default: zeros)")
    p.add_argument("--quiet-only", action=argparse.BooleanOptionalAction, default=True,
                   help="fit only positions without a capture for either side (default on)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(run=_run_tune)


def _run_tune(args: argparse.Namespace) -> int:
    variant = _variant(args, None)
    _need_train_extra("tune")
    from .tune_main import main

    return main(args, variant)


def _need_train_extra(command: str) -> None:
    """numpy, scipy and tqdm come with the ``train`` extra: say so instead of a traceback."""
    for module in ("numpy", "scipy", "tqdm"):
        try:
            __import__(module)
        except ImportError:
            raise ValueError(f"damka {command} needs {module}: pip install 'damka[train]'"
                             ) from None

