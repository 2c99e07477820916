"""The door to the learned evaluation (``engine.evaluation``) for training.

Turns stored positions into the sparse design matrix of the evaluation's features, and says
which weights an engine plays with (file, content hash, feature-layout fingerprint) for the
self-play metadata. Every use of ``engine.evaluation`` in ``protocol.training`` goes through
here, so a tree without it fails with one clear message.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
from scipy import sparse

from engine.variants import Variant

from .data import file_sha256

__all__ = ["evaluation", "design_matrix", "static_scores", "weights_info", "BATCH"]

#: positions turned into feature rows at a time (bounds the temporary memory)
BATCH = 250_000


def evaluation():
    """The ``engine.evaluation`` module; ValueError when this damka has none."""
    try:
        return importlib.import_module("engine.evaluation")
    except ImportError as exc:
        raise ValueError(f"this damka has no learned evaluation (engine.evaluation: {exc})"
                         ) from None


def design_matrix(variant: Variant, white: np.ndarray, black: np.ndarray, kings: np.ndarray,
                  white_to_move: np.ndarray, progress: Callable[[int], None] | None = None
                  ) -> sparse.csr_matrix:
    """One CSR row of feature values per position (``row @ w`` is the evaluation from the
    side to move, hundredths of a man), built in batches of BATCH positions."""
    ev = evaluation()
    n_params = ev.layout(variant).n_params
    blocks = []
    for start in range(0, len(white), BATCH):
        part = slice(start, start + BATCH)
        indptr, indices, values = ev.feature_rows(
            variant, np.ascontiguousarray(white[part], np.uint64),
            np.ascontiguousarray(black[part], np.uint64),
            np.ascontiguousarray(kings[part], np.uint64),
            np.ascontiguousarray(white_to_move[part], np.bool_))
        rows = len(indptr) - 1
        blocks.append(sparse.csr_matrix(
            (np.asarray(values, np.float64), np.asarray(indices), np.asarray(indptr)),
            shape=(rows, n_params)))
        if progress is not None:
            progress(rows)
    if not blocks:
        return sparse.csr_matrix((0, n_params), dtype=np.float64)
    return sparse.vstack(blocks, format="csr")


def static_scores(variant: Variant, white: np.ndarray, black: np.ndarray, kings: np.ndarray,
                  white_to_move: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The engine's static score of each position with ``weights`` (what its search reads),
    from the side to move in hundredths of a man (one call into the core: about 0.2 us a
    position, so millions take a second)."""
    return evaluation().static_evals(variant, white, black, kings, white_to_move,
                                     np.asarray(weights, np.float64)).astype(np.float64)


def weights_info(variant: Variant, path: "str | None") -> dict[str, Any]:
    """Which evaluation an engine of ``variant`` plays with: the weights file given, or the
    engine's default (the shipped weights, or the hand-written evaluation), with the file's
    sha256 and the layout fingerprint. A bad weights file fails here, before any game."""
    ev = evaluation()
    if path is None:
        name = ev.DEFAULT_EVALUATION
        if name != "learned":
            return {"evaluation": name, "file": None, "sha256": None, "layout": None}
        file = Path(ev.default_weights_path(variant))
    else:
        file = Path(path)
    ev.read_weights(file, variant)
    return {"evaluation": "learned", "file": "default" if path is None else str(path),
            "sha256": file_sha256(file), "layout": str(ev.layout(variant).fingerprint)}
