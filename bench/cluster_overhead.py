"""What Ray costs a match: games per hour at 0.05 s a move, two workers, with and without Ray.

    python bench/cluster_overhead.py [--games N] [--rounds R]

damka against itself (two in-process engines, 16 MB hash) at 0.05 s a move from the
international openings, two games at once, played three ways on this machine:

* ``threads``: the match runner as ``damka match --concurrency 2`` plays it;
* ``pool``: a local process pool of two processes, each playing whole games through the
  runner's ``play_scheduled`` (what a Ray slot does, without Ray);
* ``ray``: ``damka match --cluster local`` on a Ray started here with two CPUs (its start-up,
  a one-off, is timed on its own and not counted).

At a fixed time per move a game's length in moves decides its time, so the comparison is made
per move: seconds of wall time per move played, and games per hour at the mean game length
over all runs. The modes take turns for ``R`` rounds so that a change in the machine's load
falls on all of them. Target (issue 15): Ray's overhead against the pool under 10%.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.variants import get_variant  # noqa: E402
from protocol.cluster.connect import connected  # noqa: E402
from protocol.match.engines import parse_engine  # noqa: E402
from protocol.match.openings import read_openings  # noqa: E402
from protocol.match.games import EnginePool, play_scheduled, schedule  # noqa: E402
from protocol.match.runner import Match, MatchConfig  # noqa: E402
from protocol.match.timecontrol import TimeControl  # noqa: E402

WORKERS = 2
MOVETIME = 0.05
VARIANT = get_variant("international")


def config(pdn: Path | None, cluster: str | None, games: int) -> MatchConfig:
    openings = read_openings(ROOT / "bench" / "openings_international.txt", VARIANT)
    return MatchConfig(engines=[parse_engine("damka hash=16"),
                                parse_engine("damka name=b hash=16")],
                       control=TimeControl(movetime=MOVETIME), openings=openings,
                       variant=VARIANT, games_per_pair=games, pdn=pdn, cluster=cluster,
                       concurrency=WORKERS, comments=False)


def run_match(cluster: str | None, games: int) -> tuple[float, int, int]:
    """Seconds, games and moves of one match by the runner (threads, or on the cluster)."""
    with tempfile.TemporaryDirectory() as tmp:
        match = Match(config(Path(tmp) / "bench.pdn", cluster, games))
        started = time.perf_counter()
        state = match.run()
        seconds = time.perf_counter() - started
    return seconds, state.done, sum(r.plies for r in state.records)


_slot: tuple | None = None


def _start(cfg: MatchConfig, names: list[str], date: str) -> None:
    global _slot
    pools = [EnginePool(spec, VARIANT, 1) for spec in cfg.engines]
    for pool in pools:  # engines started before the clock, as a Ray slot's check does
        pool.release(pool.acquire(), broken=False)
    _slot = (cfg, names, date, pools)


def _ready(_: int) -> int:
    return os.getpid()


def _play(s) -> int:
    cfg, names, date, pools = _slot
    game, record = play_scheduled(cfg, VARIANT, names, date, pools, s)
    return record.plies


def run_pool(games: int) -> tuple[float, int, int]:
    """The same games by a local pool of processes playing whole games."""
    cfg = config(None, None, games)
    games_list = schedule(2, len(cfg.openings), games)
    date = datetime.date.today().strftime("%Y.%m.%d")
    with multiprocessing.get_context("spawn").Pool(WORKERS, _start,
                                                  (cfg, ["damka", "b"], date)) as pool:
        pool.map(_ready, range(WORKERS))  # both processes started
        started = time.perf_counter()
        plies = sum(pool.imap_unordered(_play, games_list))
        seconds = time.perf_counter() - started
    return seconds, len(games_list), plies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=12, help="games per match (default 12)")
    parser.add_argument("--rounds", type=int, default=2, help="matches per mode (default 2)")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min); {os.cpu_count()} cores; "
          f"{args.games} games x {args.rounds} rounds per mode, {MOVETIME} s/move, "
          f"{WORKERS} workers", flush=True)
    started = time.perf_counter()
    totals = {mode: [0.0, 0, 0] for mode in ("threads", "pool", "ray")}
    with connected("local", num_cpus=WORKERS):
        ray_start = time.perf_counter() - started
        for r in range(args.rounds):
            for mode in totals:
                if mode == "pool":
                    seconds, games, plies = run_pool(args.games)
                else:
                    seconds, games, plies = run_match("local" if mode == "ray" else None,
                                                      args.games)
                t = totals[mode]
                t[0] += seconds
                t[1] += games
                t[2] += plies
                print(f"round {r + 1} {mode:<8} {games} games {plies} moves in {seconds:.1f} s "
                      f"(load {os.getloadavg()[0]:.2f})", flush=True)
    mean_plies = statistics.fmean(t[2] / t[1] for t in totals.values())
    print(f"\nRay start-up (one-off, not counted): {ray_start:.1f} s; "
          f"mean game {mean_plies:.0f} moves")
    print(f"{'mode':<8} {'games':>6} {'moves':>7} {'seconds':>8} {'ms/move':>8} "
          f"{'games/hour':>11} {'vs pool':>8}")
    per_move = {mode: t[0] / t[2] for mode, t in totals.items()}
    for mode, t in totals.items():
        per_hour = 3600 / (per_move[mode] * mean_plies)
        ratio = per_move[mode] / per_move["pool"] - 1
        print(f"{mode:<8} {t[1]:>6} {t[2]:>7} {t[0]:>8.1f} {1000 * per_move[mode]:>8.2f} "
              f"{per_hour:>11.0f} {100 * ratio:>+7.1f}%")
    print(f"load after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
