"""Match statistics from wins, draws and losses: score, Elo with a 95% interval, LOS, SPRT.

All of it follows from one model: each game gives 1, 1/2 or 0 points, drawn independently
from a trinomial distribution whose mean is the expected score ``s``. With ``n = W + D + L``:

* score ``s = (W + D/2) / n``;
* Elo difference ``elo(s) = -400 * log10(1/s - 1)`` (the logistic model: a player 400 Elo
  stronger is expected to score 10:1);
* per-game variance ``var = (W (1-s)^2 + D (1/2-s)^2 + L (0-s)^2) / n``; the mean score has
  standard error ``sqrt(var / n)``, and the 95% interval is ``elo(s -+ 1.959964 * se)``
  (infinite where the bound leaves (0, 1));
* likelihood of superiority ``LOS = (1 + erf((W - L) / sqrt(2 (W + L)))) / 2`` (draws carry
  no information on which side is stronger);
* the SPRT: see ``sprt_llr`` and ``sprt_bounds``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "Z95",
    "Record",
    "SprtResult",
    "elo_from_score",
    "score_from_elo",
    "los",
    "sprt_llr",
    "sprt_bounds",
    "sprt",
]

#: the two-sided 95% quantile of the normal distribution
Z95 = 1.959963984540054


def elo_from_score(score: float) -> float:
    """The Elo difference of an expected score (0..1); +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of an Elo difference (the inverse of elo_from_score)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority: the probability that the first player is the stronger one,
    from the normal approximation of wins against losses (0.5 when there are none)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class Record:
    """Wins, draws and losses of one player against another (or against a field)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __add__(self, other: "Record") -> "Record":
        return Record(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """The mean score per game (0.5 before any game)."""
        return self.points / self.games if self.games else 0.5

    @property
    def variance(self) -> float:
        """The variance of one game's score around the mean score."""
        n, s = self.games, self.score
        if n == 0:
            return 0.0
        return (self.wins * (1 - s) ** 2 + self.draws * (0.5 - s) ** 2
                + self.losses * s ** 2) / n

    @property
    def elo(self) -> float:
        return elo_from_score(self.score)

    def elo_interval(self, z: float = Z95) -> tuple[float, float]:
        """The Elo values at the ends of the score's confidence interval (95% by default)."""
        if self.games == 0:
            return -math.inf, math.inf
        margin = z * math.sqrt(self.variance / self.games)
        return elo_from_score(self.score - margin), elo_from_score(self.score + margin)

    @property
    def los(self) -> float:
        return los(self.wins, self.losses)

    def reversed(self) -> "Record":
        """The same games from the opponent's side."""
        return Record(self.losses, self.draws, self.wins)


def sprt_llr(record: Record, elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) after ``record``.

    The generalised SPRT on the trinomial W/D/L results, in its normal approximation (the one
    fishtest uses for logistic Elo): with ``s0 = score_from_elo(elo0)``, ``s1`` likewise, the
    mean score ``s`` and the per-game variance ``var`` of ``record``::

        LLR = n * (s1 - s0) * (2 s - s0 - s1) / (2 var)

    which is ``n [(s - s0)^2 - (s - s1)^2] / (2 var)``: the log of the ratio of the two normal
    likelihoods of the observed mean. While every game has ended alike (``var == 0``) the
    approximation says nothing, and the LLR is 0.
    """
    var = record.variance
    if record.games == 0 or var <= 0.0:
        return 0.0
    s0, s1, s = score_from_elo(elo0), score_from_elo(elo1), record.score
    return record.games * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``: the test accepts
    H0 when the LLR falls to the lower bound and H1 when it rises to the upper one, with
    false-positive rate ``alpha`` and false-negative rate ``beta``."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError(f"alpha and beta must be between 0 and 1, not {alpha}, {beta}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


@dataclass(frozen=True)
class SprtResult:
    """Where the test stands: the LLR, its bounds, and the decision ("H0", "H1" or None)."""

    llr: float
    lower: float
    upper: float
    decision: str | None


def sprt(record: Record, elo0: float, elo1: float, alpha: float, beta: float) -> SprtResult:
    """The SPRT of elo0 against elo1 at error rates alpha and beta after ``record``."""
    lower, upper = sprt_bounds(alpha, beta)
    llr = sprt_llr(record, elo0, elo1)
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(llr, lower, upper, decision)
