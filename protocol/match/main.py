"""``damka match``: from the parsed command line to a played match and its table.

The command line itself is declared in protocol/match/command.py, whose ``run`` calls ``main``
here; this module builds the MatchConfig, runs the Match with a progress line on stderr, and
prints the final table on stdout. Ctrl-C stops the match: the finished games are in the PDN file, ``--resume`` goes on.
"""

from __future__ import annotations

import argparse
import sys

from protocol.match.defaults import DEFAULT_CONCURRENCY
from protocol.match.runner import Match, MatchConfig, MatchError, SprtSettings
from protocol.match.report import Progress, final_table
from protocol.match.openings import read_openings, start_opening
from protocol.match.timecontrol import TimeControl, parse_time_control
from engine.variants import get_variant

__all__ = ["config_from_args", "main"]


def config_from_args(args: argparse.Namespace) -> MatchConfig:
    """The MatchConfig the command line asks for; ValueError (one line) when it is wrong."""
    from protocol.match.engines import parse_engine

    # the one lookup of the rule set's name: everything below takes the record
    variant = get_variant(args.variant)
    engines = [parse_engine(text) for text in args.engine or []]
    if len(engines) < 2:
        raise MatchError("give at least two engines (--engine ... --engine ...)")
    time = moves = None
    inc = 0.0
    if args.tc:
        time, moves, inc = parse_time_control(args.tc)
    control = TimeControl(time=time, moves=moves, increment=inc, movetime=args.movetime,
                          depth=args.depth, nodes=args.nodes)
    try:
        openings = (read_openings(args.openings, variant) if args.openings
                    else [start_opening(variant)])
    except OSError as exc:
        raise MatchError(f"cannot read the openings: {exc}") from None
    if any(e.kind == "dxp" for e in engines) and variant.name != "international":
        raise MatchError("DXP engines play international draughts only")
    cluster = getattr(args, "cluster", None)
    if cluster is not None:
        from protocol.cluster.connect import check_address, import_ray

        check_address(cluster)
        import_ray()  # a missing extra is said before anything starts
    return MatchConfig(
        engines=engines,
        control=control,
        openings=openings,
        variant=variant,
        games_per_pair=args.games,
        concurrency=(args.concurrency if cluster is not None
                     else args.concurrency or DEFAULT_CONCURRENCY),
        pdn=args.pdn,
        resume=args.resume,
        max_moves=args.max_moves or None,
        grace=args.grace,
        sprt=SprtSettings.parse(args.sprt) if args.sprt else None,
        event=args.event,
        comments=not args.no_comments,
        cluster=cluster,
    )


def _where(config: MatchConfig) -> str:
    """Where the games run, for the title."""
    if config.cluster is None:
        return f"concurrency {config.concurrency}"
    n = config.concurrency
    per = "one game per core" if n is None else f"{n} game{'s' if n != 1 else ''}"
    return f"on the Ray cluster {config.cluster} ({per} on each machine)"


def main(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    progress = None if args.quiet else Progress(sys.stderr)
    match = Match(config, on_progress=progress,
                  on_warning=None if progress is None else
                  lambda text: progress.note(f"damka match: {text}"))
    pairs = " vs ".join(match.names)
    title = (f"{pairs}: {match.variant.name}, {config.control}, "
             f"{len(config.openings)} opening{'s' if len(config.openings) != 1 else ''}, "
             f"{len(match.schedule)} games, {_where(config)}")
    if config.sprt is not None:
        title += f", SPRT {config.sprt}"
    if any(getattr(spec, "kind", None) == "dxp" for spec in config.engines):
        from protocol.match.dxp_player import ROUND_TRIP

        title += f", DXP round trip {ROUND_TRIP:g} s a move not charged"
    try:
        state = match.run()
    except MatchError:
        if match.state.not_played:  # stopped mid-match: the games played, then the error
            if progress is not None:
                progress.finish()
            print(final_table(match.state, title), flush=True)
        raise
    except KeyboardInterrupt:
        match.stop()
        if progress is not None:
            progress.finish()
        match.state.interrupted = True
        print(final_table(match.state, title), flush=True)
        if config.pdn is not None:
            print(f"interrupted: the finished games are in {config.pdn}; "
                  "run again with --resume to go on", file=sys.stderr)
        return 130
    if progress is not None:
        progress.finish()
    print(final_table(state, title), flush=True)
    return 0
