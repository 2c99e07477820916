"""Parallel search and parallel perft: N threads against one (issue 13's targets).

Run on purpose (never part of the test run), on a quiet machine:

    python bench/smp_speed.py                       # 10 s searches, perft(11), 2 threads
    python bench/smp_speed.py --seconds 5 --perft-depth 10 --threads 2
    python bench/smp_speed.py --variant russian --perft-depth 0     # an 8x8 rule set

For the start and a middlegame position of the rule set (international by default):

* one thread searches for ``--seconds``; its last completed depth D and when it completed;
* N threads search for the same time: total nodes per second against one thread's;
* N threads search to depth D: the time it takes against one thread's time to D, in one run
  and then as the mean of ``--runs`` runs against one thread's own time to D (Lazy SMP
  varies from run to run). A depth counts as reached when the main search completes it or
  takes a helper's completed iteration of it.

Then the stop latency of an N-thread search (the worst of five stops), the resident memory
a helper thread adds, and international perft to ``--perft-depth`` on one and on N threads.

Targets (2 threads on a 2-core machine): nodes/s at least 1.8x, time to depth at most 0.7x,
perft at least 1.85x. Lazy SMP is not deterministic: rerun to see the spread. Print
``uptime`` next to the figures: on a loaded machine they say little.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from engine import Board, _core
from engine.fen import parse_fen
from engine.search import Engine, Limits, _search
from engine.timeman import TimeSettings
from engine.variants import get_variant

POSITIONS = {
    "international": {
        "start": None,
        # 36 plies of depth-7 self-play from the start: 14 men each, 12 moves to choose from
        "middlegame": "W:W26,31,32,33,36,38,39,42,43,45,46,48,49,50:B1,2,3,4,7,12,13,14,16,"
                      "17,18,19,22,23",
    },
    "russian": {
        "start": None,
        # 20 plies of depth-11 self-play from the start: 8 men each, 10 moves to choose from
        "middlegame": "W:Wa1,c1,e1,g1,d2,f2,c3,c5:Ba5,h6,a7,e7,g7,b8,d8,f8",
    },
}
HASH_MB = 64
VARIANT = "international"  # the rule set of the searches (--variant)


def _engine(threads: int) -> Engine:
    return Engine(VARIANT, hash_mb=HASH_MB, threads=threads,
                  time_settings=TimeSettings(move_overhead=0.0))


def timed_search(fen: str | None, threads: int,
                 seconds: float) -> tuple[int, float, float, dict]:
    """(nodes, seconds, CPU seconds of the process, {depth: seconds when it completed}) of a
    search stopped after ``seconds`` (an infinite search and a timer: no time manager
    decides anything)."""
    engine = _engine(threads)
    done: dict[int, float] = {}

    def note(info) -> None:
        if info.final:
            done[info.depth] = info.time

    timer = threading.Timer(seconds, engine.stop)
    cpu = time.process_time()
    timer.start()
    result = engine.search(Board(VARIANT, fen), Limits(infinite=True), on_info=note)
    timer.cancel()
    return result.nodes, result.time, time.process_time() - cpu, done


def time_to_depth(fen: str | None, threads: int, depth: int) -> tuple[float, int, int]:
    """(seconds, nodes of all threads, nodes of the main thread) of a search to ``depth``."""
    engine = _engine(threads)
    result = engine.search(Board(VARIANT, fen), Limits(depth=depth))
    # (the main search's own count: a bench may look inside, the API reports the total)
    return result.time, result.nodes, engine._searcher.nodes


def time_ratios(fen: str | None, threads: int, depth: int, runs: int,
                schemes: list[tuple[int, int]]) -> dict[tuple[int, int], list[float]]:
    """Time to ``depth`` on ``threads`` threads over one thread's, for ``runs`` runs of each
    Lazy SMP scheme (defer, ahead), taken in turn so that the machine's drift hits each alike."""
    one = time_to_depth(fen, 1, depth)[0]
    ratios: dict[tuple[int, int], list[float]] = {scheme: [] for scheme in schemes}
    for _ in range(runs):
        for scheme in schemes:
            _search._set_smp_scheme(*scheme)
            ratios[scheme].append(time_to_depth(fen, threads, depth)[0] / one)
    _search._set_smp_scheme(*schemes[0])
    return ratios


def stop_latency(threads: int, trials: int = 5) -> float:
    """The longest time from stop() to the search's answer, in seconds."""
    engine = _engine(threads)
    worst = 0.0
    for n in range(trials):
        future = engine.search_async(Board(VARIANT), Limits(infinite=True))
        time.sleep(0.3 + 0.1 * n)
        start = time.perf_counter()
        engine.stop()
        future.result()
        worst = max(worst, time.perf_counter() - start)
    return worst


def helper_memory_kb(threads: int, seconds: float = 3.0) -> int:
    """Resident memory each helper thread adds, in KB: the process's resident size after a
    search on ``threads`` threads less that after the same search on one thread with the
    same engine (so the hash table counts in both). It covers the helper's Searcher (stacks,
    killers, history) and the pages of its thread stack the search touched."""
    engine = _engine(1)
    board = Board(VARIANT, POSITIONS[VARIANT]["middlegame"])
    engine.search(board, Limits(movetime=seconds))
    before = _rss_kb()
    engine.set_threads(threads)
    engine.clear()
    engine.search(board, Limits(movetime=seconds))
    return (_rss_kb() - before) // (threads - 1)


