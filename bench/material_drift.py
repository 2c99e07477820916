"""How much a weights file thinks men are worth: the static score of the start position with
1, 2 and 3 of White's men taken away, Black to move (the mean over 30 random choices of the
men, the same choices for every file).

A fit that lets the material terms drift can make being men ahead worth little or even a
loss (docs/training.md, "Russian: the material held"); the validation loss does not show it,
this does in a second. Run on purpose (never part of the test run):

    python bench/material_drift.py russian engine/weights/russian.dkw new.dkw

The start position taken apart exaggerates what a file does in play (docs/training.md,
"Deviations"); ``--data DIR`` also gives the mean static score of real positions: the
self-play data's quiet positions without kings where the side to move is one or two men
up, with the score the side up went on to make.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from engine import Board
from engine.evaluation import static_eval, static_evals
from engine.position import Position, bits
from engine.weights_file import WeightsError


def men_ahead_scores(variant: str, start: Position, weights: str,
                     choices: list[list[list[int]]]) -> list[float]:
    """Mean static score (Black to move, Black's view) for each list of removal sets."""
    means = []
    for sets in choices:
        total = 0
        for removed in sets:
            white = start.white
            for square in removed:
                white &= ~(1 << square)
            total += static_eval(variant, start._replace(white=white, white_to_move=False),
                                 weights)
        means.append(total / len(sets))
    return means


def men_up_positions(variant: str, directories: list[str], limit: int, seed: int = 1):
    """The data's quiet kingless positions one and two men up for the side to move (at most
    ``limit`` of each, drawn with ``seed``): {men: (white, black, kings, to move, result01)}."""
    from protocol.training.dataset import load_positions
    from engine.variants import get_variant

    found = load_positions(directories, get_variant(variant))
    def count(masks):
        return np.unpackbits(masks.astype(np.uint64).view(np.uint8).reshape(-1, 8),
                             axis=1).sum(axis=1)
    own = np.where(found.white_to_move, found.white, found.black)
    other = np.where(found.white_to_move, found.black, found.white)
    up = count(own).astype(int) - count(other).astype(int)
    rng = np.random.default_rng(seed)
    chosen = {}
    for men in (1, 2):
        rows = np.flatnonzero((found.kings == 0) & (up == men))
        rows = np.sort(rng.permutation(rows)[:limit])
        chosen[men] = (found.white[rows], found.black[rows], found.kings[rows],
                       found.white_to_move[rows], found.result01[rows])
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variant", help="rule set")
    parser.add_argument("files", nargs="+", help="weights files")
    parser.add_argument("--samples", type=int, default=30, help="random choices per count")
    parser.add_argument("--data", nargs="+", metavar="DIR", default=(),
                        help="self-play directories: also score their positions a man or two up")
    parser.add_argument("--limit", type=int, default=200_000,
                        help="at most this many of the data's positions of each count")
    args = parser.parse_args()
    if args.data:
        chosen = men_up_positions(args.variant, list(args.data), args.limit)
        print(f"{'real positions, side to move up':50} {'1 man':>7} {'2 men':>7}")
        print(f"{'  positions':50} " + " ".join(f"{len(c[0]):7d}" for c in chosen.values()))
        print(f"{'  score of the side up (win 1, draw 0.5)':50} "
              + " ".join(f"{c[4].mean():7.1%}" for c in chosen.values()))
        for path in args.files:
            try:
                means = [static_evals(args.variant, *c[:4], path).mean() for c in chosen.values()]
            except WeightsError as exc:
                print(f"{path}: {exc}")
                continue
            print(f"{path:50} " + " ".join(f"{m:7.0f}" for m in means))
        print()
    start = Board(args.variant).position
    men = list(bits(start.white))
    rng = random.Random(1)
    choices = [[rng.sample(men, k) for _ in range(args.samples)] for k in (1, 2, 3)]
    print(f"{'file':50} {'1 man':>7} {'2 men':>7} {'3 men':>7}  (ahead, Black to move)")
    for path in args.files:
        try:
            scores = men_ahead_scores(args.variant, start, path, choices)
        except WeightsError as exc:
            print(f"{path}: {exc}")
            continue
        print(f"{path:50} " + " ".join(f"{s:7.0f}" for s in scores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
