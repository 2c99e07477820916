"""Endgame databases: build time, disk size, probes per second and search speed with probing.

Run on purpose (never part of the test run):

    python bench/egtb_speed.py english 4            # build into a temporary directory
    python bench/egtb_speed.py english 5 --dir D    # reuse / resume the databases in D
    python bench/egtb_speed.py international 4 --workers 2 --searches 20

Prints: the build (wall and CPU seconds, positions examined per second, bytes on disk; a
resumed build times only what was left), probes per second on random positions of the
databases (Python probe through the block cache, and the C probe the search uses), and the
nodes per second of fixed-depth searches of random database positions with the databases on
and off, from random positions with two pieces more than the databases (nodes differ: a
probed node ends its branch). Check ``uptime`` first: on a loaded
machine the figures are not comparable.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

from engine.board import Board
from engine.egtb import Material, Tablebase, build, signatures
from engine.egtb.builder import solver
from engine.position import Position
from engine.search import Engine, Limits
from engine.variants import get_variant


def random_positions(variant, materials: list[Material], count: int,
                     rng: random.Random) -> list[Position]:
    s = solver(variant)
    out = []
    while len(out) < count:
        m: Material = rng.choice(materials)
        masks = s.position(tuple(m), rng.randrange(s.slice_size(*m)))
        if masks is not None:
            out.append(Position(*masks, True))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variant")
    ap.add_argument("pieces", type=int)
    ap.add_argument("--dir", default=None, help="database directory (default: a temporary one)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--probes", type=int, default=200_000)
    ap.add_argument("--searches", type=int, default=30)
    ap.add_argument("--depth", type=int, default=8)
    args = ap.parse_args()
    variant = get_variant(args.variant)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.dir or tmp
        wall, cpu = time.perf_counter(), time.process_time()
        result = build(variant, args.pieces, directory, workers=args.workers)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        folder = os.path.join(directory, variant.name)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"build {variant.name} {args.pieces} pieces: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"{result.examined:,} positions examined ({result.rate:,.0f}/s), "
              f"{result.entries:,} entries built, {result.loaded} pairs reused, "
              f"{size / 1e6:.2f} MB on disk")

        tb = Tablebase(variant, directory)
        rng = random.Random(1)
        positions = random_positions(variant, tb.materials, args.probes, rng)
        start = time.perf_counter()
        for p in positions:
            tb.probe(p)
        seconds = time.perf_counter() - start
        print(f"probe (Python, block cache): {len(positions) / seconds:,.0f} probes/s")
        s = tb.memory_solver()
        start = time.perf_counter()
        for p in positions:
            s.probe(p.white, p.black, p.kings, p.white_to_move)
        seconds = time.perf_counter() - start
        print(f"probe (C tables in memory, through Python): {len(positions) / seconds:,.0f} probes/s")

        # searches start two pieces above the databases, so probes happen inside the tree
        bigger = [m for m in signatures(args.pieces + 2) if m.pieces == args.pieces + 2
                  and max(m) < 8]
        boards = [Board(variant, p) for p in random_positions(variant, bigger,
                                                              args.searches * 3, rng)]
        boards = [b for b in boards if b.legal_moves][: args.searches]
        for label, egtb in (("off", None), ("on", tb)):
            engine = Engine(variant, egtb=egtb)
            nodes, seconds = 0, 0.0
            for board in boards:
                engine.clear()
                r = engine.search(board, Limits(depth=args.depth))
                nodes += r.nodes
                seconds += r.time
            print(f"search depth {args.depth}, probing {label}: {nodes:,} nodes in {seconds:.2f} s, "
                  f"{nodes / seconds:,.0f} nodes/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
