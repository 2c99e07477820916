"""Pattern tables fitted as sums of their parts (``damka tune --factor``).

A table of 3^k entries (a window of k squares, each a black man, an empty square or a white
man) is learned entry by entry; an entry no training position holds keeps its start, zero in
a new fit, and self-play reaches only a fifth of the 4x4 tables' entries even with millions of
positions. The search, though, meets the others. A factored table reads each entry as

    weight[entry] = sum of its men's square terms + sum of its pairs' terms + own[entry]

(a term for each square with a man of either colour, one for each two squares with men, and
the entry's own weight, which the L2 prior pulls toward zero), so that the parts, learned from
every entry that holds them, give every entry a value: a rare one the sum of its parts, a
common one its own on top. The engine still reads one number an entry: the file holds the
sums. This module builds the matrix ``M`` with ``weights = own + M @ parts``.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy import sparse

__all__ = ["factor_matrix", "window_squares"]

#: a trit of the tables' index: 0 black man, 1 empty (or a king), 2 white man
EMPTY = 1


def window_squares(entries: int) -> int:
    """k for a table of 3^k entries (ValueError for any other size)."""
    k, size = 0, 1
    while size < entries:
        size, k = size * 3, k + 1
    if size != entries or k < 2:
        raise ValueError(f"a table of {entries} entries is not one of 3^k windows")
    return k


def factor_matrix(layout, groups: "list[str] | tuple[str, ...]") -> sparse.csc_matrix:
    """The matrix M (parameters x parts) of the layout's ``groups`` (each a table of 3^k
    entries, its middlegame and endgame weight interleaved as every feature's): for each table
    and phase, a part for each square and man colour and one for each two squares and their
    men's colours.

    Built column by column (a part's column lists the entries that hold it) with 32-bit row
    indices: the four 3^12 wide tables have 159 M such links, and the general sparse
    constructors' 64-bit coordinates and sort had taken 10 GB of memory to make them."""
    columns: list[np.ndarray] = []  # for each part, in order, the parameters it feeds
    found = {name: (offset, size) for name, offset, size in layout.groups}
    for group in groups:
        offset, size = found[group]
        entries = size // 2
        k = window_squares(entries)
        digits = (np.arange(entries)[:, None] // 3 ** np.arange(k)[None, :]) % 3
        man = digits != EMPTY
        white = digits == 2
        holders: list[np.ndarray] = []  # for each part of a phase, the entries holding it
        for square in range(k):
            for colour in (False, True):
                holders.append(np.flatnonzero(man[:, square] & (white[:, square] == colour)))
        for a, b in combinations(range(k), 2):
            both = man[:, a] & man[:, b]
            code = 2 * white[:, a] + white[:, b]
            for colours in range(4):
                holders.append(np.flatnonzero(both & (code == colours)))
        del digits, man, white
        for phase in (0, 1):  # middlegame, endgame: parts of their own
            columns.extend((offset + 2 * holding + phase).astype(np.int32)
                           for holding in holders)
    indptr = np.zeros(len(columns) + 1, np.int64)
    np.cumsum([len(c) for c in columns], out=indptr[1:])
    indices = np.concatenate(columns) if columns else np.zeros(0, np.int32)
    del columns
    if indptr[-1] < 2 ** 31:
        indptr = indptr.astype(np.int32)
    return sparse.csc_matrix((np.ones(len(indices)), indices, indptr),
                             shape=(layout.n_params, len(indptr) - 1))
