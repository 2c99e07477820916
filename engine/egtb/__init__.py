"""Endgame databases for every rule set: building, storing, probing and verifying them.

The solver is in ``_fast/egtb.pyx`` and reuses the move generator; this package orders the
work, writes and reads the files and turns stored bytes into values (docs/egtb.md).

The names below are imported when first used, so that a light module of the package (the
piece limit, the material signatures, the paths) loads without numpy: ``damka --help`` does.
``engine.egtb.verify`` is the module; its checker is ``engine.egtb.verify.verify``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "MAX_PIECES": "material", "Material": "material", "signatures": "material",
    "BuildProgress": "builder", "build": "builder",
    "default_dir": "paths",
    "WIN": "probe", "DRAW": "probe", "LOSS": "probe", "EgtbValue": "probe",
    "Tablebase": "probe", "shared_tablebase": "probe",
    "EgtbError": "storage", "TableFile": "storage",
    "SliceCheck": "verify",
}

__all__ = list(_WHERE)

if TYPE_CHECKING:  # what a type checker and a reader see
    from .builder import BuildProgress, build
    from .material import MAX_PIECES, Material, signatures
    from .paths import default_dir
    from .probe import DRAW, LOSS, WIN, EgtbValue, Tablebase, shared_tablebase
    from .storage import EgtbError, TableFile
    from .verify import SliceCheck


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
