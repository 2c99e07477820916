"""The search facade: shots are found, drawn endings score as draws, limits hold, stop() and
pondering work, and the same search gives the same node count.

Every shot is proven in the test itself by an exhaustive material search (material_search.py)
before the engine is asked to find it.
"""

from __future__ import annotations

import gc
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine import Board
from engine.benchmark import BENCH_POSITIONS, run_bench
from engine.draws import DrawCounters, game_history
from engine.search import MATE_SCORE, MATE_THRESHOLD, Engine, Limits, SearchInfo, mate_in

from material_search import winning_moves

REPO = Path(__file__).resolve().parents[1]

# -- shots: forced wins of material -----------------------------------------------------------
#
# (rule set, FEN, plies of the proof, the winning move). Captures are compulsory, so every
# sacrifice forces the reply; the proof searches every legal move to the given depth and then
# on through every pending capture, counting material (kings as three men, short kings as two).

SHOTS = [
    pytest.param(
        # 28-23! 19x28 (forced) 33x22x11: two for one
        "international", "W:W28,33,38,39,42,44:B9,12,14,17,19", 3, "28-23",
        id="international-2-for-1",
    ),
    pytest.param(
        # 23-19! 14x23, then 31-27! 21x32 and 37x28x19x8 takes three: a double sacrifice that
        # lines up 32, 23 and 13
        "international", "W:W23,24,31,37,41,45,47:B6,13,14,15,16,17,21", 3, "23-19",
        id="international-double-sacrifice",
    ),
    pytest.param(
        # the first shot mirrored, Black to move: 23-28! 32x23 18x29x40
        "international", "B:W32,34,37,39,42:B7,9,12,13,18,23", 3, "23-28", id="international-black",
    ),
    pytest.param(
        # 23-19! and either capture (16x23 or 15x24) runs into a double jump
        "english", "W:W23,26,28,30,31:B5,7,8,15,16", 3, "23-19", id="english-2-for-1",
    ),
    pytest.param(
        # c5-b6! a7xc5, then d4xb6xd8 crowns in passing and the new king goes on: d8xg5 (f6)
        "russian", "W:Wc5,a5,d4,e3,c1,g1,h2:Ba7,c7,f6,b8,f8,h8,h6", 3, "c5-b6",
        id="russian-crowning-in-the-capture",
    ),
    pytest.param(
        # f4-e5! only the double capture d6xf4xd2 is legal (the most pieces), then e1xc3xa5xc7
        "brazilian", "W:Wf4,e3,e1,f2,c1,g1:Bd6,f6,b4,b6,h8,g7", 3, "f4-e5", id="brazilian-quantity",
    ),
    pytest.param("spanish", "W:W2,3,6,8,11:B19,20,25,27,28", 3, "11-15", id="spanish-2-for-1"),
    pytest.param("italian", "W:W22,25,27,30,31:B5,6,8,13,14", 3, "22-18", id="italian-2-for-1"),
    pytest.param("czech", "W:Wc1,e1,d2,h2,e3:Be5,g5,a7,e7,g7", 3, "e3-f4", id="czech-2-for-1"),
]


@pytest.mark.parametrize("variant, fen, plies, expected", SHOTS)
def test_shot_is_proven_and_found(variant, fen, plies, expected):
    board = Board(variant, fen)
    assert not any(m.captured for m in board.legal_moves), "a shot starts from a quiet position"
    winning = winning_moves(board, plies)
    assert {board.pdn(m) for m in winning} == {expected}, "the proof: exactly one move wins"
    result = Engine(variant, hash_mb=4).search(board, Limits(depth=8))
    assert result.best_move in winning
    assert result.score >= 100  # at least a man up, by the engine's own count


# -- drawn endings and the draw rules ---------------------------------------------------------


@pytest.mark.parametrize("fen", ["W:WK46:BK3,K15,K24", "B:WK46:BK3,K15,K24"])
def test_lone_king_on_the_long_diagonal_holds_three_kings(fen):
    board = Board("international", fen)
    result = Engine("international", hash_mb=8).search(board, Limits(depth=10))
    assert abs(result.score) <= 30


def test_sixteen_move_rule_with_the_counter_near_its_end():
    board = Board("international", "B:WK26:BK2,K13,K40")  # the lone king is off the long diagonal
    engine = Engine("international", hash_mb=8)
    assert engine.search(board, Limits(depth=8)).score >= 100  # a win worth more than a man
    engine.clear()
    assert engine.search(board, Limits(depth=8), counters=DrawCounters(endgame=31)).score == 0


