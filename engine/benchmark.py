"""``damka bench``: a fixed set of positions searched to a fixed depth with one thread.

The total node count is a signature of the search: it changes only when the search or the
evaluation changes (the hash table is cleared before each position, so nothing carries over).
Quote it in commits that change the search. The nodes per second measure the speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Callable

from .board import Board
from .search import Engine, Limits, SearchResult
from .variants import get_variant

__all__ = ["BENCH_POSITIONS", "DEFAULT_DEPTH", "BenchLine", "run_bench"]

#: the depth of a plain ``damka bench``: a few seconds in all on this project's machines
DEFAULT_DEPTH = 10

#: (rule set, FEN): the start position, two middle games and an endgame per rule set
BENCH_POSITIONS: tuple[tuple[str, str], ...] = (
    ("international", "W:W31-50:B1-20"),
    ("international", "W:W30-34,36,38,40-50:B1-5,7-9,11,13-16,18-20,22,25"),
    ("international", "W:W28,31-33,35,38,40,41,44-50:B1-5,7,9,13-15,17,19,21,24,25,34"),
    ("international", "W:WK47,27,33,38:BK3,14,19"),
    ("english", "B:W21-32:B1-12"),
    ("english", "B:W11,18,19,21-23,28-32:B2-6,8-10,12,14"),
    ("english", "B:W7,9,22,26,29,30,32:B3-5,12,13,21"),
    ("english", "B:WK14,K27,30:BK5,K19,10"),
    ("russian", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("russian", "W:Wa1,c1,e1,d2,f2,h2,a3,c3,b4:Bf4,a5,a7,c7,g7,b8,d8,f8,h8"),
    ("russian", "W:Wa1,c1,g1,f2,g3:Bb6,d6,h6,d8,f8"),
    ("russian", "W:WKa1,c3,e3:BKh8,f6,d6"),
    ("brazilian", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("brazilian", "W:Wa1,c1,e1,d2,f2,h2,a3,c3,b4:Bf4,a5,a7,c7,g7,b8,d8,f8,h8"),
    ("brazilian", "W:Wa1,c1,g1,f2,g3:Bb6,d6,h6,d8,f8"),
    ("brazilian", "W:WKa1,c3,e3,g3:BKh8,f6,b6"),
    ("spanish", "W:W1-12:B21-32"),
    ("spanish", "W:W1,2,4-7,9,12,15,16:B17-19,24-26,29-32"),
    ("spanish", "W:W1,4,8,11,14,16:B13,17,23,27,28,32"),
    ("spanish", "W:WK5,10,12:BK28,20,22"),
    ("italian", "W:W21-32:B1-12"),
    ("italian", "W:W17,18,21,24,26-29,31,32:B1-4,7-9,14-16"),
    ("italian", "W:W13,17,23-25,28,29:B1,5-7,9,11,16,21,22"),
    ("italian", "W:WK17,22,25:BK10,9,13"),
    ("czech", "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("czech", "W:Wa1,c1,g1,b2,d2,f2,a3,g3,f4,h4:Ba5,c5,e5,h6,a7,c7,b8,d8,f8,h8"),
    ("czech", "W:Wa1,e1,f2,a3,c3,h4:Bf4,c5,a7,c7,g7,f8"),
    ("czech", "W:WKc1,e3,g3:BKf8,b6,d6"),
)


@dataclass(frozen=True)
class BenchLine:
    variant: str
    fen: str
    result: SearchResult
    seconds: float


def run_bench(depth: int = DEFAULT_DEPTH, hash_mb: int = 16,
              on_line: Callable[[BenchLine], object] | None = None) -> tuple[int, float]:
    """Search every bench position to ``depth``; returns (total nodes, seconds)."""
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
