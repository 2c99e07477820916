"""``damka tune``: its arguments and ``run``; the fit is protocol.training.tune_main's,
imported (with numpy and scipy) only when it runs. Bad input raises ValueError (one line,
exit status 2)."""

from __future__ import annotations

import argparse

from protocol import args as arg

from .defaults import (DEFAULT_EPOCHS, DEFAULT_L2, DEFAULT_MIN_COUNT, DEFAULT_PATIENCE,
                       DEFAULT_SEED, DEFAULT_VALIDATION)
from engine.variants import Variant

from .options import add_variant, need_train_extra, read_variant

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tune",
        help="fit evaluation weights to self-play data (logistic regression)",
        description="Fit the evaluation's weights by logistic regression of the game result "
                    "(mixed with the search score by --lambda) on the features of the quiet "
                    "positions of self-play data, with L2 regularisation and a validation "
                    "split by game, and write a weights file (docs/training.md).",
    )
    p.add_argument("data", nargs="*", metavar="DATA_DIR", help="damka selfplay directories")
    p.add_argument("--out", required=True, metavar="FILE", help="the weights file to write")
    add_variant(p)
    p.add_argument("--lambda", dest="mix", type=arg.bounded(float, "lambda", 0.0, 1.0),
                   default=0.0, metavar="L",
                   help="weight of the search score in the target (default 0)")
    p.add_argument("--anchor", type=arg.bounded(float, "anchor", 0.0, 1.0), default=0.0,
                   metavar="A",
                   help="weight of the --init file's own predictions in the target (default "
                        "0): the fit then keeps, to a second-order approximation, what the data "
                        "the --init file was fitted on taught it, as if that data were fitted "
                        "again beside this (A: that data's share of all the positions)")
    p.add_argument("--l2", type=arg.listed(arg.bounded(float, "l2", 0.0)),
                   default=(DEFAULT_L2,), metavar="X[,X...]",
                   help=f"L2 regularisation: a prior on the weights worth X positions of data "
                        f"per squared man (default {DEFAULT_L2:g}; rare pattern entries stay "
                        f"near zero); several values: each is fitted and the one with the "
                        f"lowest validation loss is kept")
    p.add_argument("--prior", choices=("zero", "init"), default="zero",
                   help="what the L2 prior pulls the weights toward: zero, or the --init "
                        "weights (the fit then moves its start only as far as the data asks; "
                        "default zero)")
    p.add_argument("--epochs", type=arg.bounded(int, "epochs", 1, 100000),
                   default=DEFAULT_EPOCHS, metavar="N",
                   help=f"at most N L-BFGS iterations (default {DEFAULT_EPOCHS})")
    p.add_argument("--patience", type=arg.bounded(int, "patience", 1, 100000),
                   default=DEFAULT_PATIENCE, metavar="N",
                   help=f"stop after N iterations without a better validation loss (default "
                        f"{DEFAULT_PATIENCE})")
    p.add_argument("--min-count", type=arg.listed(arg.bounded(int, "min-count", 0)),
                   default=(DEFAULT_MIN_COUNT,), metavar="N[,N...]",
                   help=f"weights whose feature appears in fewer than N training positions keep "
                        f"their initial value (default {DEFAULT_MIN_COUNT}); several values: "
                        f"chosen with --l2 by the validation loss")
    p.add_argument("--min-count-of", type=arg.listed(_named_count), default=(),
                   metavar="NAME=N[,NAME=N...]",
                   help="a minimum count of their own for some features, named as in "
                        "--without (wide=500: a wide table's entry is fitted only where 500 "
                        "training positions reach it); the rest keep --min-count")
    p.add_argument("--k", type=arg.bounded(float, "k", 1e-3), default=None, metavar="K",
                   help="the scale of sigmoid(eval / K) (default: fitted to the data's scores)")
    p.add_argument("--validation", type=arg.bounded(float, "validation", 0.0, 0.9),
                   default=DEFAULT_VALIDATION, metavar="F",
                   help=f"share of the games held out for validation (default "
                        f"{DEFAULT_VALIDATION})")
    p.add_argument("--seed", type=arg.bounded(int, "seed", 0, 2**63 - 1),
                   default=DEFAULT_SEED, metavar="S",
                   help=f"the seed of the validation split (default {DEFAULT_SEED})")
    p.add_argument("--init", metavar="FILE", help="start from these weights (default: zeros)")
    p.add_argument("--without", type=arg.listed(str), default=(), metavar="NAME[,NAME...]",
                   help="fit without these features, held at zero: a group (edge:0, "
                        "king_mobility), all tables of a kind (edge, pattern) or one feature "
                        "(king_mobility.denied_squares); for matches that ask what a feature "
                        "is worth")
    p.add_argument("--hold", type=arg.listed(str), default=(), metavar="NAME[,NAME...]",
                   help="keep these features at their --init values, named as in --without "
                        "(material,trade: the fit then moves only the rest)")
    p.add_argument("--factor", type=arg.listed(str), default=(), metavar="TABLE[,TABLE...]",
                   help="fit these tables (pattern, edge, or one such as pattern:3) as sums of "
                        "parts, a term for each square's man and each two squares' men, plus "
                        "each entry's own: entries the data rarely or never holds get the "
                        "sum of their parts instead of their start")
    p.add_argument("--design-dir", metavar="DIR",
                   help="keep the positions' features here, on disk, and reuse them when the "
                        "same data is fitted again (default: a temporary directory beside "
                        "--out, removed at the end)")
    p.add_argument("--agree", type=arg.bounded(float, "agree", 0.0), default=None,
                   metavar="T",
                   help="fit only positions whose search score is within T (hundredths of a "
                        "man) of the --init file's static score: positions whose outcome "
                        "turns on play the evaluation cannot see (a sacrifice its search "
                        "justified, a shot on the board) are left out")
    p.add_argument("--quiet-only", action=argparse.BooleanOptionalAction, default=True,
                   help="fit only positions without a capture for either side (default on)")
    p.add_argument("--after-deviations", action="store_true",
                   help="fit only the positions after their game's last random move (data of "
                        "damka selfplay --deviate): the results of those before it turn on "
                        "where the random moves fell")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--upgrade", metavar="FILE",
                   help="fit nothing: write FILE, a weights file of an earlier evaluation "
                        "layout, as --out in the current one (its parameters kept, the new "
                        "ones at zero)")
    p.set_defaults(run=run)


