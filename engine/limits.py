"""``Limits``: when a search stops. The one vocabulary of search limits: the Hub server, the
DXP session, the match runner's players and the Hub client (which writes them as a ``level``
line for an outside engine) all translate into it.

A light module (no core, no numpy): a front end can build limits before it loads an engine.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits", "MAX_DEPTH", "MAX_NODES"]

#: deepest nominal depth (the core's ply stack holds 128 plies including extensions)
MAX_DEPTH = 96
#: largest node budget (the core counts nodes in 64 bits; 10^18 nodes is millennia of search)
MAX_NODES = 10 ** 18


@dataclass(frozen=True)
class Limits:
    """When to stop searching. Every limit given is a cap; with none, search until stop().

    Times are in seconds. ``movetime`` is the time for this move; ``time_left``,
    ``increment`` and ``moves_to_go`` are the game clock (the time manager decides).
    ``infinite`` (analysis) ignores all limits and searches until stop().
    """

    depth: int | None = None
    nodes: int | None = None
    movetime: float | None = None
    time_left: float | None = None
    increment: float = 0.0
    moves_to_go: int | None = None
    infinite: bool = False

    def __post_init__(self) -> None:
        if self.depth is not None and not 1 <= self.depth <= MAX_DEPTH:
            raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, not {self.depth}")
        if self.nodes is not None and not 1 <= self.nodes <= MAX_NODES:
            raise ValueError(f"nodes must be between 1 and {MAX_NODES}, not {self.nodes}")
        if self.movetime is not None and not self.movetime > 0:
            raise ValueError(f"movetime must be positive, not {self.movetime}")
        if self.time_left is not None and not self.time_left >= 0:
            raise ValueError(f"time_left must not be negative, not {self.time_left}")
        if not self.increment >= 0:
            raise ValueError(f"increment must not be negative, not {self.increment}")
        if self.moves_to_go is not None and self.moves_to_go < 1:
            raise ValueError(f"moves_to_go must be positive, not {self.moves_to_go}")

    @property
    def timed(self) -> bool:
        """Whether a clock limits this search (movetime or a game clock)."""
        return not self.infinite and (self.movetime is not None or self.time_left is not None)
