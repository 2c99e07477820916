"""SPSA over a weights file's knobs: a tuner that follows game results, not a loss.

Near the shipped weights a fit's held-out loss no longer tells which file is stronger
(docs/training.md: the fit with the lowest validation loss played 33 Elo worse), so this
tuner asks games instead. Each iteration k draws a random sign for every knob, plays one
opening twice (colours reversed) between the weights ``theta + c_k * delta`` and ``theta -
c_k * delta``, and moves theta by ``a_k / c_k * (wins - losses of the plus side) * delta``
(simultaneous perturbation stochastic approximation, Spall 1992; the gain schedule as the
Stockfish testing framework sets it: ``c_k = c / k^0.101``, ``a_k = a / (A + k)^0.602``, with
``c`` and ``a`` chosen so that at the last iteration each knob is perturbed by its ``step``
and moved by ``r_end * step`` for every game won).

A knob is one weight (groups of at most ``PER_WEIGHT_MAX`` weights: material, tempo, the
runaway terms...) or a factor on the middlegame or endgame weights of a family of tables
(pattern, edge, king_square...): a few dozen knobs, not the hundred thousand a fit moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.evaluation import Layout

__all__ = ["Knob", "Schedule", "SpsaState", "PER_WEIGHT_MAX", "knobs_for", "apply_knobs",
           "perturbation", "spsa_update", "run_spsa", "families"]

#: a group of at most this many weights is tuned weight by weight; a larger one by factors
PER_WEIGHT_MAX = 16
#: the largest weight a file holds, in hundredths of a man (int16 in 1/16 of a hundredth)
WEIGHT_LIMIT = 2047.0
#: a factor's perturbation at the last iteration
FACTOR_STEP = 0.1
#: a weight's perturbation at the last iteration: this share of its size, at least
#: ``WEIGHT_STEP_MIN`` hundredths of a man
WEIGHT_STEP_SHARE = 0.1
WEIGHT_STEP_MIN = 2.0
#: the schedule's exponents and the share of the iterations its stability constant A is
ALPHA, GAMMA, A_SHARE = 0.602, 0.101, 0.1


@dataclass(frozen=True, eq=False)  # (arrays do not compare as one value)
class Knob:
    """One tuned value: a weight (``factor`` False: the value is the weight itself) or a
    factor on the base weights of ``params`` (``factor`` True: the value multiplies them)."""

    name: str
    params: np.ndarray  #: the layout indices the knob sets
    factor: bool
    start: float
    step: float  #: the perturbation at the last iteration


def _family(group: str) -> str:
    """A table's family: ``pattern:3`` -> ``pattern``."""
    return group.split(":", 1)[0]


def families(lay: Layout) -> list[str]:
    """The names ``--tune`` takes: each group's family, in layout order."""
    names: list[str] = []
    for group, _, _ in lay.groups:
        if _family(group) not in names:
            names.append(_family(group))
    return names


def knobs_for(lay: Layout, base: np.ndarray, names: Sequence[str]) -> list[Knob]:
    """The knobs of the families ``names`` of a layout, around the weights ``base``: a knob
    per weight of a small family, two factors (middlegame, endgame) for a large one. A weight
    that is zero in ``base`` and a factor over only zeros are left out (a zero a fit left
    has nothing to scale, and a man can never stand where some of them count).
    ValueError names an unknown family."""
    known = families(lay)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"no evaluation terms called {', '.join(unknown)} in "
                         f"{lay.variant_name}'s layout (there are {', '.join(known)})")
    knobs: list[Knob] = []
    for name in known:
        if name not in names:
            continue
        indices = np.concatenate([np.arange(offset, offset + size)
                                  for group, offset, size in lay.groups
                                  if _family(group) == name])
        if len(indices) <= PER_WEIGHT_MAX:
            for i in indices:
                value = float(base[i])
                if value:
                    knobs.append(Knob(lay.param_name(int(i)), np.array([i]), False, value,
                                      max(WEIGHT_STEP_MIN, WEIGHT_STEP_SHARE * abs(value))))
            continue
        for phase, parity in (("mg", 0), ("eg", 1)):
            # parameters alternate middlegame, endgame within every group (even offsets)
            own = indices[indices % 2 == parity]
            own = own[base[own] != 0]
            if len(own):
                knobs.append(Knob(f"{name}.{phase}", own, True, 1.0, FACTOR_STEP))
    return knobs