def test_five_move_rule_stops_a_forced_win():
    # 14-10! forces 5x..., and the king on 46 takes the lone king: a win in two moves
    board = Board("international", "W:WK46,14:BK5")
    engine = Engine("international", hash_mb=8)
    won = engine.search(board, Limits(depth=6))
    assert won.mate == 2 and board.pdn(won.best_move) == "14-10"
    engine.clear()
    assert engine.search(board, Limits(depth=6), counters=DrawCounters(endgame=7)).mate == 2
    engine.clear()
    assert engine.search(board, Limits(depth=6), counters=DrawCounters(endgame=9)).score == 0


def test_twenty_five_move_king_rule():
    # four kings against two: winning material that only the 25-move rule can save
    board = Board("international", "W:WK47,K45,K3,K1:BK22,K30")
    engine = Engine("international", hash_mb=8)
    assert engine.search(board, Limits(depth=8)).score >= 150
    engine.clear()
    assert engine.search(board, Limits(depth=8), counters=DrawCounters(reversible=49)).score == 0


FORTY_MOVE_WINS = [
    ("english", "W:WK21,K26,K31:BK8"),
    ("russian", "W:WKa1,Kc1,Ke1:BKh8"),
    ("brazilian", "W:WKa1,Kc1,Ke1:BKh8"),
    ("spanish", "W:WK1-3:BK32"),
    ("italian", "W:WK24,K27,K30:BK5"),
    ("czech", "W:WKa1,Kc1,Ke1:BKh8"),
]


@pytest.mark.parametrize("variant, fen", FORTY_MOVE_WINS, ids=[v for v, _ in FORTY_MOVE_WINS])
def test_forty_move_rule_on_8x8(variant, fen):
    board = Board(variant, fen)
    engine = Engine(variant, hash_mb=4)
    assert engine.search(board, Limits(depth=10)).score > MATE_THRESHOLD  # a forced win...
    engine.clear()
    drawn = engine.search(board, Limits(depth=10), counters=DrawCounters(no_progress=79))
    assert drawn.score == 0  # ...that the 40-move rule takes away


def _walk(board: Board, plies: int, seed: int, avoid: frozenset = frozenset()) -> None:
    """Play ``plies`` quiet moves that never leave a capture to the opponent, never repeat a
    position, and never put a piece on ``avoid``."""
    rng = random.Random(seed)
    seen = {board.position}
    for _ in range(plies):
        moves = [m for m in board.legal_moves if not m.captured and m.destination not in avoid]
        rng.shuffle(moves)
        for move in moves:
            board.push(move)
            if board.position not in seen and not any(m.captured for m in board.legal_moves):
                seen.add(board.position)
                break
            board.pop()
        else:
            raise AssertionError("the walk is stuck")


#: internal squares of the international long diagonal 46-5
LONG_DIAGONAL = frozenset(s - 1 for s in (46, 41, 37, 32, 28, 23, 19, 14, 10, 5))


def test_sixteen_move_rule_counted_from_the_move_stack():
    board = Board("international", "W:WK26:BK2,K13,K40")
    _walk(board, 31, seed=5, avoid=LONG_DIAGONAL)
    assert game_history(board).counters == DrawCounters(reversible=31, no_progress=31, endgame=31)
    assert not board.white_to_move
    fresh = Board("international", board.fen())  # the same position without its history
    assert abs(Engine("international", hash_mb=8).search(fresh, Limits(depth=8)).score) >= 100
    assert Engine("international", hash_mb=8).search(board, Limits(depth=8)).score == 0


def test_repetition_is_reachable_in_the_search():
    # a lone king against two (a lost ending in English draughts): White finds the repetition
    board = Board("english", "W:WK18:BK1,K3")
    assert Engine("english", hash_mb=4).search(board, Limits(depth=10)).score <= -100
    for move in ("18-14", "1-5", "14-18", "5-1"):
        board.push(move)
    result = Engine("english", hash_mb=4).search(board, Limits(depth=10))
    assert board.pdn(result.best_move) == "18-14" and result.score == 0


def test_draw_counters_from_the_move_stack():
    board = Board("international")
    for move in ("32-28", "19-23", "28x19", "14x23"):
        board.push(move)
    assert game_history(board).counters == DrawCounters(0, 0, 0)
    assert len(game_history(board).positions) == 4
    board.push("33-28")
    assert game_history(board).counters == DrawCounters(0, 1, 0)

    kings = Board("international", "W:WK47,K45,K3:BK22,K30")
    for move in ("47-41", "30-35", "41-47"):
        kings.push(move)
    assert game_history(kings).counters == DrawCounters(3, 3, 0)

    english = Board("english", "W:W22,K30:B5,K3")
    for move in ("22-18", "3-7", "18-14"):  # men moves reset the king-move run only
        english.push(move)
    assert game_history(english).counters == DrawCounters(0, 3, 0)


