"""``damka tune`` from parsed arguments: data, features, K, the fit, the weights file."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from engine.variants import Variant
from engine.weights_file import SCALE

#: the largest weight a weights file holds (int16 in 1/SCALE hundredths of a man)
WEIGHT_LIMIT = 32767 / SCALE

from .data import SCORE_CLIP, DataError
from .dataset import load_positions, split_by_game
from .features import design_matrix, evaluation
from .logistic import fit_k, fit_weights, target

__all__ = ["main"]


def main(args: argparse.Namespace, variant: Variant | None) -> int:
    started = time.perf_counter()
    folder = Path(args.out).resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise DataError(f"{args.out}: cannot write there ({folder} is no writable directory)")
    positions = load_positions(args.data, variant, args.quiet_only)
    variant = positions.variant
    if len(positions) == 0:
        raise DataError("the data holds no positions to fit"
                        + (" (none quiet: try --no-quiet-only)" if args.quiet_only else ""))
    ev = evaluation()
    n_params = ev.layout(variant).n_params
    init = _weights(ev, args.init, variant) if args.init else None
    if init is not None and len(init) != n_params:
        raise DataError(f"{args.init}: {len(init)} weights, the layout has {n_params}")

    val = split_by_game(positions.game, args.validation, args.seed)
    train, held = positions.take(~val), positions.take(val)
    print(f"tune: {positions.label}, {positions.games} games, {len(train)} training and "
          f"{len(held)} validation positions, {n_params} weights", flush=True)

    from tqdm import tqdm

    with tqdm(total=len(positions), unit="pos", desc="features", file=sys.stderr,
              disable=args.quiet, dynamic_ncols=True) as bar:
        x_train = design_matrix(variant, train.white, train.black, train.kings,
                                train.white_to_move, bar.update)
        x_val = design_matrix(variant, held.white, held.black, held.kings,
                              held.white_to_move, bar.update)

    k = args.k
    if k is None:
        decided = np.abs(train.score) < SCORE_CLIP
        k = fit_k(train.score[decided], train.result01[decided])
    print(f"tune: K = {k:.1f} ({'given' if args.k else 'fitted to the search scores'})",
          flush=True)
    t_train = target(train.result01, train.score, k, args.mix)
    t_val = target(held.result01, held.score, k, args.mix)

    with tqdm(total=args.epochs, unit="it", desc="L-BFGS", file=sys.stderr,
              disable=args.quiet, dynamic_ncols=True) as bar:
        def report(iteration: int, train_loss: float, val_loss: float) -> None:
            bar.set_postfix_str(f"train {train_loss:.5f} validation {val_loss:.5f}",
                                refresh=False)
            if iteration:
                bar.update(1)

        fit = fit_weights(x_train, t_train, x_val, t_val, k, args.l2, args.epochs,
                          args.patience, init, report, args.min_count, WEIGHT_LIMIT)
    try:
        ev.write_weights(args.out, variant, fit.weights)
    except OSError as exc:
        raise DataError(f"{args.out}: {exc.strerror or exc}") from None
    best = fit.best_iteration
    print(f"tune: iteration {best} of {len(fit.train_loss) - 1}"
          f"{' (validation loss stopped improving)' if fit.stopped_early else ''}: "
          f"train loss {fit.train_loss[0]:.5f} -> {fit.train_loss[best]:.5f}, validation "
          f"{fit.validation_loss[0]:.5f} -> {fit.validation_loss[best]:.5f}; wrote {args.out} "
          f"in {time.perf_counter() - started:.1f} s")
    return 0


def _weights(ev, path: str, variant: Variant) -> np.ndarray:
    try:
        return np.asarray(ev.read_weights(path, variant), dtype=np.float64)
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None
    except ev.WeightsError as exc:
        raise DataError(str(exc)) from None
