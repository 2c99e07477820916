"""Time controls of a match and the clock each engine plays on.

A time control is any combination of a game clock (``moves/time+inc``: ``time`` seconds for
every ``moves`` moves, ``inc`` seconds added after each move), a fixed time per move, and caps
on depth or nodes. The runner keeps each engine's clock itself, charging the time from sending
a request to receiving the move; an engine whose clock falls below ``-grace`` has lost on time.
The grace absorbs the transport (pipes, sockets, thread wake-ups) that the engine cannot see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.limits import MAX_DEPTH, Limits
from protocol.match.defaults import DEFAULT_GRACE

__all__ = ["TimeControl", "Clock", "MoveRequest", "DEFAULT_GRACE", "parse_time_control"]

_TC = re.compile(r"^\s*(?:(?P<moves>\d+)\s*/\s*)?(?P<time>\d+(?:\.\d*)?|\.\d+)"
                 r"(?:\s*\+\s*(?P<inc>\d+(?:\.\d*)?|\.\d+))?\s*$")


@dataclass(frozen=True)
class TimeControl:
    """What limits each move: a clock (``time`` per ``moves`` moves, ``increment`` after each
    move), a fixed ``movetime``, and the ``depth``/``nodes`` caps. At least one is needed."""

    time: float | None = None
    moves: int | None = None
    increment: float = 0.0
    movetime: float | None = None
    depth: int | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        if self.time is None and self.movetime is None and self.depth is None \
                and self.nodes is None:
            raise ValueError("a time control needs a clock, a time per move, a depth or nodes")
        if self.time is not None and not self.time > 0:
            raise ValueError(f"the clock time must be positive, not {self.time}")
        if self.moves is not None and self.moves < 1:
            raise ValueError(f"moves per time control must be positive, not {self.moves}")
        if self.moves is not None and self.time is None:
            raise ValueError("moves per time control need a time")
        if self.increment < 0:
            raise ValueError(f"the increment must not be negative, not {self.increment}")
        if self.increment and self.time is None:
            raise ValueError("an increment needs a clock time")
        if self.movetime is not None and not self.movetime > 0:
            raise ValueError(f"the time per move must be positive, not {self.movetime}")
        if self.depth is not None and self.depth < 1:
            raise ValueError(f"depth must be positive, not {self.depth}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be positive, not {self.nodes}")

    @property
    def timed(self) -> bool:
        """Whether a clock or a time per move bounds each move (else only depth/nodes do)."""
        return self.time is not None or self.movetime is not None

    def __str__(self) -> str:
        parts = []
        if self.time is not None:
            text = f"{self.moves}/" if self.moves else ""
            text += f"{self.time:g}"
            if self.increment:
                text += f"+{self.increment:g}"
            parts.append(text)
        if self.movetime is not None:
            parts.append(f"{self.movetime:g}s/move")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return ", ".join(parts)


def parse_time_control(text: str) -> tuple[float, int | None, float]:
    """``moves/time+inc`` (``40/60+0.5``, ``60+0.5``, ``40/60``, ``60``; seconds) as
    ``(time, moves, increment)``; ValueError otherwise."""
    m = _TC.match(text)
    if m is None:
        raise ValueError(f"a time control is moves/seconds+increment (e.g. 40/60+0.5), not {text!r}")
    moves = int(m.group("moves")) if m.group("moves") else None
    return float(m.group("time")), moves, float(m.group("inc") or 0.0)


@dataclass(frozen=True)
class MoveRequest:
    """What an engine is told for one move: its ``limits`` (engine.limits.Limits, the one
    vocabulary of limits: its clock before the move, the increment added after it, the moves
    to the next control, a fixed move time, the caps), and ``allowance``: the most the runner
    waits for the answer, grace included (None: no clock, only caps)."""

    limits: Limits
    allowance: float | None


class Clock:
    """One engine's clock in one game."""

    def __init__(self, control: TimeControl, grace: float = DEFAULT_GRACE):
        self.control = control
        self.grace = grace
        self.remaining: float | None = control.time
        self.moves_made = 0
        self.used = 0.0  #: seconds charged over the game

    def request(self) -> MoveRequest:
        """The limits of the next move."""
        c = self.control
        moves_to_go = c.moves - self.moves_made % c.moves if c.moves else None
        bounds = [b for b in (self.remaining, c.movetime) if b is not None]
        allowance = max(0.0, min(bounds)) + self.grace if bounds else None
        time_left = None if self.remaining is None else max(0.0, self.remaining)
        limits = Limits(
            depth=None if c.depth is None else min(c.depth, MAX_DEPTH),
            nodes=c.nodes,
            movetime=c.movetime,
            time_left=time_left,
            increment=c.increment if time_left is not None else 0.0,
            moves_to_go=moves_to_go,
        )
        return MoveRequest(limits, allowance)

    def charge(self, elapsed: float) -> bool:
        """Charge one move's time; False when it overstepped the clock (or the time per move)
        by more than the grace: a loss on time."""
        c = self.control
        self.used += elapsed
        self.moves_made += 1
        ok = True
        if c.movetime is not None and elapsed > c.movetime + self.grace:
            ok = False
        if self.remaining is not None:
            self.remaining -= elapsed
            if self.remaining < -self.grace:
                ok = False
            self.remaining = max(self.remaining, 0.0) + c.increment
            if c.moves and self.moves_made % c.moves == 0:
                self.remaining += c.time or 0.0
        return ok