# -- forced results -----------------------------------------------------------------------------


def test_win_and_loss_scores():
    def search(fen: str):
        return Engine("international", hash_mb=4).search(Board("international", fen), Limits(depth=4))

    won = search("W:WK46:B10")
    assert won.score == MATE_SCORE - 1 and won.mate == 1
    lost = search("B:WK46:B5")
    assert lost.score < -MATE_THRESHOLD and lost.mate == -1
    none = search("B:W41,47:B36")  # Black has no move: the game is lost
    assert none.best_move is None and none.score == -MATE_SCORE and none.mate == 0
    assert mate_in(0) is None and mate_in(MATE_SCORE - 3) == 2 and mate_in(-MATE_SCORE + 4) == -2


# -- limits ---------------------------------------------------------------------------------------


def test_depth_limit_and_progress_reports():
    board = Board("international")
    infos: list[SearchInfo] = []
    result = Engine("international", hash_mb=8).search(board, Limits(depth=7), on_info=infos.append)
    assert result.depth == 7
    assert [i.depth for i in infos if i.final] == list(range(1, 8))
    for info in infos:
        replay = board.copy()
        for move in info.pv:
            replay.push(move)  # a legal line
        assert info.nodes > 0 and info.time >= 0
    assert result.pv == infos[-1].pv and result.best_move == result.pv[0]
    assert result.ponder_move == result.pv[1]


def test_node_limit():
    result = Engine("international", hash_mb=8).search(Board("international"), Limits(nodes=30_000))
    assert 30_000 <= result.nodes <= 30_000 + 1024  # the core looks at the limit every 1024 nodes
    assert result.best_move in Board("international").legal_moves


#: seconds a loaded 2-core machine may add to a wall-clock measure (a scheduler delay, not the
#: search's own time): these tests check that the search keeps to its budget and stops when
#: told, and leave speed figures to bench/
LOAD = 0.5


def test_movetime():
    start = time.perf_counter()
    result = Engine("international", hash_mb=8).search(Board("international"), Limits(movetime=0.3))
    elapsed = time.perf_counter() - start
    assert 0.15 <= elapsed <= 0.3 + LOAD and result.depth >= 4


def test_game_clock_is_shared_over_the_moves():
    engine = Engine("international", hash_mb=8)
    start = time.perf_counter()
    engine.search(Board("international"), Limits(time_left=3.0))
    assert time.perf_counter() - start < 3.0 * 0.4 + LOAD
    start = time.perf_counter()
    engine.search(Board("international"), Limits(time_left=0.5, moves_to_go=1))
    assert time.perf_counter() - start < 0.5 + LOAD


def test_a_single_legal_move_is_answered_at_once():
    board = Board("international", "W:W28,40:B23,3")  # 28x19 is the only move
    assert len(board.legal_moves) == 1
    start = time.perf_counter()
    result = Engine("international", hash_mb=8).search(board, Limits(time_left=100.0))
    assert time.perf_counter() - start < LOAD  # of a 100 s budget
    assert result.best_move == next(iter(board.legal_moves)) and result.depth == 0
    assert result.nodes <= 1  # no search ran


# -- stop and ponder -------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_stop_from_another_thread_answers_within_50_ms(threads):
    engine = Engine("international", hash_mb=16, threads=threads)
    board = Board("international")
    future = engine.search_async(board, Limits(infinite=True))
    time.sleep(0.3)
    assert not future.done()
    start = time.perf_counter()
    engine.stop()
    result = future.result(timeout=1.0)
    assert time.perf_counter() - start < LOAD  # 50 ms on an idle machine (bench/)
    assert result.best_move in board.legal_moves and result.depth >= 3


