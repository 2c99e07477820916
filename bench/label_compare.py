"""Is a deeper score a better label? Compares, on the positions of a ``damka rescore``
directory, its scores (D) with the source's own search scores (O) and with the static
evaluation (S) of one or more weights files, and how well D and O foretell the games' results.

    python bench/label_compare.py ~/damka-data/intl-d2-r250k ~/damka-data/international-d2-16k \
        --weights engine/weights/international.dkw intl-r1.dkw

Printed: the root mean square of D - S and O - S for each file, the correlation of the two
(near 1: what the deeper search adds to the static score, the shallow one adds too), the root
mean square of D - O, and the log loss of sigmoid(score / K) against the results for D and
for O (lower: the better label of the result). Positions with a score beyond +-2,000 (won
or lost) are left out.
"""

from __future__ import annotations

import argparse

import numpy as np

from engine.evaluation import read_weights
from protocol.training.data import read_games
from protocol.training.dataset import data_variant
from protocol.training.features import static_scores

#: the scale of the scores in the log loss (damka tune's K for international data is 150-163)
K = 160.0
DECIDED = 2000


def log_loss(score: np.ndarray, result: np.ndarray) -> float:
    p = 1.0 / (1.0 + np.exp(-score / K))
    y = (result + 1.0) / 2.0
    return float(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rescored", help="a damka rescore directory")
    parser.add_argument("source", help="the self-play directory it was made from")
    parser.add_argument("--weights", nargs="+", required=True, metavar="FILE")
    args = parser.parse_args()
    meta, d = read_games(args.rescored)
    variant = data_variant(meta)
    _, s = read_games(args.source, ("game", "ply", "score"))
    key = s["game"] * 1000 + s["ply"]
    at = np.searchsorted(key, d["game"] * 1000 + d["ply"])
    assert np.array_equal(key[at], d["game"] * 1000 + d["ply"]), "not this source's positions"
    deep, shallow = d["score"].astype(float), s["score"][at].astype(float)
    keep = (np.abs(deep) < DECIDED) & (np.abs(shallow) < DECIDED)
    print(f"{meta.variant}: {keep.sum()} positions of {len(deep)} (|score| < {DECIDED})")
    for path in args.weights:
        static = static_scores(variant, d["white"], d["black"], d["kings"],
                               d["white_to_move"], read_weights(path, variant))
        a, b = (deep - static)[keep], (shallow - static)[keep]
        print(f"{path}: rms D-S {np.sqrt(np.mean(a * a)):.1f}, rms O-S "
              f"{np.sqrt(np.mean(b * b)):.1f}, corr(D-S, O-S) {np.corrcoef(a, b)[0, 1]:.3f}")
    gap = (deep - shallow)[keep]
    result = d["result"].astype(float)[keep]
    print(f"rms D-O {np.sqrt(np.mean(gap * gap)):.1f}; log loss of the results: "
          f"D {log_loss(deep[keep], result):.5f}, O {log_loss(shallow[keep], result):.5f}")


if __name__ == "__main__":
    main()
