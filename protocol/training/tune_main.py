"""``damka tune`` from parsed arguments: the data, its features on disk (design_store.py),
K, one fit for each --l2 and --min-count (the lowest validation loss is kept), the weights
file, and how many of its parameters the data moved off zero."""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
from scipy import sparse
from scipy.special import expit

from engine.variants import Variant
from engine.weights_file import SCALE
from protocol.progress import terminal_bar

from .data import SCORE_CLIP, DataError
from .dataset import Positions, load_positions, split_by_game
from .design_store import DesignStore
from .factored import factor_matrix, window_squares
from .features import evaluation, static_scores
from .logistic import Fit, fit_k, fit_weights, target
from .weight_report import format_report, nonzero_by_group

__all__ = ["main"]

#: the largest weight a weights file holds (int16 in 1/SCALE hundredths of a man)
WEIGHT_LIMIT = 32767 / SCALE


def main(args: argparse.Namespace, variant: Variant | None) -> int:
    started = time.perf_counter()
    folder = Path(args.out).resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise DataError(f"{args.out}: cannot write there ({folder} is no writable directory)")
    if Path(args.out).is_dir():
        raise DataError(f"{args.out} is a directory: --out names the weights file to write")
    if any(folder == Path(d).resolve() and (folder / "meta.json").exists() for d in args.data):
        raise DataError(f"{args.out}: inside the data directory {folder}; write the weights "
                        "elsewhere (the data's own files must not be replaced)")
    if args.design_dir is not None and Path(args.design_dir).exists() \
            and not Path(args.design_dir).is_dir():
        raise DataError(f"{args.design_dir}: not a directory (--design-dir is where the "
                        "features are kept)")
    positions = load_positions(args.data, variant, args.quiet_only, args.after_deviations)
    if args.after_deviations:
        print("tune: --after-deviations: only the positions after their game's last random "
              "move", flush=True)
    variant = positions.variant
    if len(positions) == 0:
        raise DataError("the data holds no positions to fit"
                        + (" (none quiet: try --no-quiet-only)" if args.quiet_only else ""))
    ev = evaluation()
    n_params = ev.layout(variant).n_params
    init = _weights(ev, args.init, variant) if args.init else None
    if init is not None and len(init) != n_params:
        raise DataError(f"{args.init}: {len(init)} weights, the layout has {n_params}")
    frozen = feature_mask(ev.layout(variant), args.without) if args.without else None
    if frozen is not None:
        init = np.where(frozen, 0.0, np.zeros(n_params) if init is None else init)
        print(f"tune: without {', '.join(args.without)}: {int(frozen.sum())} parameters held "
              f"at zero", flush=True)
    if args.hold:
        kept = feature_mask(ev.layout(variant), args.hold, "--hold")
        frozen = kept if frozen is None else frozen | kept
        print(f"tune: holding {', '.join(args.hold)}: {int(kept.sum())} parameters kept at "
              f"their --init values", flush=True)

    for count in args.min_count:  # a bad --min-count-of name is refused before the long work
        min_counts(ev.layout(variant), count, args.min_count_of)
    factoring = None
    if args.factor:
        factoring = _factoring(ev.layout(variant), args.factor, frozen)
        print(f"tune: {', '.join(args.factor)} fitted as sums of parts: "
              f"{factoring.shape[1]} parts", flush=True)

    val = split_by_game(positions.game, args.validation, args.seed)
    if args.agree is not None:
        positions, val = _agreeing(positions, val, init, args.agree)
    train, held = positions.take(~val), positions.take(val)
    print(f"tune: {positions.label}, {positions.games} games, {len(train)} training and "
          f"{len(held)} validation positions, {n_params} weights", flush=True)

    with _design_directory(args.design_dir, folder) as directory, \
            terminal_bar(len(positions), "features", unit="pos", quiet=args.quiet) as bar:
        x_train = DesignStore.build(directory / "train", variant, train.white, train.black,
                                    train.kings, train.white_to_move, bar.update)
        x_val = DesignStore.build(directory / "validation", variant, held.white, held.black,
                                  held.kings, held.white_to_move, bar.update)
        bar.close()
        k = args.k
        if k is None:
            decided = np.abs(train.score) < SCORE_CLIP
            k = fit_k(train.score[decided], train.result01[decided])
        print(f"tune: K = {k:.1f} ({'given' if args.k else 'fitted to the search scores'})",
              flush=True)
        t_train = target(train.result01, train.score, k, args.mix)
        t_val = target(held.result01, held.score, k, args.mix)
        if args.anchor:
            t_train = _anchored(t_train, x_train, init, k, args.anchor)
            t_val = _anchored(t_val, x_val, init, k, args.anchor)
            print(f"tune: --anchor {args.anchor:g}: the target is {args.anchor:g} the --init "
                  f"file's predictions", flush=True)
        grid = [(l2, count) for l2 in args.l2 for count in args.min_count]
        if len(grid) > 1 and len(held) == 0:
            raise DataError("choosing among several --l2 or --min-count values needs "
                            "validation positions (--validation above 0)")
        fits = []
        for l2, count in grid:
            counts = min_counts(ev.layout(variant), count, args.min_count_of)
            label = f"L-BFGS l2={l2:g} min-count={count}" if len(grid) > 1 else "L-BFGS"
            fit = _fit(args, x_train, t_train, x_val, t_val, k, l2, counts, init, frozen,
                       factoring, label)
            fits.append((fit.validation_loss[fit.best_iteration], l2, count, fit))
            if len(grid) > 1:
                print(f"tune: --l2 {l2:g} --min-count {count}: validation loss "
                      f"{fits[-1][0]:.5f} at iteration {fit.best_iteration}", flush=True)
    _, l2, count, fit = min(fits, key=lambda entry: entry[0]) if len(held) else fits[-1]
    try:
        ev.write_weights(args.out, variant, fit.weights)
    except OSError as exc:
        raise DataError(f"{args.out}: {exc.strerror or exc}") from None
    best = fit.best_iteration
    chosen = f" with --l2 {l2:g} --min-count {count}" if len(grid) > 1 else ""
    print(f"tune: iteration {best} of {len(fit.train_loss) - 1}{chosen}"
          f"{' (validation loss stopped improving)' if fit.stopped_early else ''}: "
          f"train loss {fit.train_loss[0]:.5f} -> {fit.train_loss[best]:.5f}, validation "
          f"{fit.validation_loss[0]:.5f} -> {fit.validation_loss[best]:.5f}; wrote {args.out} "
          f"in {time.perf_counter() - started:.1f} s")
    print("tune: parameters the file holds non-zero:")
    print(format_report(nonzero_by_group(ev.layout(variant), fit.weights)), flush=True)
    return 0


