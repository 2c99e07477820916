"""Parallel search (Lazy SMP) and parallel perft: the shared table under concurrent writers,
the same answers as one thread, helpers that end with their search, and every place a user sets the threads.

These tests need two cores (the machines that run them have them). Speed-ups are measured in
bench/smp_speed.py and bench/perft_speed.py, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine import Board, _core, get_variant, parse_fen
from engine.search import MATE_THRESHOLD, Engine, Limits, Searcher, _search
from engine.threads import check_threads, max_threads
from protocol.hub.text import parse_line
from protocol.match.engines import EngineSpecError, parse_engine

from conftest import PERFT_JSON
from hub_process import HubProcess
from material_search import winning_moves

REPO = Path(__file__).resolve().parents[1]
THREADS = 2
# 36 plies of depth-7 self-play from the start (bench/smp_speed.py's middlegame)
MIDDLEGAME = ("W:W26,31,32,33,36,38,39,42,43,45,46,48,49,50:B1,2,3,4,7,12,13,14,16,17,18,19,22,"
              "23")


def damka(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "protocol", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


# -- the shared table ------------------------------------------------------------------------


def test_table_entries_survive_concurrent_writers():
    """Four threads store and probe the same crowded buckets at once, each entry's data made
    from its key: every entry a probe accepts must be one key's data, whole."""
    variant = get_variant("international")
    searcher = Searcher(_core.core_rules(variant), variant.name, 1)
    results = [None] * 4

    def work(n: int) -> None:
        results[n] = _search.table_stress(searcher, 1000 + n, 400_000)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hits = sum(r[0] for r in results)
    bad = sum(r[1] for r in results)
    assert bad == 0, f"{bad} torn entries accepted as valid out of {hits} hits"
    assert hits > 10_000  # the probes did find entries the others were rewriting


def test_table_stress_sees_data_of_the_probed_key_only():
    # one thread, as many keys as the bucket holds: every probe after the first stores hits
    variant = get_variant("english")
    searcher = Searcher(_core.core_rules(variant), variant.name, 1)
    hits, bad = _search.table_stress(searcher, 7, 50_000, keys=4)
    assert hits > 20_000 and bad == 0


@pytest.mark.parametrize("key_a, key_b", [(0x1234_5678_9ABC_DEF1, 0x0FED_CBA9_8765_4321),
                                          (0xFFFF_0000_FFFF_0000, 0x0000_FFFF_0000_FFFF),
                                          (0x8000_0000_0000_0001, 0x4000_0000_0000_0001)])
def test_a_half_written_entry_is_never_valid(key_a, key_b):
    """The interleaving the stress test can only hope to catch, made on purpose: one key's
    check word with another key's data word. Neither key may find it."""
    variant = get_variant("international")
    searcher = Searcher(_core.core_rules(variant), variant.name, 1)
    assert _search.table_half_written(searcher, key_a, key_b) == (False, False)


# -- the same answers as one thread ----------------------------------------------------------

MATES = [
    ("international", "W:WK46,14:BK5", 8),
    ("english", "W:WK21,K26,K31:BK8", 12),
    ("russian", "W:WKa1,Kc1,Ke1:BKh8", 10),
    ("italian", "W:WK24,K27,K30:BK5", 12),
]


def _fastest_wins(variant: str, board: Board, score: int, depth: int) -> set:
    """The moves that win as fast as ``score`` says, each checked by a one-thread search."""
    engine = Engine(variant, hash_mb=8)
    fastest = set()
    for move in board.legal_moves:
        after = board.copy()
        after.push(move)
        engine.clear()
        reply = engine.search(after, Limits(depth=depth - 1))
        if reply.best_move is None or -reply.score - 1 >= score:  # (one ply further away)
            fastest.add(move)
    return fastest


@pytest.mark.parametrize("variant, fen, depth", MATES, ids=[v for v, _, _ in MATES])
def test_forced_win_same_score_and_a_winning_move_with_threads(variant, fen, depth):
    board = Board(variant, fen)
    one = Engine(variant, hash_mb=8).search(board, Limits(depth=depth))
    assert one.score > MATE_THRESHOLD
    many = Engine(variant, hash_mb=8, threads=THREADS).search(board, Limits(depth=depth))
    assert many.score == one.score and many.mate == one.mate
    assert one.best_move in _fastest_wins(variant, board, one.score, depth)
    assert many.best_move in _fastest_wins(variant, board, one.score, depth)