def apply_knobs(base: np.ndarray, knobs: Sequence[Knob], values: np.ndarray) -> np.ndarray:
    """The weights with the knobs set to ``values`` (a copy of ``base``), clipped to what a
    weights file can hold."""
    w = base.copy()
    for knob, value in zip(knobs, values):
        w[knob.params] = base[knob.params] * value if knob.factor else value
    np.clip(w, -WEIGHT_LIMIT, WEIGHT_LIMIT, out=w)
    return w


@dataclass(frozen=True)
class Schedule:
    """The gains of a run of ``iterations`` iterations: knob i is perturbed by ``c_k[i]``
    and moved by ``a_k[i] / c_k[i]`` per game of difference at iteration k (from 0)."""

    iterations: int
    steps: np.ndarray  #: each knob's perturbation at the last iteration
    r_end: float  #: a knob's move per game won at the last iteration, in its steps

    def c(self, k: int) -> np.ndarray:
        return self.steps * (self.iterations / (k + 1)) ** GAMMA

    def a(self, k: int) -> np.ndarray:
        big_a = A_SHARE * self.iterations
        a_end = self.r_end * self.steps ** 2
        return a_end * ((big_a + self.iterations) / (big_a + k + 1)) ** ALPHA


def perturbation(seed: int, k: int, n: int) -> np.ndarray:
    """Iteration k's signs (+1 or -1 for each of n knobs): the same for a seed wherever the
    iteration runs, so a resumed run draws what the run before would have."""
    rng = np.random.default_rng([seed, k])
    return rng.choice(np.array([-1.0, 1.0]), size=n)


def spsa_update(theta: np.ndarray, schedule: Schedule, k: int, delta: np.ndarray,
                result: float) -> np.ndarray:
    """theta after iteration k, whose plus side (theta + c_k * delta) scored ``result``
    (wins minus losses) against the minus side."""
    return theta + schedule.a(k) / schedule.c(k) * result * delta


@dataclass
class SpsaState:
    """Where a run stands: the knobs' values after ``iteration`` iterations and the plus
    sides' games (wins, draws, losses), kept in the run's directory."""

    theta: list[float]
    iteration: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def record(self, points: Sequence[float]) -> float:
        """Count a pair's games (the plus side's points, 1, 0.5 or 0 each); wins - losses."""
        for p in points:
            if p == 1:
                self.wins += 1
            elif p == 0:
                self.losses += 1
            else:
                self.draws += 1
        return float(sum(2 * p - 1 for p in points))


#: one iteration's games as the runner hands them out: (k, plus side's knob values, minus
#: side's), and what comes back: (k, the plus side's points in its games)
Pair = tuple[int, np.ndarray, np.ndarray]
Played = tuple[int, Sequence[float]]


def run_spsa(state: SpsaState, schedule: Schedule, seed: int, batch: int,
             play: Callable[[list[Pair]], Iterable[Played]],
             after_round: Callable[[SpsaState], None] | None = None) -> SpsaState:
    """Iterations ``state.iteration`` .. ``schedule.iterations - 1``, ``batch`` at a time:
    a round's pairs all start from the same theta (one per worker keeps every core busy),
    and their results move it in iteration order. ``after_round`` sees the state after each
    round (saving it, showing progress); a round cut short changes nothing."""
    while state.iteration < schedule.iterations:
        theta = np.array(state.theta, dtype=np.float64)
        ks = range(state.iteration, min(state.iteration + batch, schedule.iterations))
        deltas = {k: perturbation(seed, k, len(theta)) for k in ks}
        pairs = [(k, theta + schedule.c(k) * deltas[k], theta - schedule.c(k) * deltas[k])
                 for k in ks]
        results = dict(play(pairs))
        for k in ks:
            theta = spsa_update(theta, schedule, k, deltas[k], state.record(results[k]))
        state.theta, state.iteration = [float(v) for v in theta], ks[-1] + 1
        if after_round is not None:
            after_round(state)
    return state