def test_searches_run_on_one_long_lived_thread_that_calls_back():
    """search_async runs every search on the engine's one search thread, which calls ``done``
    with the engine already free; the thread ends when its engine is collected."""
    engine = Engine("international", hash_mb=4)
    board = Board("international")
    seen = []
    called = threading.Semaphore(0)

    def done(future):
        seen.append((threading.current_thread(), engine.searching, future.result().best_move))
        called.release()

    for _ in range(3):
        engine.search_async(board, Limits(depth=3), done=done)
        assert called.acquire(timeout=10)
    threads = {thread for thread, _, _ in seen}
    assert len(threads) == 1
    thread = threads.pop()
    assert thread.name == "damka-search" and thread is not threading.current_thread()
    assert all(not busy and move in board.legal_moves for _, busy, move in seen)
    del engine, seen
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_clear_async_returns_at_once_and_the_next_search_starts_from_a_clear_table():
    board = Board("international")
    fresh = Engine("international", hash_mb=16).search(board, Limits(depth=7)).nodes
    engine = Engine("international", hash_mb=16)
    engine.search(board, Limits(depth=7))
    running = engine.search_async(board, Limits(infinite=True))
    with pytest.raises(RuntimeError):
        engine.clear_async()  # never under a running search
    engine.stop()
    running.result(timeout=5)
    cleared = engine.clear_async()
    again = engine.search_async(board, Limits(depth=7)).result(timeout=30)
    assert cleared.done() and again.nodes == fresh  # (a warm table would take fewer)


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_stop_a_blocking_search(threads):
    engine = Engine("russian", hash_mb=8, threads=threads)
    board = Board("russian")
    timer = threading.Timer(0.2, engine.stop)
    start = time.perf_counter()  # (before the timer starts: its 0.2 s may begin at once)
    timer.start()
    result = engine.search(board)  # no limits: until stopped
    assert 0.2 <= time.perf_counter() - start < 0.2 + LOAD  # ended by the stop, not before
    assert result.best_move in board.legal_moves
    engine.stop()  # nothing runs: nothing happens
    assert engine.search(board, Limits(depth=2)).depth == 2


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_ponder_until_ponderhit(threads):
    engine = Engine("international", hash_mb=16, threads=threads)
    board = Board("international")
    board.push("32-28")  # the expected reply has been played
    future = engine.search_async(board, Limits(movetime=0.2), ponder=True)
    time.sleep(0.4)
    assert not future.done(), "pondering ignores the clock"
    hit = time.perf_counter()
    engine.ponderhit()
    result = future.result(timeout=1.0)
    assert time.perf_counter() - hit <= 0.2 + LOAD
    assert result.best_move in board.legal_moves
    assert result.time >= 0.4  # the pondering was not thrown away


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_ponderhit_turns_into_a_timed_search(threads):
    engine = Engine("international", hash_mb=16, threads=threads)
    board = Board("international")
    future = engine.search_async(board, Limits(movetime=0.3), ponder=True)
    time.sleep(0.02)
    hit = time.perf_counter()
    engine.ponderhit()
    result = future.result(timeout=2.0)
    assert 0.1 <= time.perf_counter() - hit <= 0.3 + LOAD  # the clock runs from the ponder hit
    assert result.best_move in board.legal_moves


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_ponder_then_stop(threads):
    engine = Engine("english", hash_mb=8, threads=threads)
    board = Board("english")
    future = engine.search_async(board, Limits(time_left=10.0), ponder=True)
    time.sleep(0.2)
    start = time.perf_counter()
    engine.stop()
    assert future.result(timeout=1.0).best_move in board.legal_moves
    assert time.perf_counter() - start < LOAD


def test_one_search_at_a_time_and_matching_rule_set():
    engine = Engine("international", hash_mb=4)
    future = engine.search_async(Board("international"), Limits(infinite=True))
    with pytest.raises(RuntimeError):
        engine.search(Board("international"), Limits(depth=1))
    engine.stop()
    future.result(timeout=1.0)
    with pytest.raises(ValueError):
        engine.search(Board("english"), Limits(depth=1))
    with pytest.raises(ValueError):
        Limits(depth=0)
    with pytest.raises(ValueError):
        Limits(movetime=-1)


# -- determinism and bench -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["international", "english", "italian"])
def test_same_search_same_node_count(variant):
    board = Board(variant)
    first = Engine(variant, hash_mb=8).search(board, Limits(depth=9))
    second = Engine(variant, hash_mb=8).search(board, Limits(depth=9))
    assert (first.nodes, first.pv, first.score) == (second.nodes, second.pv, second.score)
    engine = Engine(variant, hash_mb=8)
    board.push(next(iter(board.legal_moves)))
    engine.search(board, Limits(depth=6))  # fills the hash table, killers and history
    board.pop()
    engine.clear()
    assert engine.search(board, Limits(depth=9)).nodes == first.nodes


