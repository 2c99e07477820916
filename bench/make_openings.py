"""Generate varied, balanced openings for engine matches, for any rule set.

    python bench/make_openings.py [count] [plies] [seed] [variant] > bench/openings_VARIANT.txt

Run once and commit the output (a match must not depend on a generator's version). From
the start position, each ply picks at random (seeded) among the moves that a depth-5 search
scores within 0.15 men of the best, so the lines are varied but not silly; a line is kept
when a depth-8 search of its last position is within 0.30 men of equality and no earlier
line reached the same position. The searches use the hand-written ("classic") evaluation, so
the openings do not favour the learned evaluations that the matches test.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.board import Board  # noqa: E402
from engine.search import Engine, Limits  # noqa: E402

MARGIN = 15  # hundredths of a man
BALANCE = 30


def _scores(engine: Engine, board: Board, depth: int) -> dict:
    out = {}
    for move in board.legal_moves:
        board.push(move)
        out[move] = -engine.search(board, Limits(depth=depth)).score
        board.pop()
    return out


def line(engine: Engine, rng: random.Random, plies: int) -> tuple[Board, list[str]] | None:
    board = Board(engine.variant)
    texts = []
    for _ in range(plies):
        scores = _scores(engine, board, 5)
        best = max(scores.values())
        choices = sorted((m for m, s in scores.items() if s >= best - MARGIN), key=str)
        move = rng.choice(choices)
        texts.append(board.pdn(move))
        board.push(move)
    score = engine.search(board, Limits(depth=8)).score
    return (board, texts) if abs(score) <= BALANCE else None


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    plies = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 2024
    variant = sys.argv[4] if len(sys.argv) > 4 else "international"
    rng = random.Random(seed)
    engine = Engine(variant, hash_mb=16, evaluation="classic")
    seen = set()
    print(f"# {count} {engine.variant.name} openings of {plies} plies: python "
          f"bench/make_openings.py {count} {plies} {seed} {engine.variant.name}")
    print("# each ply within 0.15 men of the best move at depth 5; the last position within "
          "0.30 men of equality at depth 8")
    found = 0
    while found < count:
        result = line(engine, rng, plies)
        if result is None:
            continue
        board, texts = result
        if board.position in seen:
            continue
        seen.add(board.position)
        print(" ".join(texts), flush=True)
        found += 1


if __name__ == "__main__":
    main()
