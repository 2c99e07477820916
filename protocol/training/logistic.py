"""The fit behind ``damka tune``: logistic regression of game results on sparse features.

With ``X`` the design (scipy.sparse CSR, one row per position, one column per weight), ``w``
the weights (hundredths of a man), ``K`` the scale and ``t`` the target in [0, 1], the fit
minimises the mean cross-entropy of ``t`` against ``sigmoid(X w / K)`` plus
``l2 * sum((w / 100) ** 2) / N`` over the N training positions (a Gaussian prior on the
weights in men, worth ``l2`` positions of evidence, so that it weighs as much against a
large data set as against a small one) by full-batch L-BFGS
(scipy.optimize), and keeps the weights of the iteration with the lowest validation loss:
it stops when that loss has not improved for ``patience`` iterations. Only sparse products
``X @ w`` and ``X.T @ r`` are formed; no dense matrix of the features ever exists, and ``X``
may be a ``DesignStore`` (design_store.py: row blocks on disk, memory-mapped) for data that
does not fit in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np
from scipy import optimize, sparse
from scipy.special import expit

from .defaults import DEFAULT_PATIENCE
from .design_store import DesignStore, column_stats

__all__ = ["cross_entropy", "fit_k", "target", "Fit", "fit_weights"]

#: one man, in the units of the weights (the L2 penalty counts weights in men)
MAN = 100.0


def cross_entropy(z: np.ndarray, t: np.ndarray) -> float:
    """Mean cross-entropy of targets ``t`` against ``sigmoid(z)`` (stable for large |z|)."""
    if len(z) == 0:
        return float("nan")
    return float(np.mean(np.logaddexp(0.0, z) - t * z))


def fit_k(score: np.ndarray, result01: np.ndarray, low: float = 5.0, high: float = 5000.0
          ) -> float:
    """The scale K for which ``sigmoid(score / K)`` best predicts the results (cross-entropy).

    ``score`` in hundredths of a man from the side to move, ``result01`` 1 win, 0.5 draw, 0 loss.
    """
    score = np.asarray(score, dtype=np.float64)
    result01 = np.asarray(result01, dtype=np.float64)
    if len(score) == 0:
        raise ValueError("no positions to fit K on")
    found = optimize.minimize_scalar(
        lambda log_k: cross_entropy(score / np.exp(log_k), result01),
        bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": 1e-4})
    return float(np.exp(found.x))


def target(result01: np.ndarray, score: np.ndarray, k: float, mix: float) -> np.ndarray:
    """``(1 - mix) * result01 + mix * sigmoid(score / K)``: the result mixed with the search."""
    return (1.0 - mix) * np.asarray(result01, np.float64) + mix * expit(
        np.asarray(score, np.float64) / k)


@dataclass
class Fit:
    """The outcome of fit_weights: the best weights and the losses of every iteration."""

    weights: np.ndarray
    best_iteration: int  #: 0 is the initial weights
    train_loss: list[float] = field(default_factory=list)  #: per iteration, 0 the start
    validation_loss: list[float] = field(default_factory=list)
    stopped_early: bool = False


Report = Callable[[int, float, float], None]  # (iteration, train loss, validation loss)


class _Stop(Exception):
    """Raised from the L-BFGS callback when the validation loss stopped improving."""


#: what the fit takes as its features
Design = Union[sparse.csr_matrix, DesignStore]


def fit_weights(x_train: Design, t_train: np.ndarray, x_val: Design,
                t_val: np.ndarray, k: float, l2: float = 0.0, iterations: int = 200,
                patience: int = DEFAULT_PATIENCE, init: np.ndarray | None = None,
                report: Report | None = None, min_count: int | np.ndarray = 0,
                limit: float | None = None, frozen: np.ndarray | None = None,
                prior: np.ndarray | None = None,
                factoring: sparse.spmatrix | None = None) -> Fit:
    """Fit the weights; the losses reported and kept are cross-entropies without the penalty.

    Weights whose feature is nonzero in fewer than ``min_count`` training positions (one count
    for all, or one for each weight) keep their initial value (too rare to learn from);
    ``limit`` bounds every fitted weight's magnitude (what the weights file can hold); weights
    where the boolean mask ``frozen`` is set keep their initial value too (a fit without some
    features, or some held at their start). The L2 prior pulls toward zero, or
    toward the weights ``prior`` (a fit that should move its start only as far as the data
    asks, in every direction the data cannot tell apart too). Without validation rows the
    last iteration's weights are kept.

    With ``factoring`` (a matrix M of parameters x parts, factored.py) the fit learns each
    weight as its own value plus ``M @ parts``: the parts, under the same prior toward zero,
    are learned from every weight they feed, and the weights returned are the sums. A part
    that feeds only weights held at their start is held at zero.
    """
    n, n_params = x_train.shape
    if n == 0:
        raise ValueError("no training positions")
    if not isinstance(x_train, DesignStore):
        x_train = sparse.csr_matrix(x_train, dtype=np.float64)
    if not isinstance(x_val, DesignStore):
        x_val = sparse.csr_matrix(x_val, dtype=np.float64)
    t_train = np.asarray(t_train, np.float64)
    t_val = np.asarray(t_val, np.float64)
    penalty = l2 / (MAN * MAN * n)
    parts = None if factoring is None else sparse.csc_matrix(factoring, dtype=np.float64)
    n_parts = 0 if parts is None else parts.shape[1]
    w0 = np.zeros(n_params) if init is None else np.asarray(init, np.float64).copy()
    # the vector the fit moves: the weights' own values, then the parts (starting at zero)
    v0 = np.concatenate([w0, np.zeros(n_parts)])
    # L-BFGS works on u = v / d, with d from the diagonal of the Hessian (p(1-p) <= 1/4):
    # the features differ in scale by orders of magnitude, and unscaled it crawls
    counts, squares = column_stats(x_train)
    held = np.zeros(n_params, bool) if frozen is None else np.asarray(frozen, bool)
    if parts is not None:
        # a part's column is the sum of the columns it feeds (cross terms left out: the
        # scaling needs only the size)
        feeds_free = parts.T @ (~held).astype(np.float64)
        counts = np.concatenate([counts, np.rint(parts.T @ counts).astype(np.int64)])
        squares = np.concatenate([squares, parts.T @ squares])
    curvature = 0.25 * squares / n / (k * k) + 2.0 * penalty
    d = 1.0 / np.sqrt(np.where(curvature > 0, curvature, 1.0))
    d[:n_params][counts[:n_params] < min_count] = 0.0  # frozen weights: no step, no gradient
    d[:n_params][held] = 0.0
    if parts is not None:
        d[n_params:][(counts[n_params:] == 0) | (feeds_free == 0)] = 0.0
    # L-BFGS sees only the free weights: a layout's millions of parameters are mostly tables
    # no position of the data reaches, and the optimiser's work grows with its dimension
    free = np.flatnonzero(d > 0)
    d_free = d[free]
    u0 = v0[free] / d_free
    fixed = np.where(d > 0, 0.0, v0)  # the frozen values, to which d * u is added

    def vector_of(u: np.ndarray) -> np.ndarray:
        v = fixed.copy()
        v[free] = d_free * u
        return v

    def weights_of(v: np.ndarray) -> np.ndarray:
        """The weights the engine reads: the own values, plus the parts' sums."""
        return v if parts is None else v[:n_params] + parts @ v[n_params:]

    last: list = [None, 0.0]  # the last vector the objective saw and its cross-entropy

    centre = None if prior is None else np.concatenate(
        [np.asarray(prior, np.float64), np.zeros(n_parts)])

    def objective(u: np.ndarray) -> tuple[float, np.ndarray]:
        v = vector_of(u)
        z = x_train @ weights_of(v) / k
        last[:] = [v, cross_entropy(z, t_train)]
        off = v if centre is None else v - centre
        loss = last[1] + penalty * float(off @ off)
        grad = x_train.T @ (expit(z) - t_train) / (n * k)
        if parts is not None:
            grad = np.concatenate([grad, parts.T @ grad])
        grad += 2.0 * penalty * off
        return loss, d_free * grad[free]

    fit = Fit(w0.copy(), 0)
    validate = x_val.shape[0] > 0
    best = np.inf

    def record(u: np.ndarray) -> None:
        nonlocal best
        v = vector_of(u)
        w = weights_of(v)
        iteration = len(fit.train_loss)
        seen = last[0] is not None and np.array_equal(last[0], v)
        train = last[1] if seen else cross_entropy(x_train @ w / k, t_train)
        val = cross_entropy(x_val @ w / k, t_val) if validate else float("nan")
        fit.train_loss.append(train)
        fit.validation_loss.append(val)
        if report is not None:
            report(iteration, train, val)
        if not validate or val < best:
            best, fit.best_iteration = (val if validate else best), iteration
            fit.weights = w if limit is None else np.clip(w, -limit, limit)  # (rounding)
        elif iteration - fit.best_iteration >= patience:
            fit.stopped_early = True
            raise _Stop

    bounds = None
    if limit is not None:
        span = limit / d_free
        u0 = np.clip(u0, -span, span)
        bounds = optimize.Bounds(-span, span)
    record(u0)
    if len(free):
        try:
            optimize.minimize(objective, u0, jac=True, method="L-BFGS-B", callback=record,
                              bounds=bounds, options={"maxiter": iterations, "maxcor": 20,
                                                      "ftol": 1e-15, "gtol": 1e-12})
        except _Stop:
            pass
    return fit
