"""Material signatures of the endgame databases and the order they are built in.

A signature (wm, wk, bm, bk) counts the men and kings of the side to move (w) and of the
opponent (b); every table stores positions with that side to move. A quiet move leads from a
slice to its colour partner (bm, bk, wm, wk); a capture or a crowning leads to a slice with
fewer pieces or fewer men, so building by (pieces, men) ascending meets every dependency.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

#: the largest piece count the index handles (men and kings of one kind below 8)
MAX_PIECES = 7
#: threads a build or a check uses unless told (one: the other core stays free)
DEFAULT_WORKERS = 1


class Material(NamedTuple):
    """Men and kings of the side to move (w) and of the opponent (b)."""

    wm: int
    wk: int
    bm: int
    bk: int

    @property
    def pieces(self) -> int:
        return self.wm + self.wk + self.bm + self.bk

    @property
    def men(self) -> int:
        return self.wm + self.bm

    @property
    def partner(self) -> "Material":
        """The slice a quiet move leads to (the opponent then to move)."""
        return Material(self.bm, self.bk, self.wm, self.wk)

    @property
    def name(self) -> str:
        """File stem, e.g. ``2m1k-0m1k``: two men and a king to move against a king."""
        return f"{self.wm}m{self.wk}k-{self.bm}m{self.bk}k"

    @classmethod
    def from_name(cls, name: str) -> "Material":
        try:
            w, b = name.split("-")
            wm, wk = w.rstrip("k").split("m")
            bm, bk = b.rstrip("k").split("m")
            return cls(int(wm), int(wk), int(bm), int(bk))
        except ValueError:
            raise ValueError(f"not a material signature: {name!r}") from None


def material_of_file(path, suffix: str) -> Material:
    """The material of a database file from its name; ValueError naming the file for a stray
    file in the folder."""
    try:
        return Material.from_name(path.name[: -len(suffix)])
    except ValueError:
        raise ValueError(f"{path}: not one of the databases (its name is no material "
                         "signature); move it out of the folder") from None


def signatures(pieces: int) -> list[Material]:
    """Every signature with 2..pieces pieces and at least one piece a side, in build order."""
    out = [Material(wm, wk, bm, bk)
           for wm in range(pieces + 1) for wk in range(pieces + 1)
           for bm in range(pieces + 1) for bk in range(pieces + 1)
           if wm + wk >= 1 and bm + bk >= 1 and wm + wk + bm + bk <= pieces]
    out.sort(key=lambda m: (m.pieces, m.men, m))
    return out


def pairs(pieces: int) -> Iterator[Material]:
    """One signature of every colour pair, in build order."""
    seen: set[Material] = set()
    for m in signatures(pieces):
        if m not in seen:
            seen.add(m)
            seen.add(m.partner)
            yield m


def level(m: Material) -> tuple[int, int]:
    """Pairs of one level depend only on lower levels, so a level's pairs run in parallel."""
    return (m.pieces, m.men)