def _rss_kb() -> int:
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def perft_speed(depth: int, threads: int) -> tuple[int, float, float]:
    """(nodes, seconds, CPU seconds of the process) of international perft."""
    variant = get_variant("international")
    position = parse_fen(variant, variant.start_fen)
    start, cpu = time.perf_counter(), time.process_time()
    nodes = _core.perft(variant, position, depth, threads=threads)
    return nodes, time.perf_counter() - start, time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="search time (default 10)")
    parser.add_argument("--threads", type=int, default=2, help="threads against one (default 2)")
    parser.add_argument("--perft-depth", type=int, default=11,
                        help="international perft depth, 0 for none (default 11)")
    parser.add_argument("--runs", type=int, default=5,
                        help="runs of the time to depth, 0 for none (default 5)")
    parser.add_argument("--schemes", default="1:0",
                        help="Lazy SMP schemes whose time to depth to compare, DEFER:AHEAD,... "
                             "(DEFER 1: threads defer moves another is searching; AHEAD: plies "
                             "the first helper keeps ahead of the main search; default 1:0, "
                             "the engine's own; the first is used for the other measures)")
    parser.add_argument("--variant", default="international", choices=sorted(POSITIONS),
                        help="rule set of the searches (default international; perft stays "
                             "international)")
    args = parser.parse_args()
    global VARIANT
    VARIANT = args.variant
    schemes = [tuple(int(x) for x in item.split(":")) for item in args.schemes.split(",")]
    _search._set_smp_scheme(*schemes[0])
    n = args.threads
    print(f"{VARIANT}; load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}; {os.cpu_count()} cores; hash {HASH_MB} MB")
    print("(cpu: the CPU seconds the process got, over the wall seconds: on a loaded machine "
          "the threads get less than a core each, and nodes per CPU second show what a thread "
          "does when it runs)")
    print(f"{'position':<11} {'threads':>7} {'nodes':>12} {'Mnodes/s':>9} {'cpu':>5} "
          f"{'M/cpu-s':>8} {'depth':>5} {'t(depth)':>9}   ratios")
    depths = {}
    for name, fen in POSITIONS[VARIANT].items():
        nodes1, secs1, cpu1, done1 = timed_search(fen, 1, args.seconds)
        depth = depths[name] = max(done1)
        nps1 = nodes1 / secs1
        print(f"{name:<11} {1:>7} {nodes1:>12} {nps1 / 1e6:>9.2f} {cpu1 / secs1:>5.2f} "
              f"{nodes1 / cpu1 / 1e6:>8.2f} {depth:>5} {done1[depth]:>9.2f}", flush=True)
        nodesn, secsn, cpun, _ = timed_search(fen, n, args.seconds)
        npsn = nodesn / secsn
        ttd = time_to_depth(fen, n, depth)[0]
        print(f"{name:<11} {n:>7} {nodesn:>12} {npsn / 1e6:>9.2f} {cpun / secsn:>5.2f} "
              f"{nodesn / cpun / 1e6:>8.2f} {depth:>5} {ttd:>9.2f}"
              f"   nodes/s {npsn / nps1:.2f}x, time to depth {depth} {ttd / done1[depth]:.2f}x",
              flush=True)
    if args.runs:
        print(f"time to the depth on {n} threads / one thread's time to it ({args.runs} runs "
              "each):")
        for name, fen in POSITIONS[VARIANT].items():
            depth = depths[name]
            for (defer, ahead), ratios in time_ratios(fen, n, depth, args.runs, schemes).items():
                mean = sum(ratios) / len(ratios)
                print(f"  {name:<11} depth {depth}, defer {defer} ahead {ahead}: mean {mean:.2f}"
                      f"  ({' '.join(f'{r:.2f}' for r in ratios)})", flush=True)
    print(f"stop latency, {n} threads, worst of 5: {stop_latency(n) * 1000:.1f} ms")
    print(f"memory per helper thread: {helper_memory_kb(n)} KB resident besides the shared "
          f"hash table (its search state allocates {_search.STATE_BYTES // 1024} KB)")
    if args.perft_depth > 0:
        nodes1, secs1, cpu1 = perft_speed(args.perft_depth, 1)
        print(f"perft({args.perft_depth}) 1 thread: {nodes1} nodes {secs1:.2f} s "
              f"{nodes1 / secs1 / 1e6:.1f} Mnodes/s, cpu {cpu1 / secs1:.2f}", flush=True)
        nodesn, secsn, cpun = perft_speed(args.perft_depth, n)
        if nodesn != nodes1:
            raise SystemExit(f"parallel perft gave {nodesn}, not {nodes1}")
        print(f"perft({args.perft_depth}) {n} threads: {nodesn} nodes {secsn:.2f} s "
              f"{nodesn / secsn / 1e6:.1f} Mnodes/s, cpu {cpun / secsn:.2f}   "
              f"speed-up {secs1 / secsn:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