SHOTS = [
    ("international", "W:W28,33,38,39,42,44:B9,12,14,17,19", 3),
    ("international", "W:W23,24,31,37,41,45,47:B6,13,14,15,16,17,21", 3),
    ("english", "W:W23,26,28,30,31:B5,7,8,15,16", 3),
]


@pytest.mark.parametrize("variant, fen, plies", SHOTS)
def test_the_one_winning_shot_is_played_on_every_thread_count(variant, fen, plies):
    board = Board(variant, fen)
    winning = winning_moves(board, plies)
    assert len(winning) == 1, "the proof: exactly one move wins material"
    one = Engine(variant, hash_mb=8).search(board, Limits(depth=10))
    many = Engine(variant, hash_mb=8, threads=THREADS).search(board, Limits(depth=10))
    assert one.best_move == many.best_move and one.best_move in winning
    assert one.score >= 100 and many.score >= 100


def test_one_thread_stays_deterministic_and_threads_count_every_node():
    board = Board("international")
    counts = {Engine("international", hash_mb=8).search(board, Limits(depth=9)).nodes
              for _ in range(2)}
    assert len(counts) == 1
    seen = []
    engine = Engine("international", hash_mb=8, threads=THREADS)
    result = engine.search(board, Limits(depth=9), on_info=seen.append)
    assert result.depth == 9 and result.best_move in board.legal_moves
    # the helpers' nodes are counted: they search all the time the main search does
    assert result.nodes > 0 and seen[-1].nodes <= result.nodes


def test_weaker_levels_search_on_one_thread():
    board = Board("international")
    one = Engine("international", hash_mb=8, level="easy").search(board, Limits(depth=9))
    two = Engine("international", hash_mb=8, level="easy", threads=THREADS).search(
        board, Limits(depth=9))
    assert (one.best_move, one.score, one.nodes) == (two.best_move, two.score, two.nodes)


def _main_and_helper(fen: str | None = None, depth_limit: int = 6):
    variant = get_variant("international")
    rules = _core.core_rules(variant)
    main = Searcher(rules, variant.name, 8)
    board = Board("international") if fen is None else Board("international", parse_fen(fen, variant))
    p = board.position
    moves = main.set_position(p.white, p.black, p.kings, p.white_to_move)
    main.start()
    main.set_depth_limit(depth_limit)
    helper = Searcher(rules, variant.name, 0)
    helper.follow(main, 1)
    return main, helper, moves


def test_a_helper_publishes_its_completed_iteration_and_tells_the_main_search():
    """A helper that completes the iteration the main search is on publishes it whole (a root
    move and the line that starts with it) and interrupts the main search, which can tell that
    interruption from a stop; it stops at the main search's depth limit."""
    main, helper, moves = _main_and_helper(depth_limit=6)
    assert main.helper_iteration(helper) is None  # nothing completed yet
    main.set_iteration(3)
    worker = threading.Thread(target=helper.run_helper)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()  # it ended at the depth limit, without a stop
    depth, score, index, pv = main.helper_iteration(helper)
    assert depth == 6 and 0 <= index < len(moves) and abs(score) < MATE_THRESHOLD
    origin, dest, captured, _path, promotes = moves[index]
    assert pv[0] == (origin, dest, captured, promotes) and len(pv) >= 2
    assert main.stopped  # interrupted ...
    assert main.take_helper_ahead() and not main.stopped  # ... by the helper, not stopped
    assert not main.take_helper_ahead()


def test_a_real_stop_is_not_taken_for_a_helper_ahead():
    main, helper, _ = _main_and_helper(depth_limit=4)
    main.stop()
    main.set_iteration(2)
    worker = threading.Thread(target=helper.run_helper)
    worker.start()
    worker.join(timeout=60)
    assert main.helper_iteration(helper)[0] == 4
    assert main.stopped and not main.take_helper_ahead() and main.stopped


def test_a_helper_leaves_an_iteration_the_main_search_has_gone_beyond():
    """Once the main search begins a deeper iteration than the one a helper is on, the
    helper's result can no longer be used: it abandons that iteration, unfinished, and joins
    the main search's."""
    main, helper, _ = _main_and_helper(depth_limit=60)
    main.set_iteration(2)
    worker = threading.Thread(target=helper.run_helper)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while helper.helper_depth < 13 and time.monotonic() < deadline:
            time.sleep(0.001)
        stale = helper.helper_depth
        assert stale >= 13
        main.set_iteration(40)
        while helper.helper_depth != 40 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert helper.helper_depth == 40
        completed = main.helper_iteration(helper)
        assert completed is not None and completed[0] < stale  # never finished
    finally:
        helper.stop()
        worker.join(timeout=60)
    assert not worker.is_alive()


