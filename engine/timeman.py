"""Time management: how long to think about one move so that the game is never lost on time.

The clock is divided over the moves expected before the next time control (``moves_to_go``,
or an estimate from the material left). Two limits come out of it, both measured from the
moment the clock started running for this move:

* the **soft** limit: past it no new iteration is started. It stretches when the best move
  keeps changing or the score drops, and shrinks when the best move is stable;
* the **hard** limit: the search core's deadline; the search stops there whatever happens.

A move overhead (time lost in the transport and the GUI) and a safety reserve are kept back,
so neither limit ever reaches the time left on the clock. The overhead shrinks with the time
per move: a local pipe costs well under a millisecond (bench/hub_latency.py), so at 0.1 s a
move a fixed 50 ms would throw half the thinking time away.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_OVERHEAD", "TimeSettings", "TimeManager", "estimate_moves_left"]

#: seconds kept back per move for the transport by default: a pipe or loopback socket costs
#: under a millisecond (bench/hub_latency.py, bench/dxp_speed.py); the rest is a margin
DEFAULT_OVERHEAD = 0.005


@dataclass(frozen=True)
class TimeSettings:
    """Tunable constants of the time manager."""

    #: seconds lost on each move between the engine's answer and the clock stopping; None
    #: (the default) is DEFAULT_OVERHEAD scaled down to ``overhead_fraction`` of the time for
    #: the move, a number is kept back as it is (a slow GUI's own figure)
    move_overhead: float | None = None
    #: with the default overhead, at most this part of the time for the move is kept back
    overhead_fraction: float = 0.05
    #: part of the clock never planned for (a reserve against surprises), and its cap in seconds
    reserve_fraction: float = 0.05
    reserve_max: float = 1.0
    #: the hard limit is at most this many times the planned time per move...
    hard_factor: float = 4.0
    #: ...and at most this part of the usable clock (with more than one move to go)
    hard_fraction: float = 0.4
    #: no new iteration once this part of the planned time is spent (the next one would
    #: rarely finish in time)
    soft_fraction: float = 0.6
    #: the planned time is stretched or shrunk by at most these factors
    min_scale: float = 0.4
    max_scale: float = 2.5
    #: the time for a move is this many times the clock's even share (the reserve and the
    #: shrinking estimate of the moves left keep the clock from running out)
    allocation_factor: float = 1.2

    def overhead(self, time_for_move: float) -> float:
        """The overhead to keep back from ``time_for_move`` seconds."""
        if self.move_overhead is not None:
            return self.move_overhead
        return min(DEFAULT_OVERHEAD, self.overhead_fraction * max(0.0, time_for_move))


def estimate_moves_left(pieces: int, start_pieces: int) -> int:
    """Moves still to play when no time control says so: fewer as the board empties (30 at
    the start down to 10, as Scan estimates them; a game rarely lasts longer, and time kept
    for moves that are never played is lost)."""
    share = min(1.0, pieces / start_pieces) if start_pieces else 1.0
    return 10 + round(20 * share)


class TimeManager:
    """The time plan of one move, updated after each finished iteration.

    ``movetime`` is a fixed time for this move; ``time_left``/``increment``/``moves_to_go``
    are the game clock; with neither, there is no time limit (``hard`` is None).
    """

    def __init__(
        self,
        *,
        movetime: float | None = None,
        time_left: float | None = None,
        increment: float = 0.0,
        moves_to_go: int | None = None,
        moves_left_estimate: int = 30,
        settings: TimeSettings = TimeSettings(),
    ):
        self.settings = settings
        self.hard: float | None = None
        self.planned: float | None = None
        #: a fixed time for the move and no clock: always use all of it
        self.fixed = movetime is not None and time_left is None
        if movetime is not None:
            # a fixed time for this move: use it all, less the transport's share (and when
            # the overhead eats it all, a sliver to complete the first iterations)
            self.hard = max(movetime - settings.overhead(movetime), min(movetime * 0.25, 0.01),
                            0.001)
            self.planned = self.hard / settings.soft_fraction
        if time_left is not None:
            hard, planned = self._clock(time_left, increment, moves_to_go, moves_left_estimate)
            if self.hard is None or hard < self.hard:
                self.hard, self.planned = hard, planned
        self._scale = 1.0
        self._changes = 0.0
        self._stable_iterations = 0
        self._last_best: object = None
        self._last_score: int | None = None

    def _clock(self, time_left: float, increment: float, moves_to_go: int | None,
               estimate: int) -> tuple[float, float]:
        s = self.settings
        time_left = max(0.0, time_left)
        increment = max(0.0, increment)
        reserve = min(time_left * s.reserve_fraction, s.reserve_max)
        # moves to go (a DXP GAMEREQ gives the game's length, Scan asks 75) are a cap: the
        # game usually ends before them, so the estimate decides while it is the smaller
        mtg = max(1, min(moves_to_go, estimate) if moves_to_go else estimate)
        overhead = s.overhead(time_left / mtg + increment)
        usable = max(0.0, time_left - overhead - reserve)
        # every move also costs the overhead outside the search: only the rest of the
        # increment can be planned for, or a long game drains the clock move by move
        share = usable / mtg if mtg == 1 else min(usable / mtg * s.allocation_factor, usable / 2)
        planned = share + 0.9 * max(0.0, increment - overhead)
        if mtg == 1:
            hard = usable
        else:
            hard = min(planned * s.hard_factor, usable * s.hard_fraction + increment)
        # never past the clock, whatever the increment claims
        hard = min(hard, usable)
        planned = min(planned, hard)
        if hard <= 0.0:
            # almost flagged: answer with whatever the first iterations give
            hard = planned = max(0.001, min(0.01, time_left * 0.25))
        return hard, planned

    # -- the plan after each iteration ----------------------------------------------------

    def update(self, best_move: object, score: int) -> None:
        """Adjust the plan after a finished iteration: spend more if the best move changed or
        the score dropped, less once the best move has stayed the same for a while."""
        changed = self._last_best is not None and best_move != self._last_best
        self._changes = self._changes * 0.5 + (1.0 if changed else 0.0)
        self._stable_iterations = 0 if changed else self._stable_iterations + 1
        scale = 1.0 + 0.8 * self._changes
        if self._last_score is not None:
            drop = self._last_score - score
            if drop > 20:
                scale *= 1.0 + min(drop, 150) / 200
        if self._stable_iterations >= 4:
            scale *= 0.7
        self._scale = min(self.settings.max_scale, max(self.settings.min_scale, scale))
        self._last_best = best_move
        self._last_score = score

    def note_fail_low(self) -> None:
        """The best move's score fell below the expected window: worth more time."""
        self._scale = min(self.settings.max_scale, max(self._scale, 1.5))

    @property
    def soft(self) -> float | None:
        """Seconds after which no new iteration starts (None: no time limit)."""
        if self.planned is None or self.hard is None:  # (both are set together)
            return None
        if self.fixed:
            return self.hard
        return min(self.hard, self.planned * self._scale * self.settings.soft_fraction)

    def start_iteration(self, elapsed: float) -> bool:
        """Whether there is time to start another iteration."""
        soft = self.soft
        return soft is None or elapsed < soft
