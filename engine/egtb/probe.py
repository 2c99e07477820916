"""Probing the databases of one rule set: the value of a position, and the moves that keep it.

A value is the game-theoretic result for the side to move without the move-count draw rules,
with the distance in plies to the next conversion (a capture or a crowning) under best play:
the winner hurries to convert, the loser delays. ``within(limit)`` says whether a win still
counts when a draw rule leaves only ``limit`` plies for it (see docs/egtb.md).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, NamedTuple

from ..move import Move
from ..position import Position
from ..threads import max_threads
from ..variants import Variant
from .builder import solver

if TYPE_CHECKING:
    from ..board import Board
from .material import Material, material_of_file
from .paths import variant_dir
from .storage import SUFFIX, EgtbError, TableFile

WIN, DRAW, LOSS = 1, 0, -1
#: stored byte of a loss in 0 plies (see storage.py)
LOSS_BASE = 128


class EgtbValue(NamedTuple):
    """``result`` for the side to move (1 win, 0 draw, -1 loss) and ``plies`` to the next
    capture or crowning under best play (0 for a draw, and for a loss with no move left)."""

    result: int
    plies: int

    @classmethod
    def from_byte(cls, v: int) -> "EgtbValue":
        if v == 0:
            return cls(DRAW, 0)
        if v < LOSS_BASE:
            return cls(WIN, v)
        return cls(LOSS, v - LOSS_BASE)

    def within(self, limit: int | None) -> "EgtbValue":
        """This value when a draw rule ends the game after ``limit`` more plies: a win (or a
        loss) that takes longer than that to convert is a draw."""
        if limit is None or self.result == DRAW or self.plies <= limit:
            return self
        return EgtbValue(DRAW, 0)

    def __str__(self) -> str:
        if self.result == DRAW:
            return "draw"
        word = "win" if self.result == WIN else "loss"
        return f"{word} ({self.plies} plies to conversion)"


class Tablebase:
    """The database files of one rule set found in a directory (every complete slice)."""

    def __init__(self, variant: Variant, directory: "str | os.PathLike[str] | None" = None,
                 cache_blocks: int = 256):
        self.variant = variant
        self.folder = variant_dir(directory, variant.name)
        self._solver = solver(variant)
        self._files: dict[Material, TableFile] = {}
        self._memory = None
        self._memory_lock = threading.Lock()
        if self.folder.is_dir():
            for path in sorted(self.folder.glob(f"*{SUFFIX}")):
                m = material_of_file(path, SUFFIX)
                self._files[m] = TableFile(path, variant.name, m, self._solver.slice_size(*m),
                                           cache_blocks)
        self.pieces = _complete_pieces(set(self._files))

    @property
    def materials(self) -> list[Material]:
        return sorted(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def covers(self, position: Position) -> bool:
        """Whether the position's slice is loaded."""
        sig, _ = self._solver.index(position.white, position.black, position.kings,
                                    position.white_to_move)
        return sig is not None and Material(*sig) in self._files

    def probe(self, position: Position) -> EgtbValue | None:
        """The stored value for the side to move, or None when the slice is not loaded."""
        sig, index = self._solver.index(position.white, position.black, position.kings,
                                        position.white_to_move)
        if sig is None:
            return EgtbValue(LOSS, 0) if not position.pieces(position.white_to_move) else None
        f = self._files.get(Material(*sig))
        if f is None or index < 0:
            return None
        return EgtbValue.from_byte(f.value(index))

    def best_moves(self, board: "Board", all_moves: bool = False
                   ) -> list[tuple[Move, EgtbValue]]:
        """The legal moves that keep the position's value (with ``all_moves`` every legal
        move), each with its value for the mover: fastest conversion first for a win, slowest
        for a loss. Empty when the position or a successor is not covered."""
        scored = []
        for move in board.legal_moves:
            v = self.probe(board.position_after(move))
            if v is None:
                return []
            converts = bool(move.captured) or move.promotes
            plies = 1 + (0 if converts else v.plies)
            scored.append((move, EgtbValue(-v.result, plies if v.result != DRAW else 0)))
        if not scored or all_moves:
            return scored
        best = max(r.result for _, r in scored)
        keep = [(m, r) for m, r in scored if r.result == best]
        if best == WIN:
            keep.sort(key=lambda x: x[1].plies)
        elif best == LOSS:
            keep.sort(key=lambda x: -x[1].plies)
        return keep

    @property
    def entries(self) -> int:
        """Index entries of every loaded file: the bytes ``memory_solver`` takes."""
        return sum(f.entries for f in self._files.values())

    def memory_solver(self, on_progress: "Callable[[int, int], None] | None" = None):
        """A C solver holding every table decompressed (what the search probes): memory is
        one byte per index entry of every file. The files are decompressed on every core
        (zlib lets go of the GIL): an 8x8 set up to 6 pieces is 2.7 GB of tables, about 20 s
        of work, so ``on_progress(entries loaded, entries in all)`` is called after each file
        (not at all when the tables are in memory already)."""
        with self._memory_lock:  # engines of several threads share one Tablebase
            if self._memory is None:
                s = solver(self.variant)
                files = list(self._files.items())
                total, done = self.entries, 0
                with ThreadPoolExecutor(max_workers=max(1, min(len(files), max_threads())),
                                        thread_name_prefix="damka-egtb-load") as pool:
                    for (m, _), table in zip(files, pool.map(lambda mf: mf[1].table(), files)):
                        s.add(tuple(m), table)
                        done += len(table)
                        if on_progress is not None:
                            on_progress(done, total)
                self._memory = s
            return self._memory

    @property
    def max_pieces(self) -> int:
        """The most pieces of any loaded slice."""
        return max((m.pieces for m in self._files), default=0)

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()


def _complete_pieces(have: set[Material]) -> int:
    """The largest N such that every slice with up to N pieces is present (0 if none)."""
    from .material import signatures

    n = 0
    for k in range(2, 8):
        if all(m in have for m in signatures(k)):
            n = k
        else:
            break
    return n


_SHARED: dict[tuple[Variant, str], Tablebase] = {}
_SHARED_LOCK = threading.Lock()


def shared_tablebase(variant: Variant, directory: "str | os.PathLike[str] | None" = None
                     ) -> Tablebase | None:
    """One Tablebase per rule set and directory for the whole process (engines share its
    tables in memory); None when the directory holds no files for the rule set or the rule
    set is played with the house rule (the databases are for forced captures)."""
    if not variant.forced_capture:
        return None
    folder = variant_dir(directory, variant.name)
    key = (variant, str(folder))
    with _SHARED_LOCK:
        tb = _SHARED.get(key)
        if tb is None:
            if not folder.is_dir() or not any(folder.glob(f"*{SUFFIX}")):
                return None
            tb = Tablebase(variant, directory)
            _SHARED[key] = tb
        return tb
