"""How much a weights file thinks men are worth: the static score of the start position with
1, 2 and 3 of White's men taken away, Black to move (the mean over 30 random choices of the
men, the same choices for every file).

A fit that lets the material terms drift can make being men ahead worth little or even a
loss (docs/training.md, "Russian: the material held"); the validation loss does not show it,
this does in a second. Run on purpose (never part of the test run):

    python bench/material_drift.py russian engine/weights/russian.dkw new.dkw
"""

from __future__ import annotations

import argparse
import random

from engine import Board
from engine.evaluation import static_eval
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variant", help="rule set")
    parser.add_argument("files", nargs="+", help="weights files")
    parser.add_argument("--samples", type=int, default=30, help="random choices per count")
    args = parser.parse_args()
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
