"""The one door to the compiled move generator (``_fast.movegen``).

Everything in ``engine`` that needs legal moves or perft goes through here, so the rules
record is turned into the core's own rules object in one place. There is deliberately no
pure-Python fallback: a missing extension fails loudly with the command that builds it.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Callable

from .position import Position
from .variants import Variant

__all__ = ["BACKEND", "compiled", "core_rules", "generate", "perft", "divide"]


def compiled(name: str) -> ModuleType:
    """The compiled core module ``_fast.<name>``, or an ImportError saying how to build it."""
    try:
        return importlib.import_module(f"_fast.{name}")
    except ImportError as exc:  # pragma: no cover - exercised only on an unbuilt tree
        raise ImportError(
            f"damka's compiled core (_fast.{name}) is not built or cannot be loaded "
            f"({exc}). Build it from the source tree with `pip install -e .` "
            "(or `python setup.py build_ext --inplace`)."
        ) from exc


_movegen = compiled("movegen")

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


#: plies a parallel perft splits the tree at: the positions there are its work items (about
#: 80 from an opening, enough to keep every thread busy until the end)
PERFT_SPLIT = 2


#: ``on_item(done, total)``: a perft's progress, in work items (positions PERFT_SPLIT plies down)
Progress = Callable[[int, int], object]


def perft(variant: Variant, position: Position, depth: int, threads: int = 1,
          on_item: Progress | None = None) -> int:
    """Leaf count of the legal-move tree ``depth`` plies below the position. With ``threads``
    > 1 the subtrees below the first plies are counted on that many threads at once (the
    counting holds no GIL); the sum is the same. ``on_item`` hears of each subtree counted
    (for a progress display: the tree is split so even on one thread)."""
    rules = core_rules(variant)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    if depth <= PERFT_SPLIT or (threads == 1 and on_item is None):
        return _movegen.perft(rules, position.white, position.black, position.kings,
                              position.white_to_move, depth)
    items = _movegen.perft_children(rules, position.white, position.black, position.kings,
                                    position.white_to_move, PERFT_SPLIT)
    return sum(_parallel_perft(rules, items, depth - PERFT_SPLIT, threads, on_item))


def divide(variant: Variant, position: Position, depth: int, threads: int = 1,
           on_item: Progress | None = None) -> list[tuple[CoreMove, int]]:
    """Perft split by root move: (core move tuple, leaf count) per legal move; ``on_item``
    hears of each root move counted."""
    rules = core_rules(variant)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    args = (rules, position.white, position.black, position.kings, position.white_to_move)
    if depth < 2 or (threads == 1 and on_item is None):
        return _movegen.divide(*args, depth)
    moves = _movegen.legal_moves(*args)
    children = _movegen.perft_children(*args, 1)
    return list(zip(moves, _parallel_perft(rules, children, depth - 1, threads, on_item)))


def _parallel_perft(rules, items: list[tuple], depth: int, threads: int,
                    on_item: Progress | None = None) -> list[int]:
    """Perft ``depth`` of each (white, black, kings, white_to_move), on ``threads`` threads."""
    from concurrent.futures import ThreadPoolExecutor  # (here: it costs start-up 8 ms)

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="damka-perft") as pool:
        counts = []
        for count in pool.map(lambda item: _movegen.perft(rules, *item, depth), items):
            counts.append(count)
            if on_item is not None:
                on_item(len(counts), len(items))
        return counts
