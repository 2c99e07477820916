"""Strength levels: weaker levels play differently from full strength, deterministically for a
seed, and never give a piece away for nothing when a safe move exists."""

from __future__ import annotations

import pytest

from engine import Board, _core
from engine.benchmark import BENCH_POSITIONS
from engine.levels import LEVELS, choose, get_level, line_material
from engine.move import Move
from engine.search import Engine, Limits

from material_search import material, play, safe_moves, value

#: middle games and endings of every rule set, plus the start positions
POSITIONS = [(v, f) for v, f in BENCH_POSITIONS if v != "international" or "K" in f or "B:" in f]
POSITIONS += [("international", "W:W31-50:B1-20"),
              ("international", "W:W24,27,28,31,32,37,39,40,42-44,46-48,50:B1,2,6-16,18,26")]


def test_level_names():
    assert list(LEVELS) == ["easy", "medium", "hard", "full"]
    assert get_level(None) is LEVELS["full"] and get_level("EASY") is LEVELS["easy"]
    assert get_level(LEVELS["hard"]) is LEVELS["hard"]
    assert LEVELS["full"].is_full and not LEVELS["easy"].is_full
    with pytest.raises(ValueError):
        get_level("grandmaster")
    # weaker means shallower, fewer nodes, a wider (but small) margin
    easy, medium, hard = LEVELS["easy"], LEVELS["medium"], LEVELS["hard"]
    assert easy.depth < medium.depth < hard.depth
    assert easy.nodes < medium.nodes < hard.nodes
    assert easy.margin > medium.margin > hard.margin > 0
    assert easy.margin <= 50  # small compared with a man (100)


def test_choose_is_seeded_and_stays_within_the_candidates():
    candidates = [(0, 10), (3, 0), (5, -5)]
    picks = {choose(candidates, 10, 30, seed) for seed in range(40)}
    assert picks == {0, 3, 5}
    assert all(choose(candidates, 10, 30, "x") == choose(candidates, 10, 30, "x") for _ in range(5))
    with pytest.raises(ValueError):
        choose([], 0, 10, 1)


def _loses_material(board: Board, move: Move, depth: int) -> bool:
    now = material(board.variant, board.position)
    for t in _core.generate(board.variant, board.position):
        if Move.from_core(t) == move:
            return -value(board.variant, play(board.position, t), depth - 1) < now
    raise AssertionError("not a legal move")


def test_weaker_levels_differ_but_never_blunder_a_piece():
    differs = {"easy": 0, "medium": 0, "hard": 0}
    for variant, fen in POSITIONS:
        board = Board(variant, fen)
        full = Engine(variant, hash_mb=4).search(board, Limits(depth=6)).best_move
        safe = safe_moves(board, 3)
        for level in ("easy", "medium", "hard"):
            for seed in range(3):
                result = Engine(variant, hash_mb=4, level=level, seed=seed).search(board)
                move = result.best_move
                assert move in board.legal_moves
                differs[level] += move != full
                if safe and move not in safe:
                    # a sacrifice that the exhaustive search sees regained two plies later is
                    # play, not a blunder
                    assert not _loses_material(board, move, 5), (variant, fen, level, seed,
                                                                  board.pdn(move))
    assert differs["easy"] >= len(POSITIONS) // 2
    assert differs["easy"] >= differs["hard"]


def test_a_level_is_deterministic_for_a_seed():
    board = Board("english", "B:W21,22,24-26,29,30:B1-5,8,9")
    for level in ("easy", "medium"):
        first = Engine("english", hash_mb=4, level=level, seed=7).search(board)
        again = Engine("english", hash_mb=4, level=level, seed=7).search(board)
        assert (first.best_move, first.nodes, first.score) == \
            (again.best_move, again.nodes, again.score)
    picks = {Engine("english", hash_mb=4, level="easy", seed=s).search(board).best_move
             for s in range(8)}
    assert len(picks) > 1  # the seed matters


def test_weaker_levels_search_less():
    board = Board("international")
    easy = Engine("international", hash_mb=4, level="easy").search(board)
    hard = Engine("international", hash_mb=4, level="hard").search(board)
    assert easy.depth <= LEVELS["easy"].depth and hard.depth <= LEVELS["hard"].depth
    assert easy.nodes <= 2 * LEVELS["easy"].nodes
    assert easy.nodes < hard.nodes
    # a level caps the limits it is given, never widens them
    capped = Engine("international", hash_mb=4, level="medium").search(board, Limits(depth=2))
    assert capped.depth == 2


def test_weaker_levels_still_take_a_forced_win():
    board = Board("international", "W:WK46:B10")
    for level in ("easy", "medium", "hard"):
        result = Engine("international", hash_mb=4, level=level).search(board)
        assert board.pdn(result.best_move) == "46x5" and result.mate == 1


def test_line_material():
    board = Board("international", "W:W28,33,38,39,42,44:B9,12,14,17,19")
    shot = [board.parse_move("28-23")]
    assert line_material(board, shot) == material(board.variant, board.position) + 1
    quiet = [board.parse_move("38-32")]
    assert line_material(board, quiet) == material(board.variant, board.position)