def _named_count(text: str) -> tuple[str, int]:
    """``NAME=N`` of --min-count-of."""
    name, equals, count = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"min-count-of takes NAME=N (wide=500), not {text!r}")
    return name.strip(), arg.bounded(int, f"the min-count of {name.strip()}", 0)(count.strip())


def run(args: argparse.Namespace) -> int:
    variant = read_variant(args, None)
    if args.upgrade is not None:
        if args.data:
            raise ValueError("--upgrade converts a weights file and fits nothing: give no "
                             "DATA_DIR with it")
        return _upgrade(args.upgrade, args.out, variant)
    if not args.data:
        raise ValueError("give the self-play data to fit (DATA_DIR ...), or --upgrade FILE")
    if args.hold and args.init is None:
        raise ValueError("--hold keeps features at their --init values: give an --init file")
    if args.anchor and args.init is None:
        raise ValueError("--anchor mixes the --init file's predictions into the target: give "
                         "an --init file")
    if args.agree is not None and args.init is None:
        raise ValueError("--agree compares the search with the --init file's static score: "
                         "give an --init file")
    if args.prior == "init" and args.init is None:
        raise ValueError("--prior init pulls the weights toward the --init file: give one")
    need_train_extra("tune")
    from .tune_main import main

    return main(args, variant)


def _upgrade(src: str, out: str, variant: Variant | None) -> int:
    """``--upgrade``: the rule set is the file's own unless --variant names one."""
    from engine.eval_layout import layout
    from engine.weights_file import peek_header
    from engine.weights_upgrade import upgrade_file

    if variant is None:
        header = peek_header(src)
        variant = arg.read_variant(header.variant if header else "international", False)
    version = upgrade_file(variant, src, out)
    print(f"tune: wrote {out}: {src} (evaluation layout {version}) in the current layout "
          f"({layout(variant).n_params} parameters; those it lacked start at zero)")
    return 0
