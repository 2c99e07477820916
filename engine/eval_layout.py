"""The learned evaluation's layout: which parameter means what, and the fingerprint that names it.

A weights file carries the fingerprint of the layout it was made for (engine/weights_file.py);
the engine reads only files of its own layout. The layout comes from the compiled core
(``_fast/learned.pyx``, ``EvalCore.info``); engine.learned holds the weights an engine plays
with, engine.weights_upgrade carries files of earlier layouts over.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from . import _core
from .variants import Variant, as_variant
from .weights_file import WeightsHeader

if TYPE_CHECKING:
    class EvalCore:
        """The compiled core's evaluation tables (_fast/learned.pyx), as the type checker
        sees them."""

        def __init__(self, *args: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
else:
    EvalCore = _core.compiled("learned").EvalCore

__all__ = ["EvalCore", "Layout", "layout", "layout_core", "rule_set", "describe", "fingerprint",
           "weights_header"]


@dataclass(frozen=True)
class Layout:
    """The parameters of one rule set's evaluation.

    ``groups`` lists (name, offset, size) in parameters, in order: "material", "trade",
    "tempo", "side_to_move", "balance", "formation", "runaway", "king_mobility",
    "king_square", "pattern:0", "pattern:1", ... Every feature has two parameters (middlegame,
    endgame). ``windows[t]`` are the squares of pattern table t (engine squares, digit 0
    first; digit value 2 white man, 1 empty or king, 0 black man); ``rotated_windows[t]`` the
    squares of the 180-degree turned window that reads the same table with colours swapped;
    ``edge_windows`` and ``rotated_edge_windows`` the same for the tables "edge:0" and
    "edge:1" (strips of 3 files x 6 rows), ``wide_windows`` and ``rotated_wide_windows`` for
    the tables "wide:0", "wide:1", ... (4 files x 6 rows). The ``fingerprint`` changes
    whenever the meaning of a parameter changes.
    """

    variant_name: str
    size: int
    fingerprint: str
    n_params: int
    groups: list[tuple[str, int, int]]
    feature_names: dict[str, tuple[str, ...]]
    windows: tuple[tuple[int, ...], ...]
    rotated_windows: tuple[tuple[int, ...], ...]
    edge_windows: tuple[tuple[int, ...], ...]
    rotated_edge_windows: tuple[tuple[int, ...], ...]
    wide_windows: tuple[tuple[int, ...], ...]
    rotated_wide_windows: tuple[tuple[int, ...], ...]
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


def rule_set(variant: Variant) -> Variant:
    """The record the layouts and weights files are kept by: the house rule shares its rule
    set's (the caches below are keyed by this record, never by a name to look up again)."""
    return variant.with_forced_capture(True)


def layout_core(variant: Variant) -> EvalCore:
    """The core's layout of a rule set, without weights (feature rows need no more)."""
    return _layout_core(rule_set(variant))


@lru_cache(maxsize=None)
def _layout_core(rules: Variant) -> EvalCore:
    return EvalCore(_core.core_rules(rules))


def describe(info: dict) -> dict:
    """What a layout's fingerprint is made from: the core's ``info()`` as plain JSON data."""
    return {
        "format": "damka learned evaluation",
        "version": info["version"],
        "size": info["size"],
        "scale": info["scale"],
        "phase_total": info["phase_total"],
        "groups": [[g, n] for g, n in info["groups"]],
        "feature_names": {k: list(v) for k, v in info["feature_names"].items()},
        "windows": [list(w) for w in info["windows"]],
        "rotated_windows": [list(w) for w in info["rotated_windows"]],
        "edge_windows": [list(w) for w in info["edge_windows"]],
        "rotated_edge_windows": [list(w) for w in info["rotated_edge_windows"]],
        "wide_windows": [list(w) for w in info["wide_windows"]],
        "rotated_wide_windows": [list(w) for w in info["rotated_wide_windows"]],
        "blend": "(mg*phase + eg*(P-phase)) / P, phase = men's distance to promotion",
        "draws": "1v1 kings /16; 10x10 lone king vs <=3 with a king /2 or /32, else the side "
                 "ahead or level (king = 3 men) vs a king: <=3 pieces /8, equal kings and men "
                 "within one /2; 8x8 flying lone king vs <=2 /16",
        "king_denied": "reached squares next to an opponent man that captures toward them, "
                       "the square beyond empty",
    }


def fingerprint(description: dict) -> str:
    """The 16 hex digits that name a layout description."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@lru_cache(maxsize=None)
def _layout_of(variant: Variant) -> Layout:
    info = _layout_core(variant).info()
    groups = []
    offset = 0
    for group, n in info["groups"]:
        groups.append((group, offset, 2 * n))
        offset += 2 * n
    return Layout(
        variant_name=variant.name,
        size=info["size"],
        fingerprint=fingerprint(describe(info)),
        n_params=offset,
        groups=groups,
        feature_names=dict(info["feature_names"]),
        windows=tuple(info["windows"]),
        rotated_windows=tuple(info["rotated_windows"]),
        edge_windows=tuple(info["edge_windows"]),
        rotated_edge_windows=tuple(info["rotated_edge_windows"]),
        wide_windows=tuple(info["wide_windows"]),
        rotated_wide_windows=tuple(info["rotated_wide_windows"]),
        phase_total=info["phase_total"],
        scale=info["scale"],
    )


def layout(variant: "str | Variant") -> Layout:
    """The evaluation layout of a rule set (the house rule shares its rule set's).

    This module's public functions take a Variant or a rule-set name (the training API is
    used with names); the engine passes its record."""
    return _layout_of(rule_set(as_variant(variant)))


def weights_header(variant: "str | Variant") -> WeightsHeader:
    """What a weights file of the rule set (a Variant or a name) must say about itself."""
    lay = layout(variant)
    return WeightsHeader(lay.variant_name, lay.fingerprint, lay.n_params)
