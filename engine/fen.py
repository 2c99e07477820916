"""FEN as PDN writes it: ``W:W31-50:B1-20``, ``K`` for kings, ranges, either block first.

Algebraic squares (``Wa1,c1``) for the rule sets that name squares that way. A trailing
``.`` and a surrounding ``[FEN "..."]`` tag are accepted and ignored.
"""

from __future__ import annotations

import re

from .errors import InvalidFenError
from .position import Position, bits
from .squares import read_square, row_col, square_name
from .variants import Variant, as_variant

_TAG = re.compile(r'^\[\s*FEN\s+"(.*)"\s*\]$', re.S)


def parse_fen(variant: "str | Variant", fen: str) -> Position:
    """Read a FEN in the rule set's own notation; InvalidFenError says what is wrong."""
    variant = as_variant(variant)
    if not isinstance(fen, str):
        raise InvalidFenError(repr(fen), "a FEN must be text")
    text = fen.strip()
    tag = _TAG.match(text)
    if tag:
        text = tag.group(1).strip()
    text = text.rstrip(".").strip().strip('"').strip()
    parts = [p.strip() for p in text.split(":")]
    if len(parts) < 1 or parts[0].upper() not in ("W", "B"):
        raise InvalidFenError(fen, "it must start with the side to move, W or B")
    if len(parts) > 3:
        raise InvalidFenError(fen, "too many ':'-separated blocks")
    white_to_move = parts[0].upper() == "W"
    masks = {"W": 0, "B": 0}
    kings = 0
    seen_colours = set()
    for block in parts[1:]:
        if not block:
            continue
        colour = block[0].upper()
        if colour not in masks:
            raise InvalidFenError(fen, f"a block must start with W or B, not {block[0]!r}")
        if colour in seen_colours:
            raise InvalidFenError(fen, f"two blocks for colour {colour}")
        seen_colours.add(colour)
        for item in filter(None, (i.strip() for i in block[1:].split(","))):
            is_king = item[:1].upper() == "K"
            body = item[1:] if is_king else item
            for s in _squares_of(variant, fen, body):
                bit = 1 << s
                if (masks["W"] | masks["B"]) & bit:
                    raise InvalidFenError(fen, f"square {square_name(variant, s)} is given twice")
                masks[colour] |= bit
                if is_king:
                    kings |= bit
    position = Position(masks["W"], masks["B"], kings, white_to_move)
    _check_men_rows(variant, fen, position)
    return position


def _squares_of(variant: Variant, fen: str, body: str) -> list[int]:
    """The squares an item names: one square or a range ``31-50`` (``K31-K50`` too)."""
    if "-" in body:
        first, _, last = body.partition("-")
        if last[:1].upper() == "K":
            last = last[1:]
        first, last = first.strip(), last.strip()
        if not (first.isascii() and first.isdigit() and last.isascii() and last.isdigit()):
            raise InvalidFenError(fen, f"bad range {body!r}")
        a, b = int(first), int(last)
        # bounded before it is spelled out: "1-99999999999" must not build a huge list
        if not 1 <= a <= b <= variant.squares:
            raise InvalidFenError(fen, f"bad range {body!r} (squares 1..{variant.squares})")
        names = [str(i) for i in range(a, b + 1)]
    else:
        names = [body]
    out = []
    for name in names:
        try:  # (the algebraic sets' numeric FENs use the English numbers)
            out.append(read_square(variant, name))
        except ValueError as exc:
            raise InvalidFenError(fen, str(exc)) from None
    return out


def _check_men_rows(variant: Variant, fen: str, position: Position) -> None:
    last = variant.size - 1
    for s in bits(position.white & ~position.kings):
        if row_col(variant.size, s)[0] == 0:
            raise InvalidFenError(fen, f"a white man on its crowning row ({square_name(variant, s)})")
    for s in bits(position.black & ~position.kings):
        if row_col(variant.size, s)[0] == last:
            raise InvalidFenError(fen, f"a black man on its crowning row ({square_name(variant, s)})")


def _sort_key(variant: Variant, s: int):
    name = square_name(variant, s)
    if variant.algebraic:
        row, col = row_col(variant.size, s)
        return (-row, col)
    return (int(name),)


def _block(variant: Variant, position: Position, mask: int, compact: bool) -> str:
    squares = sorted(bits(mask), key=lambda s: _sort_key(variant, s))
    items: list[str] = []
    if compact and not variant.algebraic:
        run: list[int] = []

        def flush():
            if len(run) >= 3:
                k = "K" if (position.kings >> run[0]) & 1 else ""
                items.append(f"{k}{square_name(variant, run[0])}-{square_name(variant, run[-1])}")
            else:
                for s in run:
                    k = "K" if (position.kings >> s) & 1 else ""
                    items.append(f"{k}{square_name(variant, s)}")
            run.clear()

        for s in squares:
            if run:
                prev = run[-1]
                same_kind = ((position.kings >> prev) & 1) == ((position.kings >> s) & 1)
                if same_kind and int(square_name(variant, s)) == int(square_name(variant, prev)) + 1:
                    run.append(s)
                    continue
                flush()
            run.append(s)
        flush()
    else:
        for s in squares:
            k = "K" if (position.kings >> s) & 1 else ""
            items.append(f"{k}{square_name(variant, s)}")
    return ",".join(items)


def write_fen(variant: "str | Variant", position: Position, compact: bool = False) -> str:
    """The FEN of a position; ``compact`` writes runs of three or more squares as ranges."""
    variant = as_variant(variant)
    side = "W" if position.white_to_move else "B"
    white = _block(variant, position, position.white, compact)
    black = _block(variant, position, position.black, compact)
    return f"{side}:W{white}:B{black}"
