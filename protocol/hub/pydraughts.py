"""Hub positions and moves as damka writes them, or in pydraughts' own 8x8 conventions.

Hub is defined for 10x10 only. For the 8x8 sets damka reads and writes 33-character positions
and move numbers in the set's own numbering (English numbers for the algebraic sets). pydraughts
(0.6.7) drives Hub engines on 8x8 with conventions of its own (docs/protocols.md 1.11), which
the Hub parameter ``pydraughts-8x8`` switches on:

* English: the position string is rotated by 180 degrees and colour-swapped (side letter
  included); moves use the normal PDN numbers.
* Russian and Brazilian: the position string counts from the top (as ours does) but moves
  count from the bottom (1 = a1, 2 = c1, ..., 32 = h8).
* Italian: the same as ours.
"""

from __future__ import annotations

import re

from engine.move import Move
from engine.notation import parse_hub_position
from engine.position import Position
from engine.variants import Variant

__all__ = ["read_position", "read_move", "write_move"]

_NUMBER = re.compile(r"\d+")


def _flip_number(number: int) -> int:
    """Top-down <-> bottom-up square numbers on 8x8 (the map is its own inverse)."""
    row, k = divmod(number - 1, 4)
    return 4 * (7 - row) + k + 1


def _bottom_up_moves(variant: Variant, compat: bool) -> bool:
    return compat and variant.size == 8 and variant.name in ("russian", "brazilian")


def read_position(variant: Variant, text: str, compat: bool) -> Position:
    """A Hub position string; InvalidFenError if it is not one."""
    if compat and variant.size == 8 and variant.name == "english" and len(text) == 33:
        swap = {"w": "b", "b": "w", "W": "B", "B": "W", "e": "e"}
        side = {"W": "B", "B": "W"}.get(text[0], text[0])
        squares = text[1:]
        text = side + "".join(swap.get(c, c) for c in reversed(squares))
    return parse_hub_position(variant, text)


def read_move(variant: Variant, text: str, compat: bool) -> str:
    """A move token in the client's numbering, rewritten in ours (parsing is the board's)."""
    if _bottom_up_moves(variant, compat):
        return _NUMBER.sub(lambda m: str(_flip_number(int(m.group()))), text)
    return text


def write_move(variant: Variant, move: Move, compat: bool) -> str:
    """A move in full Hub form (every captured square, ascending) in the client's numbering."""
    text = move.hub(variant)
    if not _bottom_up_moves(variant, compat):
        return text
    numbers = [_flip_number(int(n)) for n in _NUMBER.findall(text)]
    if not move.is_capture:
        return f"{numbers[0]}-{numbers[1]}"
    return "x".join(str(n) for n in numbers[:2] + sorted(numbers[2:]))
