"""The exceptions of the public API: all are DamkaError (a ValueError) subclasses that carry
the bad input. A light module that imports nothing of the package, so that every module can
raise them."""

from __future__ import annotations

from typing import Sequence

__all__ = [
    "DamkaError",
    "InvalidFenError",
    "InvalidPositionError",
    "InvalidMoveError",
    "IllegalMoveError",
    "AmbiguousMoveError",
    "UnknownVariantError",
]


class DamkaError(ValueError):
    """Base class of damka's input errors."""


class UnknownVariantError(DamkaError):
    """A rule-set name that the registry does not know."""


class InvalidFenError(DamkaError):
    """A FEN (or Hub position) that cannot be read."""

    def __init__(self, fen: str, reason: str):
        super().__init__(f"invalid FEN {fen!r}: {reason}")
        self.fen = fen
        self.reason = reason


class InvalidPositionError(DamkaError):
    """A Position (bit masks) that no board of the rule set can hold."""

    def __init__(self, position, reason: str):
        super().__init__(f"invalid position {tuple(position)!r}: {reason}")
        self.position = position
        self.reason = reason


class InvalidMoveError(DamkaError):
    """Text that is not a move in any notation we read."""

    def __init__(self, text: str, reason: str = "not a move"):
        super().__init__(f"invalid move {text!r}: {reason}")
        self.text = text


class IllegalMoveError(DamkaError):
    """A well-formed move that is not legal in the position."""

    def __init__(self, text: str, reason: str = "not legal in this position"):
        super().__init__(f"illegal move {text!r}: {reason}")
        self.text = text


class AmbiguousMoveError(DamkaError):
    """A move text that fits more than one legal move; ``candidates`` lists them (by name),
    ``moves`` the Moves where the parser knows them."""

    def __init__(self, text: str, candidates, moves: Sequence = ()):
        self.text = text
        self.candidates = list(candidates)
        self.moves = list(moves)
        names = ", ".join(str(c) for c in self.candidates)
        super().__init__(f"ambiguous move {text!r}: could be {names}")
