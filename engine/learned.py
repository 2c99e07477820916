"""The learned evaluation as an engine uses it: its feature layout and the weights it plays with.

Kept free of numpy so that starting an engine stays quick; the training API on top of it
(feature rows, float weights) is ``engine.evaluation``. The core is ``_fast/learned.pyx``:
a linear sum of features - pattern tables over 4x4 windows, material, tempo, balance,
formations, runaway men, king mobility and king squares - each with a middlegame and an
endgame weight blended by the phase (the men's distance to promotion), with drawish material
scaled toward zero. Parameters are ordered feature by feature, middlegame then endgame:
parameters ``2f`` and ``2f + 1`` belong to feature ``f``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from .variants import Variant, as_variant
from .weights_file import WeightsHeader, read_params

if TYPE_CHECKING:
    class EvalCore:
        """The compiled core's evaluation tables (_fast/learned.pyx), as the type checker
        sees them."""

        def __init__(self, *args: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
else:
    EvalCore = _core.compiled("learned").EvalCore

__all__ = [
    "EVALUATIONS",
    "DEFAULT_EVALUATION",
    "WEIGHTS_DIR",
    "Layout",
    "EvalCore",
    "layout",
    "weights_header",
    "default_weights_path",
    "load_weights",
    "core_with_params",
]

#: the evaluations an Engine can use: the learned one (weights files) and the hand-written one
EVALUATIONS = ("learned", "classic")
#: the evaluation of an Engine that names none: the trained weights beat the hand-written
#: evaluation (docs/training.md; `damka match --engine "damka eval=classic" ...`), so learned
DEFAULT_EVALUATION = "learned"

#: the weights files shipped with the package, one per rule set
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


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
    groups: list[tuple[str, int, int]]
    feature_names: dict[str, tuple[str, ...]]
    windows: tuple[tuple[int, ...], ...]
    rotated_windows: tuple[tuple[int, ...], ...]
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
        """The parameters of a group."""
        for group, offset, size in self.groups:
            if group == name:
                return slice(offset, offset + size)
        raise KeyError(name)


def _rule_set(variant: Variant) -> Variant:
    """The record the layouts and weights files are kept by: the house rule shares its rule
    set's (the caches below are keyed by this record, never by a name to look up again)."""
    return variant.with_forced_capture(True)


def layout_core(variant: Variant) -> EvalCore:
    """The core's layout of a rule set, without weights (feature rows need no more)."""
    return _layout_core(_rule_set(variant))


@lru_cache(maxsize=None)
def _layout_core(rules: Variant) -> EvalCore:
    return EvalCore(_core.core_rules(rules))


@lru_cache(maxsize=None)
def _layout_of(variant: Variant) -> Layout:
    info = _layout_core(variant).info()
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
    groups = []
    offset = 0
    for group, n in info["groups"]:
        groups.append((group, offset, 2 * n))
        offset += 2 * n
    return Layout(
        variant_name=variant.name,
        size=info["size"],
        fingerprint=hashlib.sha256(text.encode()).hexdigest()[:16],
        n_params=offset,
        groups=groups,
        feature_names=dict(info["feature_names"]),
        windows=tuple(info["windows"]),
        rotated_windows=tuple(info["rotated_windows"]),
        phase_total=info["phase_total"],
        scale=info["scale"],
    )


def layout(variant: "str | Variant") -> Layout:
    """The evaluation layout of a rule set (the house rule shares its rule set's).

    This module's public functions take a Variant or a rule-set name (the training API is
    used with names); the engine passes its record."""
    return _layout_of(_rule_set(as_variant(variant)))


def weights_header(variant: "str | Variant") -> WeightsHeader:
    """What a weights file of the rule set (a Variant or a name) must say about itself."""
    lay = layout(variant)
    return WeightsHeader(lay.variant_name, lay.fingerprint, lay.n_params)


def default_weights_path(variant: "str | Variant") -> Path:
    """The weights file shipped with the package for a rule set."""
    return WEIGHTS_DIR / f"{as_variant(variant).name}.dkw"


def core_with_params(variant: "str | Variant", raw: bytes) -> EvalCore:
    """An EvalCore of the rule set holding parameters given as little-endian int16 bytes."""
    params = array("h")
    params.frombytes(raw)
    if sys.byteorder == "big":
        params.byteswap()
    core = EvalCore(_core.core_rules(as_variant(variant)))
    core.set_weights(params)
    return core


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


@lru_cache(maxsize=32)
def _loaded(variant: Variant, path: str, mtime_ns: int, size: int) -> EvalCore:
    return core_with_params(variant, read_params(path, weights_header(variant)))


def _file_key(variant: "str | Variant",
              path: "str | os.PathLike[str] | None") -> tuple[Variant, str, int, int]:
    """(rule set, resolved file, mtime, size): a weights file's identity for the caches."""
    rules = _rule_set(as_variant(variant))
    file = Path(default_weights_path(rules) if path is None else path)
    try:
        stat = file.stat()
    except OSError:
        read_params(file, weights_header(rules))  # raises the WeightsError naming the file
        stat = file.stat()
    return rules, str(file.resolve()), stat.st_mtime_ns, stat.st_size


def load_weights(variant: "str | Variant",
                 path: "str | os.PathLike[str] | None" = None) -> EvalCore:
    """The core's evaluation with the weights of a file (None: the shipped one). A file is
    read once and shared, read-only, by every engine; WeightsError when it does not fit."""
    return _loaded(*_file_key(variant, path))


def man_worth(variant: "str | Variant", path: "str | os.PathLike[str] | None" = None) -> float:
    """What a man is worth in a weights file's units: the mean of the men's middlegame and
    endgame weights (a trained file learns its own scale; the classic evaluation's is 100)."""
    return _man_worth(*_file_key(variant, path))


@lru_cache(maxsize=32)
def _man_worth(variant: Variant, path: str, mtime_ns: int, size: int) -> float:
    params = array("h")
    params.frombytes(read_params(path, weights_header(variant))[:4])
    if sys.byteorder == "big":
        params.byteswap()
    return (params[0] + params[1]) / 2 / 16  # stored in 1/16 of a hundredth
