"""Bootstrap weights: the hand-written evaluation (``_fast/evaluate.pyx``) re-expressed in the
learned evaluation's layout, until weights trained by self-play replace them.

    python -m engine.bootstrap_weights            # writes engine/weights/<variant>.dkw
    python -m engine.bootstrap_weights OUTDIR

What carries over, term by term (the same value in the middlegame and the endgame):

- material: a man 100, every king the rule set's king value (320 international, 260 flying
  8x8 kings, 150 short kings);
- advancement by row, the centre bonus and the back-rank guard: a value per square for a man,
  spread over the pattern windows that cover the square (the guard is always counted; the
  hand-written evaluation drops it once the opponent has a king);
- wing balance (international), blocked men, runaway men (halved against kings), and the
  bonus for trading down when ahead (here "ahead" counts a king as three men);
- the drawish-material scaling is built into the core and needs no weights.

King squares, king mobility, side to move and the other new features start at zero.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .evaluation import Layout, layout, write_weights
from .learned import WEIGHTS_DIR
from .squares import row_col
from .variants import VARIANTS, Variant

__all__ = ["bootstrap_weights", "main"]


def _king_value(variant: Variant) -> int:
    if variant.size == 10:
        return 320
    return 260 if variant.flying_kings else 150


def _man_square_values(size: int) -> np.ndarray:
    """The hand-written evaluation's per-square value of a White man (engine squares)."""
    advance = ([0, 2, 3, 4, 6, 8, 11, 15, 20, 0] if size == 10 else [0, 3, 5, 8, 12, 17, 24, 0])
    back_rank = 6 if size == 8 else 4
    values = np.zeros(size * size // 2)
    for s in range(values.size):
        row, col = row_col(size, s)
        values[s] = advance[size - 1 - row]
        if 2 <= col <= size - 3 and 3 <= row <= size - 4:
            values[s] += 4
        if row == size - 1:
            values[s] += back_rank
    return values


def _set(w: np.ndarray, lay: Layout, group: str, feature: int, value: float) -> None:
    start = lay.group_slice(group).start
    w[start + 2 * feature] = value
    w[start + 2 * feature + 1] = value


def _pattern_tables(lay: Layout, man_value: np.ndarray) -> list[np.ndarray]:
    """Per table: the sum over its squares of a share of the men's square values.

    Every square lies in several window reads (a table's window and its turned twin); each
    read carries 1/coverage of the square's value, so the reads add up to the value. In a
    table's window, digit i set to 2 (a White man on square s) is worth v(s)/cov(s); set to 0
    (a Black man on s) it is worth -v(turned s)/cov(s), Black's own view of that square.
    """
    nsq = man_value.size
    coverage = np.zeros(nsq)
    for window, turned in zip(lay.windows, lay.rotated_windows):
        coverage[list(window)] += 1
        coverage[list(turned)] += 1
    digits = np.array([[(u // 3 ** i) % 3 for i in range(8)] for u in range(3 ** 8)])
    tables = []
    for window in lay.windows:
        white = np.array([man_value[s] / coverage[s] for s in window])
        black = np.array([-man_value[nsq - 1 - s] / coverage[s] for s in window])
        tables.append(((digits == 2) * white + (digits == 0) * black).sum(axis=1))
    return tables


def bootstrap_weights(variant: Variant) -> np.ndarray:
    """The bootstrap weights of a rule set (hundredths of a man, layout order)."""
    lay = layout(variant)
    w = np.zeros(lay.n_params)
    king = _king_value(variant)
    size = variant.size
    _set(w, lay, "material", 0, 100)
    for feature in (1, 2, 3):
        _set(w, lay, "material", feature, king)
    # trading down when ahead: sign * (4 * size - pieces) * 2 in the hand-written evaluation
    start_pieces = 2 * (size // 2) * (size // 2 - 1)
    _set(w, lay, "trade", 0, 2 * (4 * size - start_pieces))
    _set(w, lay, "trade", 1, 2)
    if size == 10:
        _set(w, lay, "balance", 0, -3)
    _set(w, lay, "formation", 0, -3)
    runaway = (70, 50, 30) if size == 10 else (70, 50, 0)
    for togo, value in enumerate(runaway):
        _set(w, lay, "runaway", togo, value)
        _set(w, lay, "runaway", togo + 3, value // 2)
    for t, table in enumerate(_pattern_tables(lay, _man_square_values(size))):
        start = lay.group_slice(f"pattern:{t}").start
        w[start:start + 2 * table.size:2] = table
        w[start + 1:start + 2 * table.size:2] = table
    return w


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else WEIGHTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    for variant in VARIANTS:
        path = out / f"{variant.name}.dkw"
        write_weights(path, variant, bootstrap_weights(variant))
        print(f"{path}: {layout(variant).n_params} parameters, bootstrap")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
