"""``damka bench``: a fixed set of positions searched to a fixed depth with one thread.

The total node count is a signature of the search: it changes only when the search or the
evaluation changes (the hash table is cleared before each position, so nothing carries over).
Quote it in commits that change the search. The nodes per second measure the speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Callable

from .board import Board
from .limits import Limits

if TYPE_CHECKING:  # the search loads the evaluation (numpy): only when the bench runs
    from .search import Engine, SearchResult
from .variants import get_variant

__all__ = ["BENCH_POSITIONS", "DEFAULT_DEPTH", "DEFAULT_HASH_MB", "BenchLine", "run_bench"]

#: the depth of a plain ``damka bench``: a few seconds in all on this project's machines
DEFAULT_DEPTH = 12
#: the hash table of a plain ``damka bench``, MB (part of what the node signature depends on)
DEFAULT_HASH_MB = 16

#: (rule set, FEN): the start position, middle games and an endgame per rule set
BENCH_POSITIONS: tuple[tuple[str, str], ...] = (
    ("international", "W:W31-50:B1-20"),
    ("international", "W:W22,26,28,36,39-42,44-50:B1-7,11-13,15-17,20,25"),
    ("international", "W:W24,27,28,31,32,37,39,40,42-44,46-48,50:B1,2,6-16,18,26"),
    ("international", "B:W16,28,29,33,40,47:B6,13,18,19,26,30"),
    ("international", "W:WK47,27,33,38:BK3,14,19"),
    ("english", "B:W21-32:B1-12"),
    ("english", "B:W21,22,24-26,29,30:B1-5,8,9"),
    ("english", "B:W21,22,25-27:B1,4,13,14,20"),
    ("english", "B:WK18,K27,30:BK1,K3,9"),
    ("russian", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("russian", "W:Wa1,c1,e1,g1,b2,h2,a3,f4:Bb6,f6,h6,a7,c7,g7,b8,d8"),
    ("russian", "W:We1,g1,b2,a3,h4:Ba5,b6,h6,f8,h8"),
    ("russian", "W:WKa1,c3,e3:BKh8,f6,d6"),
    ("brazilian", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("brazilian", "B:Wa1,c1,e1,h2,a3,b4,h4,g5:Bd6,c7,e7,g7,b8,d8,f8,h8"),
    ("brazilian", "W:Wa1,b2,f2,c3,b4:Ba5,e5,h6,b8,d8"),
    ("brazilian", "W:WKa1,c3,e3:BKh8,f6,b6"),
    ("spanish", "W:W1-12:B21-32"),
    ("spanish", "W:W1,2,4-6,8,9,11,12:B18,19,21,23,24,28,29,31,32"),
    ("spanish", "B:W2,10,14,17,18,26:BK4,9,16,25,27,31"),
    ("spanish", "W:W5,6,9,K2:B28,27,24,K31"),
    ("italian", "W:W21-32:B1-12"),
    ("italian", "W:W21,22,24,25,27-29,31,32:B1,2,4,5,9,10,12,14,15"),
    ("italian", "B:W9,14-16,22,32:B2,6-8,24,26"),
    ("italian", "W:WK17,22,25:BK10,9,13"),
    ("czech", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("czech", "W:Wa1,c1,e1,g1,b2,d2,g3,c5:Bh4,h6,a7,c7,e7,b8,d8,h8"),
    ("czech", "B:Wg1,h2,a3,c7:Bd4,b6,a7,h8"),
    ("czech", "W:WKc1,e3,g3:BKf8,b6,d6"),
)


@dataclass(frozen=True)
class BenchLine:
    variant: str
    fen: str
    result: SearchResult
    seconds: float


def run_bench(depth: int = DEFAULT_DEPTH, hash_mb: int = DEFAULT_HASH_MB,
              on_line: Callable[[BenchLine], object] | None = None) -> tuple[int, float]:
    """Search every bench position to ``depth``; returns (total nodes, seconds)."""
    from .search import Engine

    engines: dict[str, Engine] = {}
    total_nodes = 0
    total_seconds = 0.0
    for name, fen in BENCH_POSITIONS:
        variant = get_variant(name)
        engine = engines.get(variant.name)
        if engine is None:
            engine = engines[variant.name] = Engine(variant, hash_mb=hash_mb)
        engine.clear()
        board = Board(variant, fen)
        start = perf_counter()
        result = engine.search(board, Limits(depth=depth))
        seconds = perf_counter() - start
        total_nodes += result.nodes
        total_seconds += seconds
        if on_line is not None:
            on_line(BenchLine(variant.name, fen, result, seconds))
    return total_nodes, total_seconds
