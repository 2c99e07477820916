"""What ``damka dxp`` and the DXP library assume when not told (imported by the command's
parser and by the code behind it alike, so it imports nothing: ``damka --help`` reads these
without loading the session, the sockets or the engine)."""

from __future__ import annotations

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_MAX_SESSIONS", "DEFAULT_MOVETIME",
           "DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_MINUTES", "DEFAULT_GAMES"]

#: where a follower listens
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 27531
#: connections served at once by default (each has its own engine and hash table)
DEFAULT_MAX_SESSIONS = 2
#: seconds per move when the GAMEREQ gives no thinking time (000 minutes)
DEFAULT_MOVETIME = 1.0
#: drop a peer silent this long (seconds; not while its clock runs in a game, nor while we think)
DEFAULT_IDLE_TIMEOUT = 300.0
#: the longest GAMEREQ clock a follower accepts by default, minutes a side
DEFAULT_MAX_MINUTES = 120
#: games an initiator asks for (colours alternate)
DEFAULT_GAMES = 2
