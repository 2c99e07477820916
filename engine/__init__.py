"""damka's library: rules records, Board and Move, notation, FEN, games and PDN, the search
facade, time management and levels, over the compiled core.

It imports only ``_fast`` (through ``engine._core`` and ``engine.search``), never ``protocol``.
The compiled core is imported eagerly: without it ``import engine`` fails with the command
that builds it, rather than running slowly or half-working.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import _core  # noqa: E402,F401  (fails loudly when the extension is not built)
from ._core import BACKEND  # noqa: E402
from .board import Board, LegalMoves  # noqa: E402
from .errors import (  # noqa: E402
    AmbiguousMoveError,
    DamkaError,
    IllegalMoveError,
    InvalidFenError,
    InvalidPositionError,
    InvalidMoveError,
    UnknownVariantError,
)
from .fen import parse_fen, write_fen  # noqa: E402
from .move import Move  # noqa: E402
from .notation import parse_hub_position, parse_move, write_hub_position, write_pdn  # noqa: E402
from .outcome import Outcome, Termination  # noqa: E402
from .perft import divide, perft  # noqa: E402
from .position import Position  # noqa: E402
from .variants import (  # noqa: E402
    VARIANTS,
    CapturePromotion,
    DrawRules,
    Precedence,
    Variant,
    get_variant,
    variant_names,
)

__all__ = [
    "__version__",
    "BACKEND",
    "Board",
    "LegalMoves",
    "Outcome",
    "Termination",
    "Move",
    "perft",
    "divide",
    "Position",
    "Variant",
    "VARIANTS",
    "Precedence",
    "CapturePromotion",
    "DrawRules",
    "get_variant",
    "variant_names",
    "parse_fen",
    "write_fen",
    "parse_move",
    "write_pdn",
    "parse_hub_position",
    "write_hub_position",
    "DamkaError",
    "InvalidFenError",
    "InvalidPositionError",
    "InvalidMoveError",
    "IllegalMoveError",
    "AmbiguousMoveError",
    "UnknownVariantError",
]
