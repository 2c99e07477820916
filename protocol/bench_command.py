"""``damka bench``: search the fixed positions of every rule set (engine.benchmark); the total
node count is a signature of the search. The search loads only when the command runs."""

from __future__ import annotations

import argparse

from engine import BACKEND

from protocol import args as arg

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    from engine.benchmark import DEFAULT_DEPTH, DEFAULT_HASH_MB

    p = subparsers.add_parser(
        "bench",
        help="search fixed positions of every rule set; total nodes and speed",
        description="Search a fixed list of positions of every rule set to a fixed depth with "
                    "one thread (the hash cleared before each) and print the nodes of each, "
                    "then the total node count (a signature of the search) and nodes per "
                    "second.",
    )
    p.add_argument("--depth", type=arg.depth, default=DEFAULT_DEPTH,
                   help=f"search depth, 1..{arg.MAX_DEPTH} (default {DEFAULT_DEPTH})")
    arg.add_hash(p, DEFAULT_HASH_MB)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from engine.benchmark import run_bench

    from protocol.perft_command import nps

    print(f"bench depth {args.depth} hash {args.hash} MB backend {BACKEND}")

    def show(line) -> None:
        r = line.result
        print(f"{line.variant:<14} {r.nodes:>12} {nps(r.nodes, line.seconds):>10}  {line.fen}",
              flush=True)

    nodes, seconds = run_bench(args.depth, args.hash, on_line=show)
    print(f"nodes {nodes}")
    print(f"seconds {seconds:.3f}")
    print(f"nodes/s {nps(nodes, seconds)}", flush=True)
    return 0
