"""pytest-benchmark timings of perft (run on purpose: pytest bench/ --benchmark-only)."""

import pytest

from engine import _core
from engine.fen import parse_fen
from engine.variants import VARIANTS


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_perft_start_position(benchmark, variant):
    depth = 7 if variant.size == 10 else 9
    position = parse_fen(variant, variant.start_fen)
    nodes = benchmark(_core.perft, variant, position, depth)
    benchmark.extra_info["nodes"] = nodes
    benchmark.extra_info["nodes_per_second"] = nodes / benchmark.stats.stats.mean
