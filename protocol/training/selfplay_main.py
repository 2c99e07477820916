"""``damka selfplay`` from parsed arguments: settings, openings, progress bar and summary."""

from __future__ import annotations

import argparse
import os

from engine.variants import Variant

from .defaults import DEFAULT_NODES, DEFAULT_RANDOM_PLIES
from .data import DataError
from .features import weights_info
from .games import SelfPlaySettings
from .run_progress import GameProgress
from .selfplay import lock_directory, prepare_directory, run_selfplay, settings_record

#: seconds between two progress lines of a run whose stderr is not a terminal (a log)
LOG_EVERY_SECONDS = 60.0

__all__ = ["main", "load_openings", "openings_and_plies", "databases_option"]


def load_openings(path: str, variant: Variant) -> list:
    """The match runner's openings loader (wherever this tree keeps it)."""
    try:
        from protocol.match.openings import read_openings
    except ImportError:  # the tree before the match runner moved into protocol/
        from engine.openings import read_openings
    try:
        return read_openings(path, variant)
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None


def openings_and_plies(args: argparse.Namespace, variant: Variant) -> tuple[list, int]:
    """--openings and --random-plies: the openings (none without a file) and the random plies
    before the engines take over (by default none after an opening from the file)."""
    openings = load_openings(args.openings, variant) if args.openings else []
    random_plies = args.random_plies
    if random_plies is None:
        random_plies = 0 if openings else DEFAULT_RANDOM_PLIES
    if args.max_plies <= random_plies:
        raise DataError(f"--max-plies {args.max_plies} leaves no move after {random_plies} "
                        "random plies")
    return openings, random_plies


def databases_option(variant: Variant, option: str | None) -> tuple[str | None, dict | None]:
    """--egtb: (the directory, what meta.json keeps of its tables), or (None, None); a
    directory without tables for the rule set is an error before any game starts."""
    if option is None:
        return None, None
    from engine.egtb import default_dir
    from engine.search import open_databases

    directory = str(option or default_dir())
    tb = open_databases(variant, directory)
    return directory, {"pieces": tb.pieces, "slices": len(tb)}


def main(args: argparse.Namespace, variant: Variant) -> int:
    cluster = getattr(args, "cluster", None)
    if cluster is not None:
        from protocol.cluster.connect import check_address, import_ray

        check_address(cluster)
        import_ray()  # a missing extra is said before anything starts
    openings, random_plies = openings_and_plies(args, variant)
    nodes = args.nodes if args.nodes is not None or args.depth else DEFAULT_NODES
    egtb, egtb_record = databases_option(variant, args.egtb)
    settings = SelfPlaySettings(variant, nodes, args.depth, random_plies,
                                args.seed, args.max_plies, args.hash, args.weights, egtb,
                                args.deviate, args.opponent)
    opponent = None if args.opponent is None else weights_info(variant, args.opponent)
    record = settings_record(settings, args.openings, weights_info(variant, args.weights),
                             egtb_record, opponent)
    lock = lock_directory(args.out)
    try:
        return _run(args, settings, record, openings, cluster)
    finally:
        os.close(lock)


def _run(args: argparse.Namespace, settings: SelfPlaySettings, record: dict,
         openings: list, cluster: "str | None") -> int:
    try:
        meta = prepare_directory(args.out, settings.variant, record)
    except OSError as exc:
        raise DataError(f"{args.out}: {exc.strerror or exc}") from None
    if meta.games_done >= args.games:
        print(f"selfplay: {args.out} already holds {meta.games_done} games")
        return 0

    if cluster is None:
        workers = min(args.workers or os.cpu_count() or 1, args.games - meta.games_done)
        where = f"{workers} workers"
    else:
        workers = args.workers
        per = "one worker per core" if workers is None else f"{workers} workers"
        where = f"the Ray cluster {cluster}, {per} on each machine"
    # off a terminal (a long run's log) a plain line now and then instead of the bar
    progress = GameProgress("selfplay", settings.variant, args.games, meta.games_done,
                            args.quiet, LOG_EVERY_SECONDS)
    try:
        summary = run_selfplay(settings, args.out, args.games, workers, meta, openings,
                               progress, cluster)
    finally:
        progress.close()
    return progress.report(
        f"{summary.games} games, {summary.positions} positions in {summary.seconds:.1f} s "
        f"({summary.positions_per_second:.0f} positions/s, {where}); {args.out} holds "
        f"{summary.games_done} games", summary.interrupted)
