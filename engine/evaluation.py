"""The learned evaluation for training: feature rows, float weights, weights files and the
score of one position (numpy arrays; engine.learned is the numpy-free part engines load).

The tuner uses exactly this module::

    lay = layout("russian")                  # .fingerprint, .n_params, .groups
    indptr, indices, values = feature_rows("russian", white, black, kings, white_to_move)
    w = read_weights(default_weights_path("russian"), "russian")
    scores = np.add.reduceat(w[indices] * values, indptr[:-1])   # rows are never empty
    rounded = static_evals("russian", white, black, kings, white_to_move)   # the core's own
    write_weights("new.dkw", "russian", w)

``sum(w[indices[j]] * values[j])`` over a row is the core's score of that position from the
side to move's point of view before rounding to whole hundredths. Every function takes the rule
set as a Variant or a name (as above); a name is looked up, a Variant used as it is.
"""

from __future__ import annotations

import os

import numpy as np

from .eval_layout import EvalCore, Layout, layout, layout_core, weights_header
from .learned import (
    DEFAULT_EVALUATION,
    EVALUATIONS,
    core_with_params,
    default_weights_path,
    load_weights,
    read_layout_params,
)
from .position import Position
from .variants import Variant, as_variant
from .weights_file import SCALE, WeightsError, write_params

__all__ = [
    "EVALUATIONS",
    "DEFAULT_EVALUATION",
    "Layout",
    "WeightsError",
    "layout",
    "feature_rows",
    "read_weights",
    "write_weights",
    "params_bytes",
    "default_weights_path",
    "static_eval",
    "static_evals",
    "eval_core",
]

_INT16_MAX = 32767


def _to_int16(variant: "str | Variant", w: np.ndarray, leading: bool = False) -> np.ndarray:
    """Float weights (hundredths of a man) as the stored int16; ValueError naming the first
    weight that does not fit (|w| > 2047.9) or a wrong length (with ``leading``, any length
    up to the layout's: the first weights, the rest zero)."""
    lay = layout(variant)
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 1 or len(w) > lay.n_params or (not leading and len(w) != lay.n_params):
        raise ValueError(f"{lay.variant_name} needs {lay.n_params} weights, got shape {w.shape}")
    scaled = np.rint(w * SCALE)
    bad = np.flatnonzero(~np.isfinite(scaled) | (np.abs(scaled) > _INT16_MAX))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{lay.param_name(i)} = {w[i]!r} does not fit a weights file "
                         f"(|w| <= {_INT16_MAX / SCALE:.1f} hundredths); "
                         f"{bad.size} weight(s) out of range")
    return scaled.astype("<i2")


def read_weights(path: "str | os.PathLike", variant: "str | Variant") -> np.ndarray:
    """The weights of a file as float64 hundredths of a man, in layout order.

    Raises WeightsError when the file is missing, truncated, corrupt, or made for another rule
    set or layout."""
    raw = read_layout_params(variant, path)
    return np.frombuffer(raw, dtype="<i2").astype(np.float64) / SCALE


def write_weights(path: "str | os.PathLike", variant: "str | Variant", w: np.ndarray) -> None:
    """Write weights (float hundredths of a man, layout order); they are stored rounded to
    1/16 of a hundredth. ValueError when the length is wrong or a weight does not fit."""
    write_params(path, weights_header(variant), _to_int16(variant, w).tobytes())


def params_bytes(variant: "str | Variant", w: np.ndarray) -> bytes:
    """Float weights as an engine takes them in memory (``Engine.set_weights``): the int16
    bytes a weights file stores. ``w`` may hold only the layout's first weights (the rest
    are zero: a tuner that leaves the wide tables' millions of zeros out converts in a
    millisecond instead of a fifth of a second); ValueError as ``write_weights``."""
    return _to_int16(variant, w, leading=True).tobytes()


def eval_core(variant: "str | Variant",
              weights: "str | os.PathLike | np.ndarray | None" = None) -> EvalCore:
    """The core's evaluation with weights: the shipped file (None), a file, or an array of
    float weights (hundredths of a man, layout order)."""
    if isinstance(weights, np.ndarray):
        return core_with_params(variant, params_bytes(variant, weights))
    return load_weights(variant, weights)


def static_eval(variant: "str | Variant", position: Position,
                weights: "str | os.PathLike | np.ndarray | None" = None) -> int:
    """The core's learned score of one position: hundredths of a man, side to move's view."""
    core = eval_core(variant, weights)
    return core.evaluate(position.white, position.black, position.kings,
                         position.white_to_move)


def static_evals(variant: "str | Variant", white, black, kings, white_to_move,
                 weights: "str | os.PathLike | np.ndarray | None" = None) -> np.ndarray:
    """The core's scores of N positions (engine masks as in feature_rows) as int32, side to
    move's view; ValueError names a row whose masks are no position."""
    core = eval_core(variant, weights)
    w, b, k, stm = _masks(white, black, kings, white_to_move)
    out = np.empty(w.shape[0], dtype=np.int32)
    core.evaluate_rows(w, b, k, stm, out)
    return out


def _masks(white, black, kings, white_to_move) -> tuple[np.ndarray, ...]:
    w = np.ascontiguousarray(white, dtype=np.uint64)
    b = np.ascontiguousarray(black, dtype=np.uint64)
    k = np.ascontiguousarray(kings, dtype=np.uint64)
    stm = np.ascontiguousarray(white_to_move, dtype=np.uint8)
    if not (w.ndim == b.ndim == k.ndim == stm.ndim == 1):
        raise ValueError("white, black, kings and white_to_move must be 1-d arrays")
    if not (w.shape == b.shape == k.shape == stm.shape):
        raise ValueError("white, black, kings and white_to_move differ in length")
    return w, b, k, stm


def feature_rows(variant: "str | Variant", white, black, kings, white_to_move,
                 dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse feature rows of N positions (CSR): ``(indptr int64[N+1], indices int32[nnz],
    values dtype[nnz])``.

    Inputs are arrays of N engine masks (uint64, bit s = square s) and side to move (bool).
    ``sum(w[indices[j]] * values[j] for j in row)`` equals the core's score of the row's
    position (side to move's view, before rounding) for weights ``w`` in hundredths; the
    phase blend and the drawish scale are folded into the values. A parameter may appear more
    than once in a row (the values add). ValueError names a row whose masks are no position.
    """
    core = layout_core(as_variant(variant))
    w, b, k, stm = _masks(white, black, kings, white_to_move)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError("dtype must be float32 or float64")
    n = w.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    core.count_rows(w, b, k, stm, indptr)
    nnz = int(indptr[-1])
    indices = np.empty(nnz, dtype=np.int32)
    values = np.empty(nnz, dtype=dtype)
    core.fill_rows(w, b, k, stm, indptr, indices, values)
    return indptr, indices, values
