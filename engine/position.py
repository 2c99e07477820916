"""A position as plain data: piece sets as bit masks over the engine's 0-based squares."""

from __future__ import annotations

from typing import NamedTuple


class Position(NamedTuple):
    """Bit ``s`` of a mask stands for internal square ``s`` (see squares.py)."""

    white: int
    black: int
    kings: int
    white_to_move: bool

    @property
    def occupied(self) -> int:
        return self.white | self.black

    def pieces(self, white: bool) -> int:
        return self.white if white else self.black


def bits(mask: int):
    """The squares of a mask, in ascending order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
