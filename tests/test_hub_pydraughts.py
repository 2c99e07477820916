"""Complete games between two ``damka hub`` processes driven by pydraughts' HubEngine.

pydraughts (0.6.7) is a real Hub client that nobody here wrote: it launches the engine, does the
handshake, sends positions and moves in its own notation and checks every answer against its
own board. International, and four 8x8 sets through the ``pydraughts-8x8`` parameter, and
international and Russian on two search threads (``threads`` set through pydraughts).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import pytest

from draughts import Board as PyBoard
from draughts import WHITE
from draughts.engine import HubEngine, Limit

#: the installed console script beside this Python (pydraughts resolves symlinks of argv[0],
#: which would take a virtual environment's python out of its environment)
DAMKA = str(Path(sys.executable).with_name("damka"))
MAX_PLIES = 400
#: The engine keeps back only a few milliseconds for the transport, so an idle machine answers
#: within the move time itself (bench/hub_latency.py). Over a whole game at a fixed move time
#: the median answer may exceed it by MEDIAN_MARGIN (a search that overruns shows in the
#: median), any one answer by MAX_MARGIN (a busy 2-core machine may hold one process back; a
#: search that ignores its limit goes far beyond)
MEDIAN_MARGIN = 0.03
MAX_MARGIN = 0.5
#: the slow tier (pytest -m slow), which .ci/run runs after the plain run
SLOW = pytest.mark.slow


class TimedHubEngine(HubEngine):
    """pydraughts' client, noting when ``go`` left and ``done`` came back (the engine's time)
    and every ``error`` line, which pydraughts itself only logs (a refused ``set-param``)."""

    def __init__(self, command: list[str]):
        self.errors: list[str] = []
        super().__init__(command)

    def send(self, line: str) -> None:
        if line.startswith("go "):
            self.go_sent = time.monotonic()
        super().send(line)

    def recv_hub(self):
        command, arg = super().recv_hub()
        if command == "done":
            self.thinking = time.monotonic() - self.go_sent
        elif command == "error":
            self.errors.append(arg)
        return [command, arg]


def _engine(options: dict) -> HubEngine:
    engine = TimedHubEngine([DAMKA, "hub"])
    engine.configure(options)
    engine.init()
    return engine


def _play(variant: str, options: dict, limit: Limit, check_clock: bool = False,
          times: list | None = None, max_plies: int = MAX_PLIES) -> PyBoard:
    """A whole game; ``times`` collects the thinking time of each move the engine searched
    without proving its result. (A proven win or loss rightly ends the search early, and a move
    that is the only one answers at once: depth 0. pydraughts may count two paths of one capture
    as two moves.)"""
    board = PyBoard(variant=variant)
    white, black = _engine(options), _engine(options)
    clock = {WHITE: limit.time, "other": limit.time}
    answers: list[float] = []  # the time of every answer, at a fixed move time
    try:
        while not board.is_over() and len(board.move_stack) < max_plies:
            side = WHITE if board.turn == WHITE else "other"
            engine = white if board.turn == WHITE else black
            legal = [m.board_move for m in board.legal_moves()]
            if check_clock:  # a real clock: the time left goes down move by move
                limit = Limit(time=round(clock[side], 3), inc=limit.inc)
            result = engine.play(board, limit, ponder=False)
            spent = engine.thinking
            assert result.move.board_move in legal, f"illegal move {result.move.pdn_move}"
            proven = "win" in result.info.get("score", {})  # pydraughts: {"win": moves} or {"cp": n}
            searched = result.info.get("depth", 0) > 0
            if times is not None and len(legal) > 1 and searched and not proven:
                times.append(spent)
            if limit.movetime is not None:
                answers.append(spent)
                assert spent <= limit.movetime + MAX_MARGIN, \
                    f"{spent:.3f} s for a {limit.movetime} s move at ply {len(board.move_stack)}"
            if check_clock:
                # the increment counts before the move (Hub): the engine may spend time + inc
                assert spent <= clock[side], f"{spent:.3f} s with {clock[side]:.3f} s on the clock"
                clock[side] = clock[side] - spent + limit.inc
            board.push(result.move)
    finally:
        for engine in (white, black):
            engine.quit()
            engine.p.wait(timeout=10)
    if answers:
        assert statistics.median(answers) <= limit.movetime + MEDIAN_MARGIN, answers
    assert white.errors == black.errors == [], \
        f"the engine refused what pydraughts sent: {white.errors + black.errors}"
    return board


@pytest.mark.parametrize(
    "variant, options, movetime, plies",
    [  # the first 60 plies of a game in the plain run (pydraughts' own move generator takes
        # most of a whole game's time); whole games in the slow tier
        ("standard", {}, 0.05, 60),
        pytest.param("standard", {}, 0.1, MAX_PLIES, marks=SLOW),
        pytest.param("russian", {"variant": "russian", "pydraughts-8x8": "true"}, 0.1, MAX_PLIES,
                     marks=SLOW),
        pytest.param("english", {"variant": "english", "pydraughts-8x8": "true"}, 0.1, MAX_PLIES,
                     marks=SLOW),
        pytest.param("italian", {"variant": "italian", "pydraughts-8x8": "true"}, 0.1, MAX_PLIES,
                     marks=SLOW),
        pytest.param("brazilian", {"variant": "brazilian", "pydraughts-8x8": "true"}, 0.1,
                     MAX_PLIES, marks=SLOW),
        pytest.param("standard", {"threads": "2"}, 0.1, MAX_PLIES, marks=SLOW),
        pytest.param("russian", {"variant": "russian", "pydraughts-8x8": "true", "threads": "2"},
                     0.1, MAX_PLIES, marks=SLOW),
    ],
    ids=["international-60-plies", "international", "russian", "english", "italian", "brazilian",
         "international-2-threads", "russian-2-threads"],
)
def test_complete_game_checked_by_pydraughts(variant, options, movetime, plies):
    times: list[float] = []
    board = _play(variant, options, Limit(movetime=movetime), times=times, max_plies=plies)
    assert len(board.move_stack) > 10
    # the time is used, not thrown away on a transport overhead (a fixed 50 ms used to halve it)
    assert statistics.median(times) >= 0.9 * movetime
    assert board.is_over() or len(board.move_stack) == plies


@pytest.mark.slow
def test_clock_game_never_exceeds_the_time_left():
    board = _play("standard", {}, Limit(time=4, inc=0.05), check_clock=True)
    assert len(board.move_stack) > 10
