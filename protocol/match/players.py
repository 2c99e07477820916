"""What the match runner needs of an engine: the Player interface, its answers and errors.

The runner owns the game and the clocks; a Player only answers "your move" requests. The
adapters (protocol/match/engines.py) wrap Hub processes, DXP connections and damka in-process. A
Player serves one game at a time; ``abort`` may be called from any thread (Ctrl-C).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.move import Move
from protocol.match.timecontrol import MoveRequest, TimeControl
from engine.variants import Variant

if TYPE_CHECKING:
    from engine.game import Game

__all__ = ["Player", "PlayerSpec", "Answer", "PlayerError", "EngineCrash", "EngineTimeout",
           "EngineResigned"]


class PlayerError(RuntimeError):
    """An engine that could not give a move; the subclass says how the game is lost."""


class EngineCrash(PlayerError):
    """The engine died, broke its protocol or could not be started: it loses the game and
    is restarted for its next one."""


class EngineTimeout(PlayerError):
    """The engine did not answer within its clock and the grace: it loses on time.
    ``usable`` says whether it answered a stop and can play on (else it is restarted)."""

    def __init__(self, message: str, usable: bool = False):
        super().__init__(message)
        self.usable = usable


class EngineResigned(PlayerError):
    """The engine ended the game on its turn instead of moving (a DXP GAMEEND, say) while the
    rules let the game go on: it loses by resignation."""


@dataclass(frozen=True)
class Answer:
    """A move and when it was asked for and received (``time.monotonic()``): the runner
    charges ``finished - started``, less ``uncharged``, to the engine's clock. ``score`` (men,
    from the mover's side), ``depth`` and ``reported`` go into the PDN comment when known."""

    move: "Move | str | None"
    started: float
    finished: float
    score: float | None = None
    depth: int | None = None
    #: seconds of ``elapsed`` that are transport the engine cannot see on its own clock (a
    #: DXP round trip), not charged to it
    uncharged: float = 0.0
    #: the engine's own count of its time for this move, where its protocol says it (DXP)
    reported: float | None = None

    @property
    def elapsed(self) -> float:
        return self.finished - self.started

    @property
    def charged(self) -> float:
        """What the engine's clock is charged: the wall time less the uncharged transport."""
        return max(0.0, self.elapsed - self.uncharged)


class Player:
    """One running engine. Subclasses implement ``play`` and whatever else they need."""

    name: str = "?"

    def start(self) -> None:
        """Start the engine (a process, a connection); EngineCrash if it cannot be used."""

    def new_game(self, game: "Game", white: bool, control: TimeControl) -> None:
        """A game begins in ``game``'s current position; this engine plays ``white``."""

    def play(self, game: "Game", request: MoveRequest) -> Answer:
        """The engine's move in the game's current position; PlayerError when it has none."""
        raise NotImplementedError

    def end_game(self, game: "Game") -> None:
        """The game is over (its outcome is recorded in ``game``)."""

    def abort(self) -> None:
        """End everything at once, from any thread (the match is being interrupted)."""

    def close(self) -> None:
        """Shut the engine down politely."""


class PlayerSpec(Protocol):
    """How to make players of one engine: its unique ``name`` and ``create``.
    ``max_instances`` caps how many games it can play at once (None: as many as needed)."""

    name: str
    max_instances: int | None

    def create(self, variant: Variant) -> Player: ...
