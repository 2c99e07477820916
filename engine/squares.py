"""Square names: the one place where a rule set's notation meets the engine's 0-based squares.

Inside the engine every board is drawn with White at the bottom moving up. Internal square
``s`` (0-based) lies on row ``s // (size/2)`` counted from the top, and the dark squares of
row 0 are on columns 1, 3, 5, ... (so row 0 starts one column in, row 1 at the left edge).
That is exactly the international numbering (and the English one) minus one. Italian and
Spanish boards are mirror images of that (their near-right corner is dark): mirroring keeps
every rule, so they are mapped onto the same geometry. Russian, Brazilian and Czech name the
squares algebraically (a1 bottom-left, dark).
"""

from __future__ import annotations

from functools import lru_cache

from .variants import Variant

FILES = "abcdefghij"


def row_col(size: int, s: int) -> tuple[int, int]:
    """Row (0 = top, White's promotion row) and column (0 = left) of internal square s."""
    half = size // 2
    row, k = divmod(s, half)
    return row, 2 * k + (1 if row % 2 == 0 else 0)


def square_at(size: int, row: int, col: int) -> int | None:
    """Internal square at (row, col), or None off the board or on a light square."""
    if not (0 <= row < size and 0 <= col < size) or (row + col) % 2 == 0:
        return None
    return row * (size // 2) + col // 2


@lru_cache(maxsize=None)
def _labels(numbering: str, size: int) -> tuple[str, ...]:
    n = size * size // 2
    half = size // 2
    if numbering in ("international", "english"):
        return tuple(str(s + 1) for s in range(n))
    if numbering == "algebraic":
        out = []
        for s in range(n):
            row, col = row_col(size, s)
            out.append(f"{FILES[col]}{size - row}")
        return tuple(out)
    if numbering in ("italian", "spanish"):
        # Italian square i (1-based) counts left to right from the top-left dark square of a
        # board whose near-right corner is dark; mirrored, it is our row r, position 3-k.
        labels = [""] * n
        for i in range(1, n + 1):
            row, k = divmod(i - 1, half)
            s = row * half + (half - 1 - k)
            labels[s] = str(i if numbering == "italian" else n + 1 - i)
        return tuple(labels)
    raise ValueError(f"unknown numbering {numbering!r}")


@lru_cache(maxsize=None)
def _lookup(numbering: str, size: int) -> dict[str, int]:
    return {label: s for s, label in enumerate(_labels(numbering, size))}


def square_name(variant: Variant, s: int) -> str:
    """The rule set's own name of internal square s ("32", "c3", ...); ValueError for a
    square the board lacks (a move of another rule set's board)."""
    labels = _labels(variant.numbering, variant.size)
    if not 0 <= s < len(labels):
        raise ValueError(_off_board(variant, s))
    return labels[s]


def _off_board(variant: Variant, s: int) -> str:
    return (f"internal square {s} is not on the {variant.name} board "
            f"(0..{variant.squares - 1}): a move of another rule set?")


def parse_square(variant: Variant, text: str) -> int:
    """Internal square of a name in the rule set's notation; ValueError if there is none."""
    key = text.strip().lower()
    if key.isascii() and key.isdigit():  # not "³¹": int() refuses what isdigit() admits
        key = str(int(key))
    s = _lookup(variant.numbering, variant.size).get(key)
    if s is None:
        raise ValueError(f"{text!r} is not a square of {variant.name} draughts")
    return s


def square_names(variant: Variant) -> tuple[str, ...]:
    return _labels(variant.numbering, variant.size)


def square_number(variant: Variant, s: int) -> int:
    """The number of internal square s as the Hub protocol writes it.

    Numeric rule sets use their own numbers; the algebraic ones (Russian, Brazilian, Czech)
    use the English numbering (1 = b8 ... 32 = g1, docs/rules.md 0.4), since Hub squares are
    numbers.
    """
    if not 0 <= s < variant.squares:
        raise ValueError(_off_board(variant, s))
    if variant.algebraic:
        return s + 1
    return int(_labels(variant.numbering, variant.size)[s])


def read_square(variant: Variant, text: str) -> int:
    """A square as move texts and FENs may name it: in the rule set's notation, or for the
    algebraic sets also by its English number (as Hub squares, dctl and pydraughts write
    them, docs/rules.md 0.4); parse_square's ValueError if it is neither."""
    try:
        return parse_square(variant, text)
    except ValueError:
        key = text.strip()
        if variant.algebraic and key.isascii() and key.isdigit():
            try:
                return square_of_number(variant, int(key))
            except ValueError:
                pass
        raise


def square_of_number(variant: Variant, number: int) -> int:
    """Internal square of a Hub square number (see square_number); ValueError if there is none."""
    n = variant.squares
    if not 1 <= number <= n:
        raise ValueError(f"{number} is not a square number of {variant.name} draughts (1..{n})")
    if variant.algebraic:
        return number - 1
    return _lookup(variant.numbering, variant.size)[str(number)]
