"""A ``ponder-hit`` sent right after ``go ponder`` is never lost (issue 30 item 6).

``Engine.ponderhit`` used to reach only a search whose root was set up; the search thread
sets it up after the last search's helper threads have stopped, which on a loaded machine
takes a while, and a ponder hit in that window was dropped: the engine pondered on and lost
on time. It is latched now, as ``stop`` is.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from engine import Board
from engine.search import Engine, Limits

from hub_process import HubProcess

#: slack for a loaded 2-core machine
LOAD = 1.0


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_a_ponder_hit_before_the_search_has_its_root_is_kept(threads, monkeypatch):
    engine = Engine("international", hash_mb=8, threads=threads)
    join = engine._join_helpers

    def slow_join() -> None:  # the last search's helpers, slow to stop on a busy machine
        time.sleep(0.3)
        join()

    monkeypatch.setattr(engine, "_join_helpers", slow_join)
    board = Board("international")
    future = engine.search_async(board, Limits(movetime=0.1), ponder=True)
    engine.ponderhit()  # before the search thread has set up its root
    result = future.result(timeout=0.3 + 0.1 + 2 * LOAD)
    assert result.best_move in board.legal_moves
    # the latch is for that search only: the next ponder search ponders until told
    monkeypatch.setattr(engine, "_join_helpers", join)
    future = engine.search_async(board, Limits(movetime=0.1), ponder=True)
    time.sleep(0.3)
    assert not future.done(), "a ponder hit of the search before carried over"
    engine.stop()
    assert future.result(timeout=LOAD).best_move in board.legal_moves


def test_a_ponder_hit_when_idle_is_not_kept_for_the_next_search():
    engine = Engine("international", hash_mb=8)
    engine.ponderhit()
    future = engine.search_async(Board("international"), Limits(movetime=0.05), ponder=True)
    time.sleep(0.25)
    assert not future.done()
    engine.stop()
    future.result(timeout=LOAD)


BUSY_LOOP = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass\n"


@pytest.mark.parametrize("threads", [1, 2], ids=["1-thread", "2-threads"])
def test_go_ponder_then_ponder_hit_in_one_write_under_load(threads):
    """The sequence of the report: ``pos``, ``level``, ``go ponder`` and ``ponder-hit`` in one
    write, again and again, with two busy loops beside the engine; every one ends in done."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(2)]
    hub = HubProcess()
    try:
        hub.handshake(threads=str(threads), hash_mb="16")
        late = []
        for i in range(20):
            hub.proc.stdin.write("pos\nlevel move-time=0.1\ngo ponder\nponder-hit\n")
            hub.proc.stdin.flush()
            try:
                hub.expect("done", timeout=3.0)
            except AssertionError:
                late.append(i)
                hub.send("stop")
                hub.expect("done", timeout=10.0)
        assert late == [], f"no done within 3 s after the ponder hit of rounds {late}"
        hub.send("quit")
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        hub.proc.kill()
        hub.proc.wait()