def test_threads_put_off_the_moves_another_thread_is_searching():
    """With two threads each defers a move whose position the other is searching to the end of
    its list (they split an iteration's work instead of repeating it); one thread never does,
    so it stays the plain, deterministic search."""
    board = Board("international", MIDDLEGAME)
    engine = Engine("international", hash_mb=16, threads=THREADS)
    result = engine.search(board, Limits(depth=14))
    assert result.depth == 14 and result.best_move in board.legal_moves
    assert engine._searcher.deferred + sum(h.deferred for h in engine._helpers) > 0
    one = Engine("international", hash_mb=16, threads=1)
    assert one.search(board, Limits(depth=14)).depth == 14
    assert one._searcher.deferred == 0


def test_two_threads_reach_the_depth_asked_for_and_no_deeper():
    engine = Engine("international", hash_mb=16, threads=THREADS)
    seen = []
    result = engine.search(Board("international"), Limits(depth=11), on_info=seen.append)
    assert result.depth == 11 and result.best_move in Board("international").legal_moves
    assert max(info.depth for info in seen) == 11


# -- stop and ponder -------------------------------------------------------------------------


def test_no_helper_outlives_its_search():
    # (stop and ponder with two threads: test_search.py runs its tests on 1 and 2 threads)
    engine = Engine("international", hash_mb=16, threads=THREADS)
    board = Board("international")
    future = engine.search_async(board, Limits(infinite=True))
    time.sleep(0.2)
    engine.stop()
    assert future.result(timeout=2.0).best_move in board.legal_moves
    # the answer does not wait for the helpers, but they stop at once (and the engine
    # waits for them before it touches their state again)
    deadline = time.monotonic() + 2.0
    while _helper_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _helper_threads()
    assert engine.search(board, Limits(depth=4)).depth == 4  # and it searches again
    engine.clear()
    assert not _helper_threads()


def _helper_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("damka-helper")]


def test_stop_before_the_helpers_start_is_not_lost():
    engine = Engine("international", hash_mb=16, threads=THREADS)
    future = engine.search_async(Board("international"), Limits(infinite=True))
    engine.stop()
    assert future.result(timeout=2.0).best_move is not None


# -- where users set it ----------------------------------------------------------------------


def test_engine_threads_are_validated_and_can_change():
    with pytest.raises(ValueError, match="threads must be between 1 and"):
        Engine("international", threads=0)
    with pytest.raises(ValueError, match="threads must be between 1 and"):
        Engine("international", threads=max_threads() + 1)
    engine = Engine("international", hash_mb=4)
    assert engine.threads == 1
    engine.set_threads(THREADS)
    assert engine.threads == THREADS
    assert engine.search(Board("international"), Limits(depth=5)).depth == 5
    engine.set_threads(1)
    assert engine.threads == 1
    assert check_threads(1) == 1
    with pytest.raises(ValueError):
        check_threads(True)


def test_match_spec_threads():
    assert parse_engine("damka threads=2").threads == 2
    assert parse_engine("damka").threads == 1
    for bad in ("damka threads=0", f"damka threads={max_threads() + 1}", "damka threads=two"):
        with pytest.raises(EngineSpecError):
            parse_engine(bad)
    with pytest.raises(EngineSpecError):
        parse_engine("dxp=localhost:1 threads=2")


def test_cli_analyse_threads():
    run = damka("analyse", "--depth", "6", "--threads", str(THREADS))
    assert run.returncode == 0 and run.stderr == ""
    assert f"threads {THREADS}" in run.stdout.splitlines()[0]
    assert run.stdout.splitlines()[-1].startswith("bestmove ")
    for bad in ("0", str(max_threads() + 1), "x"):
        run = damka("analyse", "--depth", "2", "--threads", bad)
        assert run.returncode == 2 and "threads" in run.stderr
        assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1


def test_cli_dxp_takes_threads():
    from protocol.cli import UsageError, build_parser

    args = build_parser().parse_args(["dxp", "--threads", str(THREADS)])
    assert args.threads == THREADS
    assert build_parser().parse_args(["dxp"]).threads == 1
    with pytest.raises(UsageError):
        build_parser().parse_args(["dxp", "--threads", "0"])


