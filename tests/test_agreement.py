"""The fast core and the pure-Python reference agree move for move.

Positions come from seeded random play (games from the start position, with captures
preferred now and then so that games reach kings and long captures) and from random
placements with many kings, for every rule set and for the house rule. A move is compared by
origin, destination, captured set and crowning; the fast core's path must also be a real
route of that capture.
"""

from __future__ import annotations

import random

import pytest

from random_positions import random_games, random_setups

from engine import _core, reference
from engine.position import Position
from engine.squares import row_col
from engine.variants import VARIANTS, get_variant

POSITIONS_PER_VARIANT = 2000


def _key(move) -> tuple[int, int, int, bool]:
    origin, destination, captured, _path, promotes = move
    return origin, destination, captured, bool(promotes)


def _compare(variant, positions) -> dict[str, int]:
    stats = {"kings": 0, "long_captures": 0, "captures": 0}
    for position in positions:
        fast = _core.generate(variant, position)
        ref = reference.legal_moves(variant, position)
        fast_keys = sorted(_key(m) for m in fast)
        ref_keys = sorted(_key(m) for m in ref)
        assert len(fast_keys) == len(set(fast_keys)), f"duplicate moves from the core in {position}"
        assert fast_keys == ref_keys, f"{variant.name}: moves differ in {position}"
        for move in fast:
            _check_path(variant, position, move)
        stats["kings"] += bool(position.kings)
        stats["captures"] += any(m[2] for m in fast)
        stats["long_captures"] += any(bin(m[2]).count("1") >= 3 for m in fast)
    return stats


def _check_path(variant, position: Position, move) -> None:
    """The path starts and ends right and jumps exactly the captured pieces."""
    origin, destination, captured, path, _promotes = move
    assert path[0] == origin and path[-1] == destination
    if not captured:
        assert len(path) == 2
        return
    assert len(path) == bin(captured).count("1") + 1
    seen = 0
    for a, b in zip(path, path[1:]):
        (ra, ca), (rb, cb) = row_col(variant.size, a), row_col(variant.size, b)
        assert abs(ra - rb) == abs(ca - cb) > 1, f"step {a}->{b} is not a diagonal jump"
        step_r, step_c = (rb - ra) // abs(rb - ra), (cb - ca) // abs(cb - ca)
        between = [(ra + i * step_r, ca + i * step_c) for i in range(1, abs(rb - ra))]
        jumped = [
            s for s in range(variant.squares) if row_col(variant.size, s) in between and captured >> s & 1
        ]
        assert len(jumped) == 1, f"step {a}->{b} does not jump exactly one captured piece"
        seen |= 1 << jumped[0]
    assert seen == captured


VARIANT_CASES = [v for v in VARIANTS] + [v.with_forced_capture(False) for v in VARIANTS if v.size == 8]


@pytest.mark.parametrize("variant", VARIANT_CASES, ids=str)
def test_fast_core_agrees_with_reference_inrandom_games(variant):
    rng = random.Random(f"games-{variant}")
    count = POSITIONS_PER_VARIANT if variant.forced_capture else POSITIONS_PER_VARIANT // 4
    stats = _compare(variant, random_games(variant, rng, count))
    # the sample must really contain what the test claims to cover
    assert stats["kings"] > count // 20
    assert stats["captures"] > count // 10
    assert stats["long_captures"] > 0


@pytest.mark.parametrize("variant", VARIANT_CASES, ids=str)
def test_fast_core_agrees_with_reference_onrandom_setups(variant):
    rng = random.Random(f"setups-{variant}")
    count = POSITIONS_PER_VARIANT if variant.forced_capture else POSITIONS_PER_VARIANT // 4
    stats = _compare(variant, random_setups(variant, rng, count))
    assert stats["long_captures"] > 0


def test_house_rule_needs_an_8x8_board():
    with pytest.raises(ValueError):
        get_variant("international", forced_capture=False)
