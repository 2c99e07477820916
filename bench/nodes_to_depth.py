"""Nodes to a fixed depth over many positions: the search's size, machine-independent.

The time-to-depth bench reads three international positions, and one position's tree is
chaotic: a setting may halve it and double the next. This bench searches every ``--every``-th
opening of an openings file (the position after its moves) to ``--depth`` on one thread with a
fresh hash table, and prints the geometric mean and the total of the nodes; the counts are
exact and repeat, so two settings compare on them even beside other work on the machine.

    python bench/nodes_to_depth.py --depth 14
    python bench/nodes_to_depth.py --depth 14 --off extend_single
    python bench/nodes_to_depth.py --variant english --openings bench/openings_english.txt

The search rules are the core's (bench/search_variant.py). Fewer nodes is not stronger by
itself: a setting goes in on a match.
"""

from __future__ import annotations

import argparse
import math
import sys

from search_variant import add_rule_options, apply_rule_options  # bench/, beside this


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="international", help="rule set (international)")
    parser.add_argument("--openings", default="bench/openings_international_200.txt",
                        help="openings file (bench/openings_international_200.txt)")
    parser.add_argument("--every", type=int, default=10,
                        help="search every N-th opening (default 10)")
    parser.add_argument("--depth", type=int, default=14, help="depth to search (default 14)")
    parser.add_argument("--hash", type=int, default=64, help="hash MB (default 64)")
    parser.add_argument("--each", action="store_true", help="print every position's count")
    add_rule_options(parser)
    args = parser.parse_args(argv)
    if args.every < 1 or args.depth < 1:
        parser.error("--every and --depth must be at least 1")

    from engine.search import Engine, Limits
    from protocol.match.openings import read_openings

    apply_rule_options(parser, args)
    openings = read_openings(args.openings, args.variant)[::args.every]
    engine = Engine(args.variant, hash_mb=args.hash)
    engine.warm()
    counts = []
    for number, opening in enumerate(openings, start=1):
        engine.clear()
        result = engine.search(opening.board(engine.variant), Limits(depth=args.depth))
        counts.append(result.nodes)
        if args.each:
            print(f"{number:4} {result.nodes:>14,}  {opening.label}")
            sys.stdout.flush()
    geomean = math.exp(sum(math.log(n) for n in counts) / len(counts))
    print(f"{len(counts)} positions, depth {args.depth}: geometric mean {geomean:,.0f} nodes, "
          f"total {sum(counts):,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
