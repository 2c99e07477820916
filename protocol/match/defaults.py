"""What ``damka match`` and the match runner assume when not told (imported by the command's
parser and by the runner alike, so it imports nothing: ``damka --help`` reads these without
loading the runner, its players or the engine)."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_MOVES", "DEFAULT_GRACE", "DEFAULT_CONCURRENCY", "DEFAULT_EVENT"]

#: default adjudication: a draw after this many moves by each side (opening not counted)
DEFAULT_MAX_MOVES = 200
#: seconds an engine may overstep its clock before it loses on time (transport allowance)
DEFAULT_GRACE = 0.1
#: games played at once on this machine
DEFAULT_CONCURRENCY = 1
#: the PDN Event tag of the games
DEFAULT_EVENT = "damka match"
