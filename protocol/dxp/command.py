"""``damka dxp``: its arguments (``add_parser``), and from them to a served or played match
(``run``).

The library (session, listener, records) carries no command-line concerns; this module
imports only the light defaults and argument checkers at the top, so that building the
``damka`` parser does not load the session, the sockets or the engine: ``run`` does.
"""

from __future__ import annotations

import argparse

from engine.hashsize import DEFAULT_HASH_MB

from protocol import args as arg
from protocol.dxp.defaults import (DEFAULT_GAMES, DEFAULT_HOST, DEFAULT_IDLE_TIMEOUT,
                                   DEFAULT_MAX_MINUTES, DEFAULT_MAX_SESSIONS, DEFAULT_MOVETIME,
                                   DEFAULT_PORT)

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "dxp",
        help="play international draughts over TCP with the DamExchange protocol (DXP)",
        description="Play engine-against-engine games over DXP (10x10 only). By default listen on "
        f"{DEFAULT_HOST}:{DEFAULT_PORT} and follow (answer GAMEREQs); --connect dials out "
        "instead, --initiator requests the games itself.",
    )
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}; 0.0.0.0 for all "
                        f"interfaces)")
    p.add_argument("--port", type=arg.port, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--connect", metavar="HOST:PORT", help="connect to a listening program instead")
    p.add_argument("--initiator", action="store_true",
                   help="request the games (colours alternate) instead of following")
    p.add_argument("--time", type=arg.whole_minutes, default=0, metavar="MINUTES",
                   help="initiator: thinking time per side for a game in whole minutes 0-999, "
                   "as DXP's GAMEREQ has it (0: --move-time per move)")
    p.add_argument("--moves", type=arg.int_range("moves", 0, 999), default=0, metavar="N",
                   help="initiator: moves per side before the game ends (0: no limit)")
    p.add_argument("--games", type=arg.int_range("games", 1, 100000), default=DEFAULT_GAMES,
                   metavar="N", help=f"initiator: number of games (default {DEFAULT_GAMES})")
    p.add_argument("--colour", "--color", choices=("white", "black"), default="white",
                   help="initiator: our colour in the first game (default white)")
    p.add_argument("--fen", help="initiator: start position (default: the start position)")
    p.add_argument("--pdn", metavar="FILE", help="append every finished game to this PDN file")
    arg.add_hash(p, DEFAULT_HASH_MB)
    p.add_argument("--level", default="full", choices=("easy", "medium", "hard", "full"),
                   help="playing strength (default full)")
    arg.add_threads(p, "search each move")
    p.add_argument("--move-time", type=arg.seconds_up_to(3600), default=DEFAULT_MOVETIME,
                   metavar="SECONDS",
                   help=f"time per move when a game request gives 0 minutes (default "
                        f"{DEFAULT_MOVETIME})")
    p.add_argument("--max-sessions", type=arg.int_range("max-sessions", 1, 64),
                   default=DEFAULT_MAX_SESSIONS, metavar="N",
                   help=f"listening: connections served at once, each with its own engine and "
                        f"hash table (memory: N x --hash); more are told busy (default "
                        f"{DEFAULT_MAX_SESSIONS})")
    p.add_argument("--idle-timeout", type=arg.seconds_up_to(86400, zero=True),
                   default=DEFAULT_IDLE_TIMEOUT, metavar="SECONDS",
                   help=f"drop a peer that sends nothing that advances the game (CHATs and "
                        f"malformed messages do not) this long, except while its clock runs in "
                        f"a game (default {DEFAULT_IDLE_TIMEOUT:g}; 0: never)")
    p.add_argument("--max-minutes", type=arg.int_range("max-minutes", 0, 999),
                   default=DEFAULT_MAX_MINUTES, metavar="N",
                   help=f"refuse a game request whose clock is longer than N minutes a side "
                        f"(default {DEFAULT_MAX_MINUTES}; 0: any)")
    p.add_argument("--no-flag", action="store_true",
                   help="do not claim a game when the peer oversteps the GAMEREQ clock")
    p.add_argument("--quiet", action="store_true", help="no log lines on stdout")
    p.add_argument("--verbose", action="store_true", help="log every message sent and received")
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help="use the endgame databases in DIR (without DIR: the default directory)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """``damka dxp`` with the parsed command-line arguments."""
    import sys

    from engine.board import Board
    from engine.pdn import check_appendable
    from engine.search import Engine

    from protocol.dxp.convert import VARIANT
    from protocol.dxp.listener import _stdout_log, parse_address, play
    from protocol.dxp.records import append_pdn
    from protocol.dxp.session import DxpSettings, MatchSettings, _no_log

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
    egtb = arg.egtb_dir(getattr(args, "egtb", None))

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
