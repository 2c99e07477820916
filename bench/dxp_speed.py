"""DXP speed and reliability: our initiator against our follower over loopback.

Run on purpose (never part of the test run):

    python bench/dxp_speed.py                  # 20 complete games at 0.1 s per move
    python bench/dxp_speed.py --games 4 --move-time 0.05

The follower runs in a second process (as another program would), on 127.0.0.1 and a port
the system picks, one connection for the whole match; games start from the start position (colours alternate) and are played to
the end by the rules (no move limit). Reported: games and plies, protocol errors on either
side (the target is zero), and the message handling per move beyond the search itself: from
the moment the opponent's MOVE was read off the socket to our MOVE going out, less the
search's own time (the target is under 1 ms).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import BACKEND  # noqa: E402
from engine.search import Engine  # noqa: E402
from protocol.dxp.listener import DxpServer, connect, run_connection  # noqa: E402
from protocol.dxp.session import DxpSession, DxpSettings, MatchSettings  # noqa: E402


def follower(server: DxpServer, move_time: float, hash_mb: int, report) -> None:
    """The follower, in its own process (as it would be against another program): serve one
    connection, then report its protocol errors and handling times."""
    session = DxpSession(Engine("international", hash_mb=hash_mb),
                         DxpSettings(name="follower", movetime=move_time))
    accepted = server.accept()
    if accepted is not None:
        run_connection(accepted[0], session)
    server.close()
    report.put((session.errors, session.handling))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--move-time", type=float, default=0.1)
    parser.add_argument("--hash", type=int, default=32)
    args = parser.parse_args(argv)

    server = DxpServer("127.0.0.1", 0)
    context = multiprocessing.get_context("fork")
    report = context.Queue()
    other = context.Process(target=follower, args=(server, args.move_time, args.hash, report))
    other.start()
    address = server.address
    server.sock.close()  # the follower process holds its own copy

    def log(line: str) -> None:
        if "over after" in line:
            print(f"  {line}", flush=True)

    match = MatchSettings(games=args.games)
    initiator = DxpSession(Engine("international", hash_mb=args.hash),
                           DxpSettings(name="initiator", movetime=args.move_time, match=match), log=log)
    start = time.perf_counter()
    run_connection(connect(*address), initiator)
    wall = time.perf_counter() - start
    follower_errors, follower_handling = report.get(timeout=60)
    other.join(timeout=10)

    records = initiator.records
    complete = [r for r in records if r.result != "*"]
    errors = initiator.errors + follower_errors
    plies = sum(len(r.moves) for r in records)
    print(f"backend {BACKEND}; {args.move_time} s per move")
    print(f"games {len(records)} (complete by the rules: {len(complete)}), plies {plies}, "
          f"wall {wall:.1f} s")
    results: dict[str, int] = {}
    for r in records:
        results[r.result] = results.get(r.result, 0) + 1
    print("results " + ", ".join(f"{k}: {v}" for k, v in sorted(results.items())))
    print(f"protocol errors {len(errors)}" + ("" if not errors else ": " + "; ".join(errors[:5])))
    handling = initiator.handling + follower_handling
    for name, times in (("initiator", initiator.handling), ("follower", follower_handling),
                        ("both", handling)):
        if times:
            ms = sorted(h * 1000 for h in times)
            p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            print(f"handling per move beyond the search, {name:9} (ms): mean {statistics.mean(ms):.3f}, "
                  f"median {statistics.median(ms):.3f}, p99 {p99:.3f}, max {ms[-1]:.3f} "
                  f"over {len(ms)} moves")
    ok = not errors and len(complete) == args.games and bool(handling) and statistics.mean(handling) < 0.001
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
