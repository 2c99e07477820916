"""``Move``: a value type that always knows its full path and its captured pieces.

Squares are the engine's internal 0-based squares; a move is written in a rule set's
notation only when asked, with that rule set passed in (``move.hub(variant)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .position import bits
from .squares import square_name, square_number
from .variants import Variant

__all__ = ["Move"]


@dataclass(frozen=True)
class Move:
    """One legal move: a step, or a whole capture sequence.

    ``path`` holds every square the piece stands on, origin first and destination last
    (``(origin, destination)`` for a step); ``captured`` the captured squares, ascending;
    ``promotes`` is true when a man ends the move as a king.
    """

    origin: int
    destination: int
    path: tuple[int, ...] = ()
    captured: tuple[int, ...] = ()
    promotes: bool = False

    def __post_init__(self) -> None:
        # Normalise so that equal moves compare equal however they were built.
        if not self.path:
            object.__setattr__(self, "path", (self.origin, self.destination))
        elif not isinstance(self.path, tuple):
            object.__setattr__(self, "path", tuple(self.path))
        if self.path[0] != self.origin or self.path[-1] != self.destination:
            raise ValueError(f"path {self.path} does not run from {self.origin} to {self.destination}")
        captured = tuple(sorted(self.captured))
        if captured != self.captured:
            object.__setattr__(self, "captured", captured)

    @classmethod
    def from_core(cls, core_move: tuple) -> "Move":
        """Build a Move from the core's (origin, destination, captured_mask, path, promotes)."""
        origin, destination, mask, path, promotes = core_move
        return cls(origin, destination, tuple(path), tuple(bits(mask)), bool(promotes))

    @property
    def is_capture(self) -> bool:
        return bool(self.captured)

    @property
    def captured_mask(self) -> int:
        """The captured squares as a bit mask over internal squares."""
        mask = 0
        for s in self.captured:
            mask |= 1 << s
        return mask

    def hub(self, variant: Variant) -> str:
        """The Hub form: ``32-28``, or ``28x19x23`` (from, to, every captured square ascending).

        Hub squares are numbers; for the algebraic rule sets they are the English numbers
        (see squares.square_number).
        """
        return self._hub_form(variant, lambda s: str(square_number(variant, s)))

    def pdn_long(self, variant: Variant) -> str:
        """The full path in PDN: ``32-28``, ``26x37x48``, ``c3:e5:g7`` for Russian."""
        sep = variant.capture_separator if self.captured else "-"
        return sep.join(square_name(variant, s) for s in self.path)

    def pdn_short(self, variant: Variant) -> str:
        """Origin and destination only: ``32-28`` or ``26x48`` (may be ambiguous)."""
        sep = variant.capture_separator if self.captured else "-"
        return f"{square_name(variant, self.origin)}{sep}{square_name(variant, self.destination)}"

    def _hub_form(self, variant: Variant, name, separator: str = "x") -> str:
        if not self.captured:
            return f"{name(self.origin)}-{name(self.destination)}"
        taken = sorted(self.captured, key=lambda s: square_number(variant, s))
        return separator.join(name(s) for s in (self.origin, self.destination, *taken))