def _agreeing(positions: Positions, val: np.ndarray, init: np.ndarray,
              limit: float) -> tuple[Positions, np.ndarray]:
    """The positions (and their validation mask) whose search score is within ``limit`` of
    the ``init`` weights' static score; the split by game is drawn before, so that the
    validation games are the same with and without --agree."""
    static = static_scores(positions.variant, positions.white, positions.black,
                           positions.kings, positions.white_to_move, init)
    keep = np.abs(positions.score - static) <= limit
    print(f"tune: --agree {limit:g}: {int(keep.sum())} of {len(keep)} positions "
          f"({keep.mean():.1%}) have a search score within {limit:g} of the static score",
          flush=True)
    if not keep.any():
        raise DataError(f"--agree {limit:g}: no position's search score is that close to "
                        "the --init file's static score")
    return positions.take(keep), val[keep]


def _anchored(t: np.ndarray, x: DesignStore, init: np.ndarray, k: float,
              share: float) -> np.ndarray:
    """``(1 - share) * t + share * sigmoid(x @ init / K)``. The cross-entropy against the
    start's own predictions has, near the start, the curvature of the start's own fit on data
    like this: the sum stands for a fit of the old data and the new together, weighted by
    ``share``, when the old data is no longer at hand."""
    return (1.0 - share) * t + share * expit(x @ init / k)


