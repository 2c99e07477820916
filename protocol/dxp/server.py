"""``damka dxp``'s library under its old name: re-exports what lived here before the split.

``damka dxp`` plays engine-against-engine games over TCP with the DamExchange protocol (DXP),
in layers, each knowing nothing of the one above it:

* ``protocol.dxp.codec``: message texts <-> value types, and NUL framing (no I/O);
* ``protocol.dxp.convert``: positions and moves between DXP and the engine, the draw rules;
* ``protocol.dxp.records``: finished games (GameRecord) and their PDN;
* ``protocol.dxp.session``: ``DxpSession``, the state machine of one connection (no sockets);
* ``protocol.dxp.transport`` and ``protocol.dxp.listener``: writing with a deadline, then the
  sockets, the pacing of our messages, and the listen/accept and connect loops (``play``);
* ``protocol.dxp.defaults``: what the command and the library assume when not told;
* ``protocol.dxp.command``: the command itself, its arguments (``add_parser``) and ``run``
  (here still under its old name ``main``).

This module only gathers their names, so that code written against ``protocol.dxp.server``
keeps working; new code imports from the module that does the job.
"""

from __future__ import annotations

# Beyond ``__all__`` (unchanged), every name that other code imported from here before the
# split is imported below too, private ``_Game`` included (tests build one).

from protocol.dxp.command import run as main
from protocol.dxp.convert import (
    VARIANT,
    draw_by_rules,
    draw_rule,
    find_move,
    move_to_dxp,
    position_from_dxp,
    position_to_dxp,
)
from protocol.dxp.defaults import (
    DEFAULT_HOST,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_MINUTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MOVETIME,
    DEFAULT_PORT,
)
from protocol.dxp.listener import (
    BUSY_LINGER,
    BUSY_WAIT,
    MAX_WAITING,
    PACE,
    POLL_CAP,
    DxpServer,
    connect,
    parse_address,
    play,
    refuse_busy,
    run_connection,
)
from protocol.dxp.records import GameRecord, append_pdn, pdn_game, record_game
from protocol.dxp.session import (
    FLAG_GRACE,
    FLAG_GRACE_PER_MOVE,
    LAST_RESORT_MOVETIME,
    MAX_ERRORS,
    NAME,
    DxpSession,
    DxpSettings,
    Log,
    MatchProgress,
    MatchSettings,
    SearchDone,
    _Game,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "PACE",
    "MatchSettings",
    "DxpSettings",
    "MatchProgress",
    "GameRecord",
    "DxpSession",
    "SearchDone",
    "run_connection",
    "refuse_busy",
    "DxpServer",
    "connect",
    "record_game",
    "pdn_game",
    "draw_by_rules",
    "main",
]
