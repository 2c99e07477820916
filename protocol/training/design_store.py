"""The design matrix of a fit on disk, in blocks of rows, memory-mapped: the fit of tens of
millions of positions never holds the matrix in memory (the operating system pages the blocks
in and out), and a fit that is run again with other settings reads the same files.

A store is a directory of blocks ``block-00000.indptr.npy``, ``.indices.npy`` (int32 columns)
and ``.values.npy`` (float32, as ``engine.evaluation.feature_rows`` gives them; products are
summed in float64) and a ``store.json`` saying the shape, the blocks and which positions they
were made from (a fingerprint of the masks and the layout), so that a store is reused only
for the same positions. It offers what the fit needs: ``x @ w``, ``x.T @ r``, ``x.shape``
and per-column counts and sums of squares, the same as a ``scipy.sparse`` CSR matrix.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
from scipy import sparse

from engine.durable import replace_bytes
from engine.variants import Variant

from .data import DataError

__all__ = ["DesignStore", "BLOCK_ROWS", "column_stats"]

#: rows of one block: about 60 entries a row, so some 120 MB of int32 + float32 a block
BLOCK_ROWS = 250_000
_FORMAT = "damka-design"
_VERSION = 1


def positions_fingerprint(variant: Variant, white: np.ndarray, black: np.ndarray,
                          kings: np.ndarray, white_to_move: np.ndarray) -> str:
    """What a store's rows were made from: the rule set's layout and the masks, hashed."""
    from .features import evaluation

    digest = hashlib.sha256(evaluation().layout(variant).fingerprint.encode())
    for array, dtype in ((white, np.uint64), (black, np.uint64), (kings, np.uint64),
                         (white_to_move, np.bool_)):
        digest.update(np.ascontiguousarray(array, dtype).tobytes())
    return digest.hexdigest()[:32]


#: the files a store is made of (and the temporary ones of its store.json)
_OURS = re.compile(r"block-\d{5}\.(?:values|indices|indptr)\.npy|store\.json(?:\.[0-9a-f]+\.tmp)?")


def _check_ours(directory: Path) -> None:
    """Refuse to replace a directory that holds anything a store is not made of: --design-dir
    pointed at a folder of other files (self-play data, say) must not lose them."""
    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory, so not one of the features' stores")
    others = sorted(p.name for p in directory.iterdir() if not _OURS.fullmatch(p.name))
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise DataError(f"{directory} holds files that are not the features' ({shown}): "
                        "--design-dir must name a folder of its own")


class DesignStore:
    """Row blocks of one design matrix in ``directory`` (see the module's docstring)."""

    def __init__(self, directory: Path, shape: tuple[int, int], blocks: list[int],
                 fingerprint: str):
        self.directory = directory
        self.shape = shape
        self.block_rows = blocks  #: rows of each block
        self.fingerprint = fingerprint
        self._blocks: list[sparse.csr_matrix] | None = None

    # -- making and opening ------------------------------------------------------------------

    @classmethod
    def build(cls, directory: "str | Path", variant: Variant, white: np.ndarray,
              black: np.ndarray, kings: np.ndarray, white_to_move: np.ndarray,
              progress: Callable[[int], None] | None = None,
              block_rows: int = BLOCK_ROWS) -> "DesignStore":
        """The store of these positions' feature rows: the one in ``directory`` when it was
        made from the same positions, else a new one written there (whatever was there is
        replaced). ``progress(rows)`` after each block."""
        from .features import evaluation

        directory = Path(directory)
        fingerprint = positions_fingerprint(variant, white, black, kings, white_to_move)
        found = cls.open(directory)
        if found is not None and found.fingerprint == fingerprint:
            if progress is not None:
                progress(found.shape[0])
            return found
        if directory.exists():
            _check_ours(directory)
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        ev = evaluation()
        n_params = ev.layout(variant).n_params
        blocks = []
        for number, start in enumerate(range(0, len(white), block_rows)):
            part = slice(start, start + block_rows)
            indptr, indices, values = ev.feature_rows(
                variant, white[part], black[part], kings[part], white_to_move[part],
                dtype=np.float32)
            for name, array in (("indptr", indptr), ("indices", indices), ("values", values)):
                np.save(directory / f"block-{number:05d}.{name}.npy", array)
            blocks.append(len(indptr) - 1)
            if progress is not None:
                progress(blocks[-1])
        store = cls(directory, (len(white), n_params), blocks, fingerprint)
        meta = {"format": _FORMAT, "version": _VERSION, "shape": list(store.shape),
                "blocks": blocks, "fingerprint": fingerprint}
        replace_bytes(directory / "store.json", json.dumps(meta).encode())  # written last
        return store

    @classmethod
    def open(cls, directory: "str | Path") -> "DesignStore | None":
        """The complete store in ``directory``, or None (none there, or an unfinished one)."""
        directory = Path(directory)
        try:
            meta = json.loads((directory / "store.json").read_text())
        except (OSError, ValueError):
            return None
        if meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
            return None
        return cls(directory, tuple(meta["shape"]), list(meta["blocks"]), meta["fingerprint"])

    # -- the matrix --------------------------------------------------------------------------

    def blocks(self) -> Iterator[sparse.csr_matrix]:
        """The row blocks in order, as CSR matrices over the memory-mapped files."""
        if self._blocks is None:
            self._blocks = []
            for number, rows in enumerate(self.block_rows):
                stem = self.directory / f"block-{number:05d}"
                arrays = [np.load(f"{stem}.{name}.npy", mmap_mode="r")
                          for name in ("values", "indices", "indptr")]
                self._blocks.append(sparse.csr_matrix(tuple(arrays), shape=(rows, self.shape[1]),
                                                      copy=False))
        return iter(self._blocks)

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        """``X @ w`` in float64."""
        w = np.asarray(w, np.float64)
        out = np.empty(self.shape[0], np.float64)
        start = 0
        for block in self.blocks():
            out[start:start + block.shape[0]] = block @ w
            start += block.shape[0]
        return out

    @property
    def T(self) -> "_Transposed":
        return _Transposed(self)

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``X.T @ r`` in float64."""
        r = np.asarray(r, np.float64)
        out = np.zeros(self.shape[1], np.float64)
        start = 0
        for block in self.blocks():
            out += block.T @ r[start:start + block.shape[0]]
            start += block.shape[0]
        return out


class _Transposed:
    """``store.T``: only what ``store.T @ r`` needs."""

    def __init__(self, store: DesignStore):
        self.store = store
        self.shape = store.shape[::-1]

    def __matmul__(self, r: np.ndarray) -> np.ndarray:
        return self.store.rmatvec(r)


def column_stats(x: "sparse.csr_matrix | DesignStore") -> tuple[np.ndarray, np.ndarray]:
    """Per column: the rows it is non-zero in, and the sum of its squared values."""
    n_params = x.shape[1]
    counts = np.zeros(n_params, np.int64)
    squares = np.zeros(n_params, np.float64)
    blocks = x.blocks() if isinstance(x, DesignStore) else [sparse.csr_matrix(x)]
    for block in blocks:
        counts += np.bincount(block.indices, minlength=n_params)
        squares += np.bincount(block.indices, weights=np.asarray(block.data, np.float64) ** 2,
                               minlength=n_params)
    return counts, squares