def _fit(args: argparse.Namespace, x_train: DesignStore, t_train: np.ndarray,
         x_val: DesignStore, t_val: np.ndarray, k: float, l2: float,
         min_count: int | np.ndarray,
         init: np.ndarray | None, frozen: np.ndarray | None,
         factoring: "sparse.spmatrix | None", label: str) -> Fit:
    with terminal_bar(args.epochs, label, unit="it", quiet=args.quiet) as bar:
        def report(iteration: int, train_loss: float, val_loss: float) -> None:
            bar.set_postfix_str(f"train {train_loss:.5f} validation {val_loss:.5f}",
                                refresh=False)
            if iteration:
                bar.update(1)

        return fit_weights(x_train, t_train, x_val, t_val, k, l2, args.epochs,
                           args.patience, init, report, min_count, WEIGHT_LIMIT, frozen,
                           init if args.prior == "init" else None, factoring)


def _factoring(layout, names: "tuple[str, ...]",
               frozen: np.ndarray | None) -> "sparse.csr_matrix":
    """The parts matrix of the --factor tables; DataError for a name that is no whole table,
    a table that is not one of 3^k entries, or one held whole by --without or --hold."""
    mask = feature_mask(layout, names, "--factor")
    tables = [(name, slice(offset, offset + size)) for name, offset, size in layout.groups
              if mask[offset:offset + size].all()]
    if not tables or mask.sum() != sum(where.stop - where.start for _, where in tables):
        raise DataError(f"--factor {','.join(names)}: name whole tables (pattern, edge, "
                        "pattern:3), not single features")
    for name, where in tables:
        entries = (where.stop - where.start) // 2
        try:
            window_squares(entries)
        except ValueError:
            raise DataError(f"--factor {name}: not a pattern table (its {entries} entries are "
                            "no 3^k window)") from None
        if frozen is not None and frozen[where].all():
            raise DataError(f"--factor {name}: the table is held by --without or --hold")
    return factor_matrix(layout, [name for name, _ in tables])


def min_counts(layout, base: int, named: "tuple[tuple[str, int], ...]") -> int | np.ndarray:
    """Each parameter's minimum count: ``base`` (--min-count), or for the features ``named``
    (--min-count-of, the later name winning where two overlap) their own."""
    if not named:
        return base
    counts = np.full(layout.n_params, base, np.int64)
    for name, count in named:
        counts[feature_mask(layout, (name,), "--min-count-of")] = count
    return counts


def feature_mask(layout, names: "tuple[str, ...] | list[str]",
                 option: str = "--without") -> np.ndarray:
    """The parameters of the named features: a group (``edge:0``), every table of a kind
    (``edge``, ``pattern``: the groups ``edge:*``) or one feature of a group
    (``king_mobility.denied_squares``); DataError naming what the layout lacks (and the
    ``option`` that named it)."""
    mask = np.zeros(layout.n_params, bool)
    for name in names:
        group, _, feature = name.partition(".")
        chosen = [(g, offset, size) for g, offset, size in layout.groups
                  if g == group or g.startswith(group + ":")]
        if not chosen:
            raise DataError(f"{option} {name}: the layout has no group {group!r} (groups: "
                            f"{', '.join(sorted({g.split(':')[0] for g, _o, _s in layout.groups}))})")
        for g, offset, size in chosen:
            if not feature:
                mask[offset:offset + size] = True
                continue
            names_of = layout.feature_names.get(g, ())
            if feature not in names_of:
                raise DataError(f"{option} {name}: {g} has no feature {feature!r} "
                                f"({', '.join(names_of) or 'its features have no names'})")
            at = offset + 2 * names_of.index(feature)
            mask[at:at + 2] = True
    return mask


@contextmanager
def _design_directory(kept: str | None, beside: Path) -> Iterator[Path]:
    """Where the features go: ``kept`` (made if need be, left in place), else a temporary
    directory in ``beside`` that goes at the end."""
    if kept is not None:
        directory = Path(kept)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"{kept}: {exc.strerror or exc}") from None
        yield directory
        return
    with tempfile.TemporaryDirectory(prefix=".damka-design-", dir=beside) as name:
        yield Path(name)


def _weights(ev, path: str, variant: Variant) -> np.ndarray:
    try:
        return np.asarray(ev.read_weights(path, variant), dtype=np.float64)
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None
    except ev.WeightsError as exc:
        raise DataError(str(exc)) from None
