"""``damka dxp``: the command, from its parsed arguments to a served or played match.

Its own module so that the library (session, listener, records) carries no command-line
concerns; the argument parser itself is protocol/cli.py's, which imports ``main`` from here
only when the command runs.
"""

from __future__ import annotations

import sys

from engine.board import Board
from engine.pdn import check_appendable
from engine.search import Engine

from protocol.dxp.convert import VARIANT
from protocol.dxp.listener import _stdout_log, parse_address, play
from protocol.dxp.records import append_pdn
from protocol.dxp.defaults import DEFAULT_MAX_MINUTES
from protocol.dxp.session import DxpSettings, MatchSettings, _no_log

__all__ = ["main"]


def main(args) -> int:
    """``damka dxp`` with the parsed command-line arguments (see protocol/cli.py)."""
    match = None
    if args.initiator:
        if args.fen:
            board = Board(VARIANT, args.fen)  # ValueError (an exit status 2) if unreadable
            if not board.legal_moves:
                raise ValueError(f"the side to move has no moves in {args.fen!r}")
        match = MatchSettings(
            games=args.games, minutes=args.time, moves=args.moves,
            white_first=args.colour == "white", fen=args.fen,
        )
    settings = DxpSettings(movetime=args.move_time, match=match, no_flag=args.no_flag,
                           idle_timeout=args.idle_timeout or None,
                           max_minutes=getattr(args, "max_minutes", DEFAULT_MAX_MINUTES) or None)
    connect_to = parse_address(args.connect) if args.connect else None

    egtb = getattr(args, "egtb", None)
    if egtb is not None:
        from engine.egtb import default_dir

        egtb = egtb or default_dir()

    def new_engine() -> Engine:
        return Engine(VARIANT, hash_mb=args.hash, level=args.level,
                      threads=args.threads, egtb=egtb)

    if args.pdn:
        check_appendable(args.pdn)  # now, not as the first game ends
    engine = new_engine()  # the first at once: a hash table that does not fit fails now
    on_game = (lambda record: append_pdn(args.pdn, record)) if args.pdn else None
    log = _stdout_log if not args.quiet else _no_log
    trace = _stdout_log if args.verbose else None
    try:
        return play(engine, settings, host=args.host, port=args.port, connect_to=connect_to,
                    on_game=on_game, log=log, trace=trace, max_sessions=args.max_sessions,
                    new_engine=new_engine)
    finally:
        sys.stdout.flush()
