"""Time management: the plan never reaches past the clock, adapts to the search, and a game
played on a short clock is never lost on time."""

from __future__ import annotations

import time

import pytest

from engine import Board
from engine.search import Engine, Limits
from engine.timeman import DEFAULT_OVERHEAD, TimeManager, TimeSettings, estimate_moves_left

OVERHEAD = DEFAULT_OVERHEAD


def test_fixed_move_time_uses_all_of_it_less_the_overhead():
    tm = TimeManager(movetime=2.0)
    assert tm.hard == pytest.approx(2.0 - OVERHEAD)
    assert tm.soft == tm.hard
    tm.update("a", 10)
    for _ in range(6):
        tm.update("a", 10)  # a stable best move does not cut a fixed time short
    assert tm.soft == tm.hard
    assert 0 < TimeManager(movetime=0.01).hard <= 0.01


@pytest.mark.parametrize("time_left, increment, moves_to_go", [
    (60.0, 0.0, None), (60.0, 1.0, None), (5.0, 0.0, 40), (1.0, 0.0, 1), (0.2, 5.0, None),
    (0.02, 0.0, None), (0.0, 0.0, None), (600.0, 10.0, 2),
])
def test_the_plan_never_reaches_the_end_of_the_clock(time_left, increment, moves_to_go):
    tm = TimeManager(time_left=time_left, increment=increment, moves_to_go=moves_to_go)
    assert 0 < tm.hard
    assert tm.hard < time_left or time_left == 0.0 and tm.hard <= 0.01
    assert tm.soft <= tm.hard
    for best, score in (("a", 0), ("b", -200), ("c", -400), ("d", 50)):
        tm.update(best, score)
        assert tm.soft <= tm.hard


def test_clock_is_divided_over_the_moves_to_go():
    sudden_death = TimeManager(time_left=60.0)
    assert 0.5 < sudden_death.soft < 3.0 and sudden_death.hard <= 60.0 * 0.4
    last_move = TimeManager(time_left=60.0, moves_to_go=1)
    assert last_move.soft > 10 * sudden_death.soft  # the control comes after this move
    ten_to_go = TimeManager(time_left=60.0, moves_to_go=10)
    assert sudden_death.soft < ten_to_go.soft < last_move.soft
    with_increment = TimeManager(time_left=60.0, increment=2.0)
    assert with_increment.soft > sudden_death.soft
    # fewer pieces, fewer moves to come
    assert estimate_moves_left(40, 40) > estimate_moves_left(10, 40) >= 10
    # a number of moves beyond the estimate (a DXP GAMEREQ's 75) plans as the estimate does:
    # the game ends before it
    assert TimeManager(time_left=60.0, moves_to_go=75).soft == pytest.approx(sudden_death.soft)
    assert TimeManager(time_left=60.0, moves_to_go=75, moves_left_estimate=20).soft \
        > sudden_death.soft


def test_sudden_death_plans_about_a_twenty_fifth_of_the_clock():
    """At the first move of a 60 s game the planned time is the clock over 30 moves, times
    1.2 (Scan's allocation): about 2.3 s, with a hard stop four times as far."""
    tm = TimeManager(time_left=60.0, moves_left_estimate=estimate_moves_left(40, 40))
    assert 2.0 < tm.planned < 2.5
    assert tm.hard == pytest.approx(4 * tm.planned)


def test_more_time_when_the_best_move_changes_or_the_score_drops():
    base = TimeManager(time_left=60.0).soft

    stable = TimeManager(time_left=60.0)
    for _ in range(6):
        stable.update("a", 20)
    assert stable.soft < base

    unstable = TimeManager(time_left=60.0)
    for best in "abab":
        unstable.update(best, 20)
    assert unstable.soft > base

    dropping = TimeManager(time_left=60.0)
    dropping.update("a", 50)
    dropping.update("a", -60)
    assert dropping.soft > base

    failed_low = TimeManager(time_left=60.0)
    failed_low.note_fail_low()
    assert failed_low.soft > base

    assert TimeManager(time_left=60.0).start_iteration(0.0)
    assert not TimeManager(time_left=60.0).start_iteration(30.0)
    assert TimeManager().soft is None and TimeManager().start_iteration(1e9)


@pytest.mark.parametrize("movetime", [0.02, 0.05, 0.1, 0.2, 1.0, 5.0])
def test_the_default_overhead_shrinks_with_the_time_per_move(movetime):
    kept_back = movetime - TimeManager(movetime=movetime).hard
    assert kept_back == pytest.approx(min(DEFAULT_OVERHEAD, 0.05 * movetime))
    # at 0.1 s a move at least 95% of the time goes to the search (a fixed 50 ms used to take half)
    assert TimeManager(movetime=0.1).hard >= 0.095


def test_a_given_overhead_is_kept_back_as_it_is():
    tm = TimeManager(movetime=0.1, settings=TimeSettings(move_overhead=0.03))
    assert tm.hard == pytest.approx(0.07)


def test_move_overhead_is_kept_back():
    slow_gui = TimeManager(time_left=1.0, moves_to_go=1, settings=TimeSettings(move_overhead=0.5))
    assert slow_gui.hard <= 0.5


def test_a_game_on_a_short_clock_is_never_lost_on_time():
    """Sixty moves of one side on a 3-second clock with a small increment."""
    engine = Engine("english", hash_mb=8)
    board = Board("english")
    clock, increment = 3.0, 0.02
    moves = 0
    while moves < 60 and board.legal_moves:
        clock += increment  # added before the move (Hub level semantics)
        start = time.perf_counter()
        result = engine.search(board, Limits(time_left=clock, increment=increment))
        used = time.perf_counter() - start
        clock -= used
        assert clock > 0, f"flagged at move {moves}"
        board.push(result.best_move)
        moves += 1
        if board.legal_moves:  # the opponent answers at once
            board.push(next(iter(board.legal_moves)))
    assert clock > 0.3  # the reserve was kept