def test_hub_threads_param_is_declared_and_validated():
    hub = HubProcess()
    try:
        lines = hub.handshake()
        params = {args["name"]: args for cmd, args in map(parse_line, lines) if cmd == "param"}
        assert params["threads"] == {"name": "threads", "value": "1", "type": "int", "min": "1",
                                     "max": str(max_threads())}
        for bad in ("0", str(max_threads() + 1), "many"):
            hub.send(f"set-param name=threads value={bad}")
            assert hub.recv().startswith("error message=")
        hub.send(f"set-param name=threads value={THREADS}")
        hub.send("pos start")
        hub.send("level depth=5")
        hub.send("go think")
        line, _ = hub.expect("done", 20)
        move = parse_line(line)[1]["move"]
        assert Board("international").parse_move(move) in Board("international").legal_moves
    finally:
        hub.close()


# -- parallel perft --------------------------------------------------------------------------


def _perft_entries(low: int, high: int) -> list[dict]:
    ours = {"international", "english", "russian", "brazilian", "spanish", "italian", "czech"}
    return [e for e in json.loads(PERFT_JSON.read_text(encoding="utf-8"))
            if e["variant"] in ours and low <= e["nodes"] <= high and e["depth"] >= 3]


@pytest.mark.parametrize("entry", _perft_entries(20_000, 400_000),
                         ids=lambda e: f"{e['variant']}-{e['name']}-{e['depth']}")
def test_parallel_perft_gives_the_known_counts(entry):
    variant = get_variant(entry["variant"])
    position = parse_fen(variant, entry["fen"])
    assert _core.perft(variant, position, entry["depth"], threads=THREADS) == entry["nodes"]


def test_parallel_divide_matches_one_thread():
    variant = get_variant("international")
    position = parse_fen(variant, variant.start_fen)
    assert _core.divide(variant, position, 5, threads=THREADS) == _core.divide(variant, position, 5)


def test_cli_perft_threads_gives_the_known_counts():
    entry = max(_perft_entries(0, 1_100_000), key=lambda e: e["nodes"])
    run = damka("perft", "--variant", entry["variant"], "--fen", entry["fen"],
                "--depth", str(entry["depth"]), "--threads", str(THREADS), "--json")
    assert run.returncode == 0 and run.stderr == ""
    last = json.loads(run.stdout.splitlines()[-1])
    assert (last["depth"], last["nodes"]) == (entry["depth"], entry["nodes"])
    run = damka("perft", "--depth", "2", "--threads", "0")
    assert run.returncode == 2 and "threads" in run.stderr


# -- perft's progress ------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, THREADS])
def test_perft_progress_counts_every_subtree_and_the_known_total(threads):
    entry = max(_perft_entries(0, 400_000), key=lambda e: e["nodes"])
    variant = get_variant(entry["variant"])
    position = parse_fen(variant, entry["fen"])
    heard: list[tuple[int, int]] = []
    nodes = _core.perft(variant, position, entry["depth"], threads,
                        on_item=lambda done, total: heard.append((done, total)))
    assert nodes == entry["nodes"]
    total = heard[0][1]
    assert total > 1 and heard == [(n, total) for n in range(1, total + 1)]


def test_divide_progress_is_one_step_per_root_move():
    variant = get_variant("international")
    position = parse_fen(variant, variant.start_fen)
    heard: list[tuple[int, int]] = []
    rows = _core.divide(variant, position, 5, on_item=lambda done, total: heard.append((done, total)))
    assert rows == _core.divide(variant, position, 5)
    assert heard == [(n, len(rows)) for n in range(1, len(rows) + 1)]


def test_cli_perft_shows_progress_on_a_terminal_only(monkeypatch, capsys):
    import protocol.perft_command
    from protocol.cli import main

    entry = max(_perft_entries(0, 400_000), key=lambda e: e["nodes"])
    command = ["perft", "--variant", entry["variant"], "--fen", entry["fen"],
               "--depth", str(entry["depth"])]
    monkeypatch.setattr(protocol.perft_command, "PERFT_PROGRESS_AFTER", 0.0)  # every depth after the first
    assert main(command) == 0
    assert capsys.readouterr().err == ""  # not a terminal: no progress line
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(command) == 0
    out, err = capsys.readouterr()
    assert f"depth {entry['depth']}: " in err and " subtrees" in err  # (a tqdm bar)
    assert err.endswith("\r")  # the line is cleared, the counts stay on stdout
    last = out.splitlines()[-1].split()
    assert (int(last[0]), int(last[1])) == (entry["depth"], entry["nodes"])
