"""Endgame databases for every rule set: building, storing, probing and verifying them.

The solver is in ``_fast/egtb.pyx`` and reuses the move generator; this package orders the
work, writes and reads the files and turns stored bytes into values (docs/egtb.md).
"""

from __future__ import annotations

from .builder import MAX_PIECES, BuildProgress, build
from .material import Material, signatures
from .paths import default_dir
from .probe import DRAW, LOSS, WIN, EgtbValue, Tablebase, shared_tablebase
from .storage import EgtbError, TableFile
from .verify import SliceCheck, verify

__all__ = ["MAX_PIECES", "BuildProgress", "build", "Material", "signatures", "default_dir",
           "WIN", "DRAW", "LOSS", "EgtbValue", "Tablebase", "shared_tablebase", "EgtbError", "TableFile",
           "SliceCheck", "verify"]
