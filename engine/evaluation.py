"""The learned evaluation from Python: its feature layout, feature rows for training, weights
files and the score of one position.

The core (``_fast/learned.pyx``) scores a position as a linear sum of features - pattern
tables over 4x4 windows, material, tempo, balance, formations, runaway men, king mobility and
king squares - each with a middlegame and an endgame weight blended by the phase (the men's
distance to promotion), with drawish material scaled toward zero. Parameters are ordered
feature by feature, middlegame then endgame: parameter ``2f`` and ``2f + 1`` of feature ``f``.

The tuner uses exactly this module::

    lay = layout("russian")
    indptr, indices, values = feature_rows("russian", white, black, kings, white_to_move)
    w = read_weights(default_weights_path("russian"), "russian")
    scores = np.add.reduceat(w[indices] * values, indptr[:-1])   # rows are never empty
    write_weights("new.dkw", "russian", w)

``sum(w[indices[j]] * values[j])`` over a row is the core's score of that position from the
side to move's point of view before rounding to whole hundredths.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import _core
from .position import Position
from .variants import Variant, get_variant
from .weights_file import SCALE, WeightsError, WeightsHeader, read_params, to_int16, write_params

EvalCore = _core.compiled("learned").EvalCore

__all__ = [
    "EVALUATIONS",
    "DEFAULT_EVALUATION",
    "Layout",
    "WeightsError",
    "layout",
    "feature_rows",
    "read_weights",
    "write_weights",
    "default_weights_path",
    "static_eval",
    "eval_core",
]

#: the evaluations an Engine can use: the learned one (weights files) and the hand-written one
EVALUATIONS = ("learned", "classic")
#: the evaluation of an Engine that names none (see README: Evaluation)
DEFAULT_EVALUATION = "classic"

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"

WeightsSource = "str | os.PathLike | np.ndarray | None"


@dataclass(frozen=True)
class Layout:
    """The parameters of one rule set's evaluation.

    ``groups`` lists (name, offset, size) in parameters, in order: "material", "trade",
    "tempo", "side_to_move", "balance", "formation", "runaway", "king_mobility",
    "king_square", "pattern:0", "pattern:1", ... Every feature has two parameters (middlegame,
    endgame). ``windows[t]`` are the squares of pattern table t (engine squares, digit 0
    first; digit value 2 white man, 1 empty or king, 0 black man); ``rotated_windows[t]`` the
    squares of the 180-degree turned window that reads the same table with colours swapped.
    The ``fingerprint`` changes whenever the meaning of a parameter changes.
    """

    variant_name: str
    size: int
    fingerprint: str
    n_params: int
    groups: list
    feature_names: dict
    windows: tuple
    rotated_windows: tuple
    phase_total: int
    scale: int

    def group_of(self, param: int) -> tuple[str, int]:
        """(group name, index within the group in parameters) of a parameter."""
        for name, offset, size in self.groups:
            if offset <= param < offset + size:
                return name, param - offset
        raise IndexError(f"parameter {param} is outside the layout ({self.n_params})")

    def param_name(self, param: int) -> str:
        """A readable name: ``material.men.mg``, ``pattern:3[1234].eg``, ``king_square[7].mg``."""
        group, i = self.group_of(param)
        phase = "mg" if i % 2 == 0 else "eg"
        feature = i // 2
        names = self.feature_names.get(group)
        if names:
            return f"{group}.{names[feature]}.{phase}"
        return f"{group}[{feature}].{phase}"

    def group_slice(self, name: str) -> slice:
        for group, offset, size in self.groups:
            if group == name:
                return slice(offset, offset + size)
        raise KeyError(name)


def _variant(variant: "str | Variant") -> Variant:
    return get_variant(variant)


@lru_cache(maxsize=None)
def _layout_core(name: str) -> EvalCore:
    return EvalCore(_core.core_rules(get_variant(name)))


@lru_cache(maxsize=None)
def _layout_of(name: str) -> Layout:
    info = _layout_core(name).info()
    description = {
        "format": "damka learned evaluation",
        "version": info["version"],
        "size": info["size"],
        "scale": info["scale"],
        "phase_total": info["phase_total"],
        "groups": [[g, n] for g, n in info["groups"]],
        "feature_names": {k: list(v) for k, v in info["feature_names"].items()},
        "windows": [list(w) for w in info["windows"]],
        "rotated_windows": [list(w) for w in info["rotated_windows"]],
        "blend": "(mg*phase + eg*(P-phase)) / P, phase = men's distance to promotion",
        "draws": "1v1 kings /16; 10x10 lone king vs <=3 with a king /2 or /32; "
                 "8x8 flying lone king vs <=2 /16",
    }
    text = json.dumps(description, sort_keys=True, separators=(",", ":"))
    fingerprint = hashlib.sha256(text.encode()).hexdigest()[:16]
    groups = []
    offset = 0
    for group, n in info["groups"]:
        groups.append((group, offset, 2 * n))
        offset += 2 * n
    return Layout(
        variant_name=name,
        size=info["size"],
        fingerprint=fingerprint,
        n_params=offset,
        groups=groups,
        feature_names=dict(info["feature_names"]),
        windows=tuple(info["windows"]),
        rotated_windows=tuple(info["rotated_windows"]),
        phase_total=info["phase_total"],
        scale=info["scale"],
    )


def layout(variant: "str | Variant") -> Layout:
    """The evaluation layout of a rule set (the house rule shares its rule set's)."""
    return _layout_of(_variant(variant).name)


def default_weights_path(variant: "str | Variant") -> Path:
    """The weights file shipped with the package for a rule set."""
    return WEIGHTS_DIR / f"{_variant(variant).name}.dkw"


def _header(lay: Layout) -> WeightsHeader:
    return WeightsHeader(lay.variant_name, lay.fingerprint, lay.n_params)


def read_weights(path: "str | os.PathLike", variant: "str | Variant") -> np.ndarray:
    """The weights of a file as float64 hundredths of a man, in layout order.

    Raises WeightsError when the file is missing, truncated, corrupt, or made for another rule
    set or layout."""
    lay = layout(variant)
    return read_params(path, _header(lay)).astype(np.float64) / SCALE


def write_weights(path: "str | os.PathLike", variant: "str | Variant", w: np.ndarray) -> None:
    """Write weights (float hundredths of a man, layout order); they are stored rounded to
    1/16 of a hundredth. ValueError when the length is wrong or a weight does not fit."""
    lay = layout(variant)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (lay.n_params,):
        raise ValueError(f"{lay.variant_name} needs {lay.n_params} weights, got shape {w.shape}")
    params = to_int16(w, _NameList(lay))
    write_params(path, _header(lay), params)


class _NameList:
    """Parameter names on demand (for error messages)."""

    def __init__(self, lay: Layout):
        self.lay = lay

    def __getitem__(self, i: int) -> str:
        return self.lay.param_name(i)


@lru_cache(maxsize=32)
def _loaded(name: str, path: str, mtime_ns: int, size: int) -> EvalCore:
    core = EvalCore(_core.core_rules(get_variant(name)))
    core.set_weights(read_params(path, _header(_layout_of(name))))
    return core


def eval_core(variant: "str | Variant", weights: WeightsSource = None) -> EvalCore:
    """The core's evaluation with weights: from the shipped file (None), a file, or an array
    of float weights. Files are read once and shared (read-only) by every caller."""
    name = _variant(variant).name
    if isinstance(weights, np.ndarray):
        lay = _layout_of(name)
        if weights.shape != (lay.n_params,):
            raise ValueError(f"{name} needs {lay.n_params} weights, got shape {weights.shape}")
        core = EvalCore(_core.core_rules(get_variant(name)))
        core.set_weights(to_int16(weights, _NameList(lay)))
        return core
    path = Path(default_weights_path(name) if weights is None else weights)
    try:
        stat = path.stat()
    except OSError:
        # let the reader produce the error message
        read_params(path, _header(_layout_of(name)))
        raise  # pragma: no cover - read_params raised already
    return _loaded(name, str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def static_eval(variant: "str | Variant", position: Position,
                weights: WeightsSource = None) -> int:
    """The core's learned score of one position: hundredths of a man, side to move's view."""
    core = eval_core(variant, weights)
    return core.evaluate(position.white, position.black, position.kings,
                         position.white_to_move)


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
    core = _layout_core(_variant(variant).name)
    w = np.ascontiguousarray(white, dtype=np.uint64)
    b = np.ascontiguousarray(black, dtype=np.uint64)
    k = np.ascontiguousarray(kings, dtype=np.uint64)
    stm = np.ascontiguousarray(white_to_move, dtype=np.uint8)
    if not (w.ndim == b.ndim == k.ndim == stm.ndim == 1):
        raise ValueError("white, black, kings and white_to_move must be 1-d arrays")
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
