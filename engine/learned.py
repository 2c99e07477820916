"""The learned evaluation as an engine uses it: the weights it plays with (its layout is
engine.eval_layout's).

Kept free of numpy so that starting an engine stays quick; the training API on top of it
(feature rows, float weights) is ``engine.evaluation``. The core is ``_fast/learned.pyx``:
a linear sum of features - pattern tables over 4x4 windows and edge strips, material, tempo,
balance, formations, runaway men, king mobility and king squares - each with a middlegame and
an endgame weight blended by the phase (the men's distance to promotion), with drawish
material scaled toward zero. Parameters are ordered feature by feature, middlegame then endgame:
parameters ``2f`` and ``2f + 1`` belong to feature ``f``.
"""

from __future__ import annotations

import os
import sys
from array import array
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from . import _core
from .eval_layout import EvalCore, Layout, layout, layout_core, rule_set, weights_header
from .variants import Variant, as_variant
from .weights_file import WeightsError, read_params, read_stored_params
from .weights_upgrade import legacy_hint

__all__ = [
    "EVALUATIONS",
    "DEFAULT_EVALUATION",
    "WEIGHTS_DIR",
    "Layout",
    "EvalCore",
    "layout",
    "weights_header",
    "read_layout_params",
    "default_weights_path",
    "load_weights",
    "core_with_params",
    "params_evaluation",
]

#: the evaluations an Engine can use: the learned one (weights files) and the hand-written one
EVALUATIONS = ("learned", "classic")
#: the evaluation of an Engine that names none: the trained weights beat the hand-written
#: evaluation (docs/training.md; `damka match --engine "damka eval=classic" ...`), so learned
DEFAULT_EVALUATION = "learned"

#: the weights files shipped with the package, one per rule set
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


def read_layout_params(variant: "str | Variant", path: "str | os.PathLike[str]",
                       trailing_zeros: bool = True) -> bytes:
    """A weights file's parameters (little-endian int16 bytes) in the rule set's layout, or
    without ``trailing_zeros`` only those up to the last the file stores (the rest are zero);
    WeightsError naming the file, and saying how to upgrade one of an earlier layout."""
    read = read_params if trailing_zeros else read_stored_params
    try:
        return read(path, weights_header(variant))
    except WeightsError as exc:
        hint = legacy_hint(variant, path)
        if not hint:
            raise
        raise WeightsError(f"{exc}{hint}") from None


def default_weights_path(variant: "str | Variant") -> Path:
    """The weights file shipped with the package for a rule set."""
    return WEIGHTS_DIR / f"{as_variant(variant).name}.dkw"


def core_with_params(variant: "str | Variant", raw: bytes) -> EvalCore:
    """An EvalCore of the rule set holding parameters given as little-endian int16 bytes."""
    return _core_with(variant, _int16s(raw))


def _core_with(variant: "str | Variant", params: array) -> EvalCore:
    core = EvalCore(_core.core_rules(as_variant(variant)))
    core.set_weights(params)
    return core


def _int16s(raw: bytes) -> array:
    """Little-endian int16 bytes (a weights file's order) as an array of this machine's."""
    params = array("h")
    params.frombytes(raw)
    if sys.byteorder == "big":
        params.byteswap()
    return params


@lru_cache(maxsize=None)
def material_core(variant: "str | Variant") -> EvalCore:
    """An evaluation of material alone (a man 100, a king engine.levels.king_worth men), for
    the weaker levels' safety check; every other weight is zero."""
    from .levels import king_worth

    v = as_variant(variant)
    core = EvalCore(_core.core_rules(v))
    params = array("h", bytes(2 * core.n_params))
    king = 100 * king_worth(v) * 16  # weights are stored in 1/16 of a hundredth
    # the material group comes first: men, first king, second king, further kings, each with
    # a middlegame and an endgame weight
    for feature, weight in enumerate((100 * 16, king, king, king)):
        params[2 * feature] = params[2 * feature + 1] = weight
    core.set_weights(params)
    return core


class _Loaded(NamedTuple):
    """A weights file as read once: the core's evaluation and what a man is worth in it."""

    core: EvalCore
    man_worth: float


@lru_cache(maxsize=32)
def _loaded(variant: Variant, path: str, mtime_ns: int, size: int) -> _Loaded:
    # (the trailing zeros, most of a file's parameters, are left to the core's zeroed memory)
    return _evaluation(variant, _int16s(read_layout_params(variant, path, trailing_zeros=False)))


def _evaluation(variant: "str | Variant", params: array) -> _Loaded:
    # a man's worth: the mean of the men's middlegame and endgame weights, the first two
    # parameters, stored in 1/16 of a hundredth
    return _Loaded(_core_with(variant, params), sum(params[:2]) / 2 / 16)


def params_evaluation(variant: "str | Variant", raw: bytes) -> tuple[EvalCore, float]:
    """The evaluation of parameters given as little-endian int16 bytes in the layout's order
    (a tuner's trial weights, not a file) and what a man is worth in it."""
    loaded = _evaluation(variant, _int16s(raw))
    return loaded.core, loaded.man_worth


def _file_key(variant: "str | Variant",
              path: "str | os.PathLike[str] | None") -> tuple[Variant, str, int, int]:
    """(rule set, resolved file, mtime, size): a weights file's identity for the caches."""
    rules = rule_set(as_variant(variant))
    file = Path(default_weights_path(rules) if path is None else path)
    try:
        stat = file.stat()
    except OSError:
        read_layout_params(rules, file)  # raises the WeightsError naming the file
        stat = file.stat()
    return rules, str(file.resolve()), stat.st_mtime_ns, stat.st_size


def load_weights(variant: "str | Variant",
                 path: "str | os.PathLike[str] | None" = None) -> EvalCore:
    """The core's evaluation with the weights of a file (None: the shipped one). A file is
    read once and shared, read-only, by every engine; WeightsError when it does not fit."""
    return _loaded(*_file_key(variant, path)).core


def man_worth(variant: "str | Variant", path: "str | os.PathLike[str] | None" = None) -> float:
    """What a man is worth in a weights file's units: the mean of the men's middlegame and
    endgame weights (a trained file learns its own scale; the classic evaluation's is 100)."""
    return _loaded(*_file_key(variant, path)).man_worth
