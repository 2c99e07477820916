"""Perft speed from the start position of every rule set, with dame-rs side by side.

Run on purpose (never part of the test run):

    python bench/perft_speed.py                 # every rule set at its default depth
    python bench/perft_speed.py international:9 russian:12

Each line gives nodes, seconds and million nodes per second (single thread). When dame-rs
is installed (`pip install dame-rs`), international perft is timed with it in the same run
and the ratio is printed.
"""

from __future__ import annotations

import sys
import time

from engine import _core
from engine.fen import parse_fen
from engine.variants import get_variant

#: depths that take several seconds each on a 2-core machine of this project's kind
DEFAULT = {
    "international": 9,
    "english": 12,
    "russian": 12,
    "brazilian": 12,
    "spanish": 13,
    "italian": 13,
    "czech": 12,
}


def time_damka(name: str, depth: int) -> tuple[int, float]:
    variant = get_variant(name)
    position = parse_fen(variant, variant.start_fen)
    start = time.perf_counter()
    nodes = _core.perft(variant, position, depth)
    return nodes, time.perf_counter() - start


def time_dame_rs(depth: int) -> tuple[int, float] | None:
    try:
        import dame  # dame-rs, the Rust peer named in the issue
    except ImportError:
        return None
    board = dame.Board()
    start = time.perf_counter()
    nodes = dame.perft(board, depth)
    return nodes, time.perf_counter() - start


def main(argv: list[str]) -> int:
    jobs = [(a, int(b)) for a, b in (arg.split(":") for arg in argv)] if argv else list(DEFAULT.items())
    print(f"backend: {_core.BACKEND}")
    print(f"{'engine':8} {'variant':14} {'depth':>5} {'nodes':>14} {'seconds':>8} {'Mnodes/s':>9}")
    ours = {}
    for name, depth in jobs:
        nodes, seconds = time_damka(name, depth)
        ours[name] = (nodes, seconds, depth)
        print(f"{'damka':8} {name:14} {depth:5} {nodes:14,} {seconds:8.2f} {nodes / seconds / 1e6:9.1f}")
    if "international" in ours:
        depth = ours["international"][2]
        peer = time_dame_rs(depth)
        if peer is None:
            print("dame-rs not installed: pip install dame-rs==0.2.0 to compare")
        else:
            nodes, seconds = peer
            print(f"{'dame-rs':8} {'international':14} {depth:5} {nodes:14,} {seconds:8.2f} {nodes / seconds / 1e6:9.1f}")
            ratio = seconds / ours["international"][1]
            print(f"damka is {ratio:.1f}x as fast as dame-rs at international perft({depth})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
