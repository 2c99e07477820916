"""The one door to the compiled move generator (``_fast.movegen``).

Everything in ``engine`` that needs legal moves or perft goes through here, so the rules
record is turned into the core's own rules object in one place. There is deliberately no
pure-Python fallback: a missing extension fails loudly with the command that builds it.
"""

from __future__ import annotations

from functools import lru_cache

try:
    from _fast import movegen as _movegen
except ImportError as exc:  # pragma: no cover - exercised only on an unbuilt tree
    raise ImportError(
        "damka's compiled core (_fast.movegen) is not built or cannot be loaded "
        f"({exc}). Build it from the source tree with `pip install -e .` "
        "(or `python setup.py build_ext --inplace`)."
    ) from exc

from .position import Position
from .variants import Variant

__all__ = ["BACKEND", "core_rules", "generate", "perft", "divide"]

#: which implementation runs, e.g. "cython"; shown by ``damka --version``
BACKEND: str = str(getattr(_movegen, "BACKEND", "unknown"))

#: the core's move tuple: (origin, destination, captured_mask, path, promotes)
CoreMove = tuple


@lru_cache(maxsize=None)
def core_rules(variant: Variant):
    """The core's rules object for a rule set, built once per record."""
    return _movegen.CoreRules(
        variant.size,
        variant.men_capture_backwards,
        variant.flying_kings,
        variant.men_capture_kings,
        int(variant.precedence),
        int(variant.capture_promotion),
        variant.forced_capture,
    )


def generate(variant: Variant, position: Position) -> list[CoreMove]:
    """The legal moves of a position as the core's tuples (duplicates already merged)."""
    return _movegen.legal_moves(
        core_rules(variant), position.white, position.black, position.kings, position.white_to_move
    )


def perft(variant: Variant, position: Position, depth: int) -> int:
    """Leaf count of the legal-move tree ``depth`` plies below the position."""
    return _movegen.perft(
        core_rules(variant),
        position.white,
        position.black,
        position.kings,
        position.white_to_move,
        depth,
    )


def divide(variant: Variant, position: Position, depth: int) -> list[tuple[CoreMove, int]]:
    """Perft split by root move: (core move tuple, leaf count) per legal move."""
    return _movegen.divide(
        core_rules(variant),
        position.white,
        position.black,
        position.kings,
        position.white_to_move,
        depth,
    )
