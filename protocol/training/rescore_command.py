"""``damka rescore``: its arguments and ``run``; the searching is protocol.training.rescore's,
imported (with numpy and the workers) only when it runs. Bad input raises ValueError (one
line, exit status 2)."""

from __future__ import annotations

import argparse
import os

from engine.limits import MAX_NODES

from protocol import args as arg

from .defaults import DEFAULT_SEED
from .options import add_egtb, add_hash, add_seed, add_workers, need_train_extra

__all__ = ["add_parser", "run", "DEFAULT_RESCORE_NODES", "DEFAULT_EVERY"]

#: nodes per position (international: about a seventh of a second on one core, and on 12
#: positions of self-play 11 to 22 plies, 8.5 more on average than self-play's 16,000 nodes),
#: the share of the quiet positions taken, the hash per worker
DEFAULT_RESCORE_NODES = 1_000_000
DEFAULT_EVERY = 10
DEFAULT_RESCORE_HASH_MB = 64
#: seconds between two progress lines of a run whose stderr is not a terminal (a log)
LOG_EVERY_SECONDS = 60.0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "rescore",
        help="search a sample of self-play positions deeper and write them as training data",
        description="Take one in --every of the quiet positions of a damka selfplay "
                    "directory, search each from its position alone with --nodes nodes, and "
                    "write them with the new scores as a selfplay directory of their own, for "
                    "'damka tune OUT --lambda 1' (docs/training.md). The same --seed takes "
                    "the same positions; rerunning with the same --out goes on where it "
                    "stopped and covers the games SOURCE has gained; Ctrl-C keeps what is "
                    "scored.",
    )
    p.add_argument("source", metavar="SOURCE", help="a damka selfplay directory")
    p.add_argument("--out", required=True, metavar="DIR", help="the directory to write")
    p.add_argument("--nodes", type=arg.bounded(int, "nodes", 1, MAX_NODES),
                   default=DEFAULT_RESCORE_NODES, metavar="N",
                   help=f"nodes per position (default {DEFAULT_RESCORE_NODES})")
    p.add_argument("--every", type=arg.bounded(int, "every", 1, 10**9), default=DEFAULT_EVERY,
                   metavar="K",
                   help=f"take one in K of the quiet positions (default {DEFAULT_EVERY})")
    p.add_argument("--games", type=arg.bounded(int, "games", 1), metavar="N",
                   help="cover only the source's first N games (default: all it holds)")
    p.add_argument("--weights", metavar="FILE", help="the engine's weights (default: its own)")
    add_egtb(p, ends_games=False)
    add_workers(p)
    add_seed(p, DEFAULT_SEED, "which positions are taken")
    add_hash(p, DEFAULT_RESCORE_HASH_MB)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    need_train_extra("rescore")
    from .data import DataError
    from .features import weights_info
    from .rescore import (RescoreSettings, run_rescore, same_directory, settings_record,
                          source_variant)
    from .selfplay import lock_directory, prepare_directory
    from .selfplay_main import databases_option

    if not os.path.isdir(args.source):
        raise DataError(f"{args.source}: no such directory")
    if same_directory(args.source, args.out):
        raise DataError(f"{args.out} is the source directory: write elsewhere")
    source, variant = source_variant(args.source)
    egtb, egtb_record = databases_option(variant, args.egtb)
    settings = RescoreSettings(variant, args.nodes, args.every, args.seed, args.hash,
                               args.weights, egtb)
    record = settings_record(settings, source, args.source, weights_info(variant, args.weights),
                             egtb_record)
    lock = lock_directory(args.out)
    try:
        meta = prepare_directory(args.out, source.variant, record)
        return _run(args, settings, source, meta, run_rescore)
    except OSError as exc:
        raise DataError(f"{args.out}: {exc.strerror or exc}") from None
    finally:
        os.close(lock)


def _run(args: argparse.Namespace, settings, source, meta, run_rescore) -> int:
    from .run_progress import GameProgress

    total = source.games_done if args.games is None else min(args.games, source.games_done)
    if meta.games_done >= total:
        print(f"rescore: {args.out} already covers {meta.games_done} games of {args.source}")
        return 0
    workers = args.workers or os.cpu_count() or 1
    progress = GameProgress("rescore", meta.variant, total, meta.games_done, args.quiet,
                            LOG_EVERY_SECONDS)
    try:
        summary = run_rescore(settings, args.source, source, args.out, meta, workers,
                              args.games, progress)
    finally:
        progress.close()
    return progress.report(
        f"{summary.positions} positions of {summary.games} games in {summary.seconds:.1f} s "
        f"({summary.positions_per_second:.1f} positions/s, {workers} workers); {args.out} "
        f"covers {summary.games_done} games, {summary.positions_done} positions",
        summary.interrupted)
