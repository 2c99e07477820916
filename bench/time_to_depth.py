"""Time to depth: how deep one thread sees in a given time, and what each depth costs.

For a fixed set of positions of every rule set (the international start and the middlegame
of issue 31 among them) it searches each for ``--time`` seconds on one thread with a fresh
hash table and prints, per position, the depth completed in 1 s and in ``--time`` s and the
node rate, then the nodes and seconds to each depth with ``--detail``.

    python bench/time_to_depth.py                         # 5 s a position
    python bench/time_to_depth.py --variants international --time 5
    python bench/time_to_depth.py --off prune             # with a search rule switched off
    python bench/time_to_depth.py --depth 18 --detail     # exact nodes to depth 18
    python bench/time_to_depth.py --variants international --weights FILE  # a weights file's rate

With ``--depth`` every position is searched to that depth instead of for a time: the node
counts are exact and repeat, so settings compare on them even on a busy or swinging machine.

Run it on a quiet machine (nothing else holding a core), the variants to compare one after
the other in the same session. The search rules are the core's (bench/search_variant.py).
"""

from __future__ import annotations

import argparse
import json
import sys

from search_variant import add_rule_options, apply_rule_options  # bench/, beside this

POSITIONS: tuple[tuple[str, str, str], ...] = (
    ("international", "start", "W:W31-50:B1-20"),
    ("international", "middlegame",
     "W:W25,28,30,31,35,36,37,39,41,43,44,45,47,48,49,50:B1,3,4,5,6,10,13,14,15,16,17,18,19,20,21,24"),
    ("international", "bench-2", "W:W24,27,28,31,32,37,39,40,42-44,46-48,50:B1,2,6-16,18,26"),
    ("english", "start", "B:W21-32:B1-12"),
    ("english", "middlegame", "B:W21,22,24-26,29,30:B1-5,8,9"),
    ("russian", "start",
     "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"),
    ("russian", "middlegame", "W:Wa1,c1,e1,g1,b2,h2,a3,f4:Bb6,f6,h6,a7,c7,g7,b8,d8"),
    ("brazilian", "middlegame", "B:Wa1,c1,e1,h2,a3,b4,h4,g5:Bd6,c7,e7,g7,b8,d8,f8,h8"),
    ("spanish", "middlegame", "W:W1,2,4-6,8,9,11,12:B18,19,21,23,24,28,29,31,32"),
    ("italian", "middlegame", "W:W21,22,24,25,27-29,31,32:B1,2,4,5,9,10,12,14,15"),
    ("czech", "middlegame", "W:Wa1,c1,e1,g1,b2,d2,g3,c5:Bh4,h6,a7,c7,e7,b8,d8,h8"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time", type=float, default=5.0, help="seconds a position (default 5)")
    parser.add_argument("--variants", default="", help="comma-separated rule sets (default all)")
    parser.add_argument("--depth", type=int, help="search to this depth instead of --time")
    parser.add_argument("--hash", type=int, default=64, help="hash MB (default 64)")
    parser.add_argument("--weights", help="search with this learned weights file (its rule set "
                        "alone: name it in --variants)")
    add_rule_options(parser)
    parser.add_argument("--detail", action="store_true", help="nodes and seconds per depth")
    parser.add_argument("--json", action="store_true", help="one JSON object a position")
    args = parser.parse_args(argv)

    from engine import Board
    from engine.search import Engine, Limits

    apply_rule_options(parser, args)
    if args.weights and len(set(filter(None, args.variants.split(",")))) != 1:
        parser.error("--weights belongs to one rule set: name it alone in --variants")

    wanted = set(filter(None, args.variants.split(",")))
    engines: dict[str, Engine] = {}
    if not args.json:
        print(f"{'position':26} {'d@1s':>5} {'d@' + format(args.time, 'g') + 's':>6} "
              f"{'Mnps':>6}  nodes to the last depth")
    for variant, label, fen in POSITIONS:
        if wanted and variant not in wanted:
            continue
        engine = engines.get(variant)
        if engine is None:
            engine = engines[variant] = Engine(variant, hash_mb=args.hash, weights=args.weights)
            engine.warm()
        engine.clear()
        per_depth: list[tuple[int, int, float]] = []

        def on_info(info, per_depth=per_depth):
            if info.final:
                per_depth.append((info.depth, info.nodes, info.time))

        limits = Limits(depth=args.depth) if args.depth else Limits(movetime=args.time)
        result = engine.search(Board(variant, fen), limits, on_info)
        in_one = max((d for d, _, t in per_depth if t <= 1.0), default=0)
        full = per_depth[-1][0] if per_depth else 0
        nps = result.nodes / result.time if result.time else 0
        name = f"{variant} {label}"
        if args.json:
            print(json.dumps(dict(variant=variant, position=label, fen=fen, depth_1s=in_one,
                                  depth=full, seconds=args.time, nps=round(nps),
                                  depths=[dict(depth=d, nodes=n, seconds=round(t, 4))
                                          for d, n, t in per_depth])))
        else:
            last_nodes = per_depth[-1][1] if per_depth else 0
            print(f"{name:26} {in_one:5} {full:6} {nps / 1e6:6.2f}  {last_nodes:,}")
            if args.detail:
                for d, n, t in per_depth:
                    print(f"    depth {d:3}  {n:>14,} nodes  {t:8.3f} s")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