def test_bench_covers_every_rule_set_and_is_deterministic():
    assert {v for v, _ in BENCH_POSITIONS} == {
        "international", "english", "russian", "brazilian", "spanish", "italian", "czech"}
    for _, fen in BENCH_POSITIONS:
        assert len(fen) > 4
    first, _ = run_bench(depth=5, hash_mb=4)
    second, _ = run_bench(depth=5, hash_mb=4)
    assert first == second > 0


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_readme_quotes_the_bench_signature():
    """The README's ``damka bench`` signature is the one this tree's search and weights give:
    a change of search or weights that forgets to update it fails here."""
    import re

    quoted = re.search(r"the signature is ([\d,]+) nodes", (REPO / "README.md").read_text())
    assert quoted, "the README's damka bench section quotes no signature"
    assert int(quoted.group(1).replace(",", "")) == run_bench()[0]


# -- the command line ------------------------------------------------------------------------------


def damka(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "protocol", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_cli_analyse():
    run = damka("analyse", "--variant", "english", "--depth", "6")
    assert run.returncode == 0 and run.stderr == ""
    lines = run.stdout.splitlines()
    rows = [line.split() for line in lines if line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 7))
    assert lines[-1].startswith("bestmove ")
    board = Board("english")
    best = lines[-1].split()[1]
    assert best in board.legal_moves and rows[-1][6] == best  # the pv starts with it


def test_cli_analyse_forced_win_and_level():
    run = damka("analyse", "--fen", "W:WK46:B10", "--nodes", "5000", "--level", "easy")
    assert run.returncode == 0
    assert "#1" in run.stdout and run.stdout.splitlines()[-1] == "bestmove 46x5"


@pytest.mark.parametrize("args", [
    ("analyse",),
    ("analyse", "--depth", "3", "--time", "1"),
    ("analyse", "--depth", "0"),
    ("analyse", "--nodes", "-5"),
    ("analyse", "--time", "soon"),
    ("analyse", "--depth", "3", "--level", "grandmaster"),
    ("analyse", "--depth", "3", "--variant", "chess"),
    ("analyse", "--depth", "3", "--fen", "W:W1:B2"),
    ("analyse", "--depth", "3", "--moves", "32-27 19-23 27x18"),
    ("bench", "--depth", "x"),
])
def test_cli_bad_input(args):
    run = damka(*args)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("damka: error: ") and len(run.stderr.splitlines()) == 1


def test_cli_bench():
    run = damka("bench", "--depth", "4")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    nodes = int(next(line for line in lines if line.startswith("nodes ")).split()[1])
    assert nodes == run_bench(depth=4, hash_mb=16)[0]
    assert any(line.startswith("nodes/s ") for line in lines)


def test_the_line_is_worked_out_from_the_searched_position_even_after_the_board_moves_on():
    board = Board("international")
    result = Engine("international", hash_mb=8).search(board, Limits(depth=6))
    board.push(result.best_move)  # the game goes on before anyone reads the line
    board.push(result.ponder_move)
    replay = Board("international")
    for move in result.pv:  # every move of the line is legal in turn from the searched position
        assert move in replay.legal_moves
        replay.push(move)
    assert len(result.pv) >= 4 and result.pv[:2] == (result.best_move, result.ponder_move)


def _nodes_to_depth(engine: Engine, depth: int = 7) -> int:
    return engine.search(Board("international"), Limits(depth=depth)).nodes


def test_pages_brought_in_during_a_search_change_nothing():
    """The table's pages come in on a thread of their own (prefault) while the first search
    already writes the table: the search is the same as on a table faulted in beforehand."""
    racing = Engine("international", hash_mb=32)  # prefaulting from its creation on
    settled = Engine("international", hash_mb=32, prefault=False)
    settled.prefault()
    settled.clear()  # (waits for the pages)
    assert _nodes_to_depth(racing) == _nodes_to_depth(settled)


def test_warm_leaves_the_engine_as_it_was():
    """warm() searches on a scratch table: the engine's next search is that of a new engine."""
    warmed = Engine("international", hash_mb=16, prefault=False)
    warmed.warm()
    assert _nodes_to_depth(warmed) == _nodes_to_depth(Engine("international", hash_mb=16))


def test_clear_and_resize_while_pages_come_in():
    engine = Engine("russian", hash_mb=64)
    engine.resize(8)  # the old table's page thread is waited for before it is freed
    engine.clear()
    first = engine.search(Board("russian"), Limits(depth=6)).nodes
    engine.clear()
    assert engine.search(Board("russian"), Limits(depth=6)).nodes == first
