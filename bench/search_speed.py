"""Search speed from the start position of every rule set, with dame-rs side by side.

Run on purpose (never part of the test run):

    python bench/search_speed.py               # 5 seconds per rule set
    python bench/search_speed.py 2 international english

For each rule set: the nodes, nodes per second and the last completed depth of a single-thread
search of the given seconds from the start position (64 MB hash). When dame-rs is installed
(`pip install dame-rs==0.2.0`), its engine searches the international start position for the
same time and its line is printed beside ours.

Targets of issue 3: at least 3 M nodes/s from every start position, and a completed depth of
at least 16 in 5 seconds from the international start.
"""

from __future__ import annotations

import sys

from engine import Board, VARIANTS
from engine.search import Engine, Limits
from engine.timeman import TimeSettings


def ours(variant: str, seconds: float) -> tuple[int, float, int]:
    """(nodes, seconds, completed depth) of one search from the start position."""
    engine = Engine(variant, hash_mb=64, time_settings=TimeSettings(move_overhead=0.0))
    result = engine.search(Board(variant), Limits(movetime=seconds))
    return result.nodes, result.time, result.depth


def dame_rs(seconds: float) -> tuple[int, float, int] | None:
    """The same for dame-rs (international only), or None when it is not installed."""
    try:
        import dame
    except ImportError:
        return None
    result = dame.Engine(hash_mb=64).search(dame.Board(), time=seconds)
    return result.nodes, result.elapsed, result.depth


def line(name: str, nodes: int, seconds: float, depth: int) -> str:
    mnps = nodes / seconds / 1e6 if seconds > 0 else 0.0
    return f"{name:<22} {nodes:>12} {seconds:>8.2f} {mnps:>8.2f} {depth:>6}"


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 5.0
    names = argv[1:] or [v.name for v in VARIANTS]
    print(f"search from the start position, {seconds:g} s each, one thread")
    print(f"{'engine / rule set':<22} {'nodes':>12} {'seconds':>8} {'M nodes/s':>8} {'depth':>6}")
    for name in names:
        print(line(f"damka {name}", *ours(name, seconds)), flush=True)
        if name == "international":
            other = dame_rs(seconds)
            if other is None:
                print("dame-rs                (not installed: pip install dame-rs==0.2.0)")
            else:
                print(line("dame-rs international", *other), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
