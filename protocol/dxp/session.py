"""The DXP session: the state machine of one connection, as follower or initiator.

``DxpSession`` is fed messages and search results and returns the messages to send; it keeps
the board, the clocks and the game end, and drives the search facade (engine.search.Engine).
It never touches a socket, so a whole dialogue can be scripted in a test; the sockets are
protocol.dxp.listener's. Searches run on the engine's own search thread (Engine.search_async),
which calls back with the result.

Clocks: a GAMEREQ with a thinking time gives each side that many minutes for the game. The
session charges the peer from the moment our message went out to the moment its move came
in, and when that passes its clock by more than the transport grace (flag_grace) it claims
the game on time: a CHAT and GAMEEND "I win" (unless ``no_flag``). A peer that says nothing
for ``idle_timeout`` seconds is dropped, except while it is the peer's move in a game with a
clock (its clock rules then) and while we think.

Bad input never ends the process: an illegal move or a malformed or unexpected message ends
the game in progress with a CHAT saying why and a GAMEEND (the bad message used up the peer's
turn, so the turn is ours); a malformed GAMEREQ is refused (CHAT and GAMEACC code 2); a
dropped connection ends it silently, and the server goes on serving.
Every finished game goes to the ``on_game`` callback (a PDN file with ``--pdn``).
"""

from __future__ import annotations

import datetime
import itertools
import threading
import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from engine import __version__
from engine.board import Board
from engine.draws import DrawCounters, next_counters
from engine.errors import DamkaError
from engine.fen import parse_fen
from engine.game import Termination
from engine.move import Move
from engine.position import Position
from engine.printable import printable
from engine.search import Engine, Limits, SearchResult

from protocol.dxp.codec import (
    NAME_WIDTH,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    DxpError,
    DxpMove,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    GameRequestError,
    Message,
    UnsupportedVersionError,
    decode,
)
from protocol.dxp.convert import (
    VARIANT,
    draw_rule,
    find_move,
    move_to_dxp,
    position_from_dxp,
    position_to_dxp,
)
from protocol.dxp.defaults import (DEFAULT_GAMES, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_MINUTES,
                                   DEFAULT_MOVETIME)
from protocol.dxp.records import GameRecord

__all__ = [
    "NAME",
    "DEFAULT_MOVETIME",
    "LAST_RESORT_MOVETIME",
    "FLAG_GRACE",
    "FLAG_GRACE_PER_MOVE",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_MINUTES",
    "MAX_ERRORS",
    "Log",
    "MatchSettings",
    "DxpSettings",
    "MatchProgress",
    "SearchDone",
    "DxpSession",
]

#: seconds per move once our clock has run out (we still move rather than stall the game)
LAST_RESORT_MOVETIME = 0.05
#: the peer loses on time once it has used its clock plus this grace for the transport: our
#: measure of its time includes the network both ways and the wake-ups on both sides
FLAG_GRACE = 0.5
#: ... plus this much for each move the peer has made (round trips add up over a game)
FLAG_GRACE_PER_MOVE = 0.05
#: protocol errors a session keeps (the count goes on)
MAX_ERRORS = 100
NAME = f"damka {__version__}"[:NAME_WIDTH]

Log = Callable[[str], None]


def _no_log(line: str) -> None:
    pass


@dataclass(frozen=True)
class MatchSettings:
    """What the initiator asks for. ``white_first`` is our colour in the first game; colours
    then alternate. ``takebacks`` (for tests): on our turn at ply ``at`` (once per game) we
    ask to go back to ply ``to`` before moving."""

    games: int = DEFAULT_GAMES
    minutes: int = 0  #: whole minutes, as GAMEREQ writes them
    moves: int = 0
    white_first: bool = True
    fen: str | None = None
    takebacks: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class DxpSettings:
    name: str = NAME
    movetime: float = DEFAULT_MOVETIME  #: per move when the GAMEREQ gives 0 minutes
    match: MatchSettings | None = None  #: None: we follow; else we initiate these games
    #: never claim a game when the peer's clock runs out
    no_flag: bool = False
    #: drop a peer silent this many seconds (None: never); see DxpSession.wake_at
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT
    #: seconds in a minute of the GAMEREQ clock: 60, except in tests that need a short clock
    minute: float = 60.0
    #: the longest game clock accepted (minutes a side): a longer GAMEREQ is refused (code
    #: 2, as DXP has it for "time too long": docs/protocols.md 2.2), so that no peer holds a
    #: session for hours without moving; None: any
    max_minutes: int | None = DEFAULT_MAX_MINUTES


@dataclass
class MatchProgress:
    """Games requested so far by the initiator; shared by the connections of one match
    (which may run at once: ``take`` counts under a lock)."""

    requested: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def take(self, games: int) -> int | None:
        """The index of the next game to request, or None when all ``games`` are."""
        with self._lock:
            if self.requested >= games:
                return None
            self.requested += 1
            return self.requested - 1


@dataclass(frozen=True)
class SearchDone:
    """What a finished search hands to the session's ``post`` callback."""

    token: int
    future: "Future[SearchResult]"


@dataclass
class _Game:
    """One game in progress: the board, who we are, the time control and our clock."""

    board: Board
    we_white: bool
    minutes: int
    move_limit: int
    opponent: str
    round: int
    date: datetime.date
    #: seconds on each side's clock for the game (None: no clock, 0 minutes)
    clock: float | None = None
    our_used: float = 0.0
    #: the peer's time as we measure it (from our message going out to its move coming in)
    their_used: float = 0.0
    turn_started: float | None = None  #: when our turn began
    their_turn_started: float | None = None  #: when the peer's turn began (its clock runs)
    takebacks_done: set = field(default_factory=set)
    #: every position of the game and its draw counters, kept move by move (replaying the
    #: game for the draw rules would cost time on every move of a long game)
    positions: list = field(init=False)
    counters: list = field(init=False)

    def __post_init__(self) -> None:
        self.positions = [self.board.position]
        self.counters = [DrawCounters()]

    def push(self, move: Move) -> None:
        before = self.board.position
        self.board.push(move)
        after = self.board.position
        endgame_rules = bool(VARIANT.draws.endgame_three)
        self.counters.append(next_counters(self.counters[-1], before, move, after, endgame_rules))
        self.positions.append(after)

    def pop(self) -> None:
        self.board.pop()
        self.positions.pop()
        self.counters.pop()

    def draw(self) -> str | None:
        return draw_rule(self.board.position, self.counters[-1], self.positions[:-1])

    def flag_at(self) -> float | None:
        """When the peer's clock runs out, grace included, if its clock is running."""
        if self.clock is None or self.their_turn_started is None:
            return None
        grace = FLAG_GRACE + FLAG_GRACE_PER_MOVE * self.moves_played(not self.we_white)
        return self.their_turn_started + self.clock - self.their_used + grace

    @property
    def our_turn(self) -> bool:
        return self.board.white_to_move == self.we_white

    def moves_played(self, white: bool) -> int:
        """Moves made by one colour since the start position."""
        plies = len(self.board.move_stack)
        white_started = self.board.white_to_move == (plies % 2 == 0)
        first = (plies + 1) // 2
        return first if white == white_started else plies - first

    def target_ply(self, request: BackRequest) -> int:
        """The ply a BACKREQ means (Scan's reading: move 1 is the first move of the game)."""
        black_started = not self.start_white_to_move
        return (request.move_number - 1) * 2 + (0 if request.white_to_move else 1) - int(black_started)

    def back_request(self, ply: int) -> BackRequest:
        p = ply + (0 if self.start_white_to_move else 1)
        return BackRequest(p // 2 + 1, p % 2 == 0)

    @property
    def start_white_to_move(self) -> bool:
        return self.board.white_to_move == (len(self.board.move_stack) % 2 == 0)

    @property
    def start_position(self) -> Position:
        return self.positions[0]


class DxpSession:
    """The DXP dialogue of one connection, as a follower or (``settings.match``) initiator.

    Feed it ``receive(text, at)`` for every message text and ``search_done(event)`` for every
    event that ``post`` received; each returns the messages to send, in order. ``done``
    turns true when the connection should be closed once those are sent. ``at`` is the
    monotonic time the message arrived (our clock for the move starts then). The transport
    tells ``sent(message, at)`` when a message went out (the peer's clock starts then), and
    calls ``tick(now)`` once ``wake_at()`` has passed (a time forfeit, or an idle peer).
    """

    def __init__(
        self,
        engine: Engine,
        settings: DxpSettings = DxpSettings(),
        *,
        post: Callable[[SearchDone], object] | None = None,
        on_game: Callable[[GameRecord], object] | None = None,
        log: Log = _no_log,
        progress: MatchProgress | None = None,
        rounds: Callable[[], int] | None = None,
        site: str = "DXP",
    ):
        self.engine = engine
        self.settings = settings
        self.post = post or (lambda event: None)
        self.on_game = on_game
        # what a peer says (CHATs, names, bad messages quoted) reaches a terminal: nothing in
        # it may act there
        self.log: Log = lambda line: log(printable(line))
        self.match = settings.match
        self.progress = progress or MatchProgress()
        self._rounds = rounds or itertools.count(1).__next__
        self.site = site
        self.done = False
        self.game: _Game | None = None
        #: the last MAX_ERRORS protocol errors seen (what went wrong, in words), and how many
        self.errors: list[str] = []
        self.error_count = 0
        #: per move of ours: seconds spent beyond the search itself (message handling)
        self.handling: list[float] = []
        self.records: list[GameRecord] = []
        self._search: tuple[int, Future] | None = None
        self._searched = False  # a search ran on the engine: clear its table between games
        self._clearing: Future | None = None
        self._tokens = itertools.count(1)
        self._awaiting_end = False  # we sent GAMEEND: the next GAMEEND is its acknowledgement
        self._stop_after = False  # a stop code 1 went either way: close after the exchange
        self._requested: tuple[bool, Board] | None = None  # initiator: GAMEREQ sent
        self._pending_back: int | None = None  # initiator: BACKREQ sent for this ply
        self._last_sent_end = False
        #: the last message either way that advances the game (not a CHAT, not a malformed
        #: one): a peer that only chats or sends garbage does not hold its session
        self._quiet_since = time.monotonic()

    # -- entry points ------------------------------------------------------------------

    def start(self, at: float | None = None) -> list[Message]:
        """The first messages on a new connection (the initiator's GAMEREQ)."""
        self._quiet_since = time.monotonic() if at is None else at
        return self._sent(self._request_game() if self.match else [])

    def receive(self, text: str, at: float | None = None) -> list[Message]:
        """One message text (NUL removed) from the peer."""
        at = time.monotonic() if at is None else at
        try:
            message = decode(text)
        except UnsupportedVersionError as exc:
            return self._sent(self._unsupported_version(exc))
        except GameRequestError as exc:
            return self._sent(self._bad_request(exc))
        except DxpError as exc:
            return self._sent(self._protocol_error(f"malformed message ({exc.reason}): {text[:60]!r}"))
        if not isinstance(message, Chat):
            self._quiet_since = at
        try:
            return self._sent(self.handle(message, at))
        except Exception as exc:  # a bug of ours must not take the connection down
            self.log(traceback.format_exc().rstrip())
            return self._sent(self._protocol_error(f"internal error: {type(exc).__name__}: {exc}"))

    def handle(self, message: Message, at: float) -> list[Message]:
        handler = getattr(self, "_on_" + type(message).__name__)
        return handler(message, at)

    def sent(self, message: Message, at: float) -> None:
        """A message of ours went out at ``at``: the peer's silence counts from then, and so
        does its clock when the message handed it the turn."""
        if not isinstance(message, Chat):
            self._quiet_since = at
        game = self.game
        if (game is not None and game.their_turn_started is not None
                and isinstance(message, (DxpMove, GameAccept, BackAccept))):
            game.their_turn_started = max(game.their_turn_started, at)

    def wake_at(self) -> float | None:
        """The monotonic time at which ``tick`` has something to do, or None."""
        flag, idle = self._deadlines()
        times = [t for t in (flag, idle) if t is not None]
        return min(times) if times else None

    def tick(self, now: float | None = None) -> list[Message]:
        """Deadlines that have passed: claim the game when the peer's time is up (a CHAT and
        GAMEEND, reason "I win"), or drop a peer that has been silent too long."""
        now = time.monotonic() if now is None else now
        if self.done:
            return []
        flag, idle = self._deadlines()
        if flag is not None and now >= flag:
            return self._sent(self._claim_time(now))
        if idle is not None and now >= idle:
            return self._sent(self._drop_idle(now))
        return []

    def _deadlines(self) -> tuple[float | None, float | None]:
        """(when the peer loses on time, when it is dropped for silence), each None if not
        pending. Neither runs while we think; while the peer's clock runs, only the flag
        does (with ``no_flag``, the idle timeout counts from its fall)."""
        if self.done or self._search is not None:
            return None, None
        game, idle = self.game, self.settings.idle_timeout
        flag = None
        if (game is not None and not game.our_turn and self._pending_back is None
                and not self._awaiting_end):
            flag = game.flag_at()
        if flag is not None:
            if not self.settings.no_flag:
                return flag, None
            return None, (None if idle is None else max(flag, self._quiet_since) + idle)
        return None, (None if idle is None else self._quiet_since + idle)

    def is_current(self, event: SearchDone) -> bool:
        """Whether ``event`` is the search the session waits for (read without the
        connection's lock: a cancelled search's callback must not wait for it)."""
        search = self._search
        return search is not None and search[0] == event.token

    def search_done(self, event: SearchDone) -> list[Message]:
        """A search finished: play its move (stale searches are ignored)."""
        if self._search is None or self._search[0] != event.token or self.game is None:
            return []
        self._search = None
        try:
            result = event.future.result()
        except Exception as exc:  # (a cancelled search is never current: see _cancel_search)
            return self._sent(self._protocol_error(f"internal error in the search: {type(exc).__name__}: {exc}"))
        game = self.game
        move = result.best_move
        if move is None:  # cannot happen: a position without moves ends the game first
            return self._sent(self._end_game(EndReason.I_LOSE, "no legal moves"))
        now = time.monotonic()
        spent = now - (game.turn_started if game.turn_started is not None else now)
        game.our_used += spent
        game.turn_started = None
        self.handling.append(max(0.0, spent - result.time))
        game.push(move)
        game.their_turn_started = now  # (``sent`` moves it to when the MOVE went out)
        return self._sent([move_to_dxp(move, spent)])

    def disconnect(self, reason: str) -> None:
        """The connection is gone: an unfinished game is recorded as such."""
        self._cancel_search()
        if self.game is not None:
            self._record("*", f"connection lost: {reason}")
        self.done = True

    def close(self) -> None:
        """Stop any search, at the end of the connection; then call join() (without holding
        anything a search's callback may be waiting for)."""
        self._cancel_search()

    def join(self) -> None:
        """Wait until the search thread has finished its last job (a hash-table clear, say),
        so that the engine is free for the next connection."""
        clearing, self._clearing = self._clearing, None
        if clearing is not None:
            clearing.result()

    # -- messages ----------------------------------------------------------------------

    def _on_GameRequest(self, request: GameRequest, at: float) -> list[Message]:
        if self.match:
            return self._protocol_error("GAMEREQ sent to the initiator")
        out = self._abandon_for_request()
        try:
            start = (position_from_dxp(request.position) if request.position
                     else parse_fen(VARIANT, VARIANT.start_fen))
        except DamkaError as exc:
            return out + self._refuse(f"cannot play this position: {exc}")
        if not start.white or not start.black:
            return out + self._refuse("cannot play this position: one side has no pieces")
        board = Board(VARIANT, start)
        if not board.legal_moves:
            return out + self._refuse("cannot play this position: the side to move has no moves")
        longest = self.settings.max_minutes
        if longest is not None and request.minutes > longest:
            return out + self._refuse(f"time too long: {request.minutes} minutes a side, this "
                                      f"follower plays at most {longest}")
        we_white = request.follower_white
        white, black = (self.settings.name, request.name) if we_white else (request.name, self.settings.name)
        self._begin(board, we_white, request.minutes, request.moves, request.name)
        self.log(f"game {self.game.round}: {white} - {black}, {request.minutes} min, "
                 f"{request.moves or 'no'} move limit")
        out.append(GameAccept(self.settings.name, AcceptCode.ACCEPTED))
        if self.game.our_turn:
            out += self._our_turn(at)
        else:
            self.game.their_turn_started = at  # (``sent``: from when GAMEACC went out)
        return out

    def _refuse(self, why: str) -> list[Message]:
        self.log(f"refused a game: {why}")
        return [Chat.safe(why), GameAccept(self.settings.name, AcceptCode.REFUSED_THIS_GAME)]

    def _bad_request(self, exc: GameRequestError) -> list[Message]:
        """A GAMEREQ that breaks the layout (a thinking time of "0.5", say): refused with
        GAMEACC code 2 and a CHAT saying which field is wrong, as a game we cannot play."""
        if self.match:
            return self._protocol_error("GAMEREQ sent to the initiator")
        out = self._abandon_for_request()
        return out + self._refuse(f"GAMEREQ refused: {exc.reason}")

    def _abandon_for_request(self) -> list[Message]:
        """A GAMEREQ during a game: the initiator has given that game up for a new one."""
        self._awaiting_end = False
        if self.game is None:
            return []
        why = "a new GAMEREQ arrived during the game"
        self._cancel_search()
        self._record("*", why)
        return [Chat.safe(f"game abandoned: {why}")]

    def _unsupported_version(self, exc: UnsupportedVersionError) -> list[Message]:
        if self.match:
            return self._protocol_error("GAMEREQ sent to the initiator")
        self.log(f"refused a game: {exc.reason}")
        return [GameAccept(self.settings.name, AcceptCode.VERSION_NOT_SUPPORTED)]

    def _on_GameAccept(self, accept: GameAccept, at: float) -> list[Message]:
        if not self.match or self._requested is None:
            return self._protocol_error("GAMEACC without a GAMEREQ")
        we_white, board = self._requested
        self._requested = None
        if accept.code == AcceptCode.ACCEPTED:
            m = self.match
            self._begin(board, we_white, m.minutes, m.moves, accept.name)
            white, black = (self.settings.name, accept.name) if we_white else (accept.name, self.settings.name)
            self.log(f"game {self.game.round}: {white} - {black}")
            if self.game.our_turn:
                return self._our_turn(at)
            self.game.their_turn_started = at
            return []
        self.log(f"{accept.name or 'the follower'} refused the game (code {int(accept.code)})")
        if accept.code == AcceptCode.REFUSED_THIS_GAME:
            return self._request_game()
        self.done = True  # wrong version, or no games at all
        return []

    def _on_DxpMove(self, message: DxpMove, at: float) -> list[Message]:
        game = self.game
        if game is None:
            if self._awaiting_end:  # sent before our GAMEEND reached the peer
                return []
            return self._protocol_error(f"MOVE outside a game: {message.to_text()}")
        if game.our_turn or self._pending_back is not None:
            return self._protocol_error(f"MOVE out of turn: {message.to_text()}")
        flag = game.flag_at()
        if flag is not None and at >= flag and not self.settings.no_flag:
            return self._claim_time(at)  # the move came too late: the turn is ours, the game too
        move = find_move(game.board, message)
        if move is None:
            return self._protocol_error(f"illegal move {message.to_text()} ({_move_words(message)})")
        game.push(move)
        if game.their_turn_started is not None:
            game.their_used += max(0.0, at - game.their_turn_started)
            game.their_turn_started = None
        return self._our_turn(at)

    def _on_GameEnd(self, end: GameEnd, at: float) -> list[Message]:
        self._stop_after = self._stop_after or end.stop
        if self._awaiting_end:  # the acknowledgement of ours
            self._awaiting_end = False
            return self._after_game()
        if self.game is None:
            if self._last_sent_end:  # an acknowledgement of an acknowledgement: no loop
                return self._after_game() if self._stop_after else []
            return [GameEnd(EndReason.UNKNOWN, end.stop)] + self._after_game()
        self._cancel_search()
        result, why = self._result_of_their_end(end.reason)
        self._record(result, why)
        return [GameEnd(EndReason.UNKNOWN, end.stop)] + self._after_game()

    def _on_Chat(self, chat: Chat, at: float) -> list[Message]:
        self.log(f"chat: {chat.text}")
        return []

    def _on_BackRequest(self, request: BackRequest, at: float) -> list[Message]:
        game = self.game
        if game is None or self._pending_back is not None:
            return [BackAccept(BackCode.REFUSED)]
        target = game.target_ply(request)
        if not 0 <= target <= len(game.board.move_stack):
            return [BackAccept(BackCode.REFUSED)]
        self._cancel_search()
        self._take_back(target)
        self.log(f"took back to move {request.move_number} ({'White' if request.white_to_move else 'Black'})")
        out: list[Message] = [BackAccept(BackCode.ACCEPTED)]
        if game.our_turn:
            return out + self._our_turn(at)
        game.their_turn_started = at
        return out

    def _on_BackAccept(self, accept: BackAccept, at: float) -> list[Message]:
        game, target = self.game, self._pending_back
        if game is None or target is None:
            return self._protocol_error("BACKACC without a BACKREQ")
        self._pending_back = None
        if accept.code == BackCode.ACCEPTED:
            self._take_back(target)
            if not game.our_turn:
                game.their_turn_started = at
                return []
        return self._our_turn(at)  # (refused: carry on as if nothing happened, our turn)

    # -- the game ----------------------------------------------------------------------

    def _begin(self, board: Board, we_white: bool, minutes: int, moves: int, opponent: str) -> None:
        self._cancel_search()
        clock = minutes * self.settings.minute if minutes > 0 else None
        self.game = _Game(board, we_white, int(minutes), int(moves), printable(opponent),
                          self._rounds(),
                          datetime.date.today(), clock)
        self._pending_back = None

    def _our_turn(self, at: float) -> list[Message]:
        """It is our move: end the game if the rules say so, else start searching."""
        game = self.game
        if game.turn_started is None:
            game.turn_started = at
        board = game.board
        if not board.legal_moves:
            return self._end_game(EndReason.I_LOSE, "no legal moves")
        draw = game.draw()
        if draw:
            return self._end_game(EndReason.DRAW, f"draw: {draw}")
        limit = game.move_limit
        if limit and game.moves_played(True) >= limit and game.moves_played(False) >= limit:
            return self._end_game(EndReason.UNKNOWN, f"move limit of {limit} moves reached")
        ply = len(board.move_stack)
        if self.match:
            for at_ply, to_ply in self.match.takebacks:
                if at_ply == ply and at_ply not in game.takebacks_done and 0 <= to_ply <= ply:
                    game.takebacks_done.add(at_ply)
                    self._pending_back = to_ply
                    return [game.back_request(to_ply)]
        self._start_search()
        return []

    def _limits(self) -> Limits:
        game = self.game
        if game.clock is None:
            return Limits(movetime=self.settings.movetime)
        left = game.clock - game.our_used
        if left <= LAST_RESORT_MOVETIME * 2:
            return Limits(movetime=LAST_RESORT_MOVETIME)
        ours = game.moves_played(game.we_white)
        to_go = game.move_limit - ours if game.move_limit > ours else None
        return Limits(time_left=left, moves_to_go=to_go)

    def _start_search(self) -> None:
        token = next(self._tokens)
        limits = self._limits()
        self._searched = True
        # the callback is attached before the search can finish, and runs in the engine's
        # search thread (never in ours)
        future = self.engine.search_async(
            self.game.board, limits, done=lambda f, token=token: self.post(SearchDone(token, f)))
        self._search = (token, future)

    def _cancel_search(self) -> None:
        if self._search is None:
            return
        _, future = self._search
        self._search = None
        # stop and wait for the result (its callback still posts it, under a token no longer
        # current: it is ignored). The engine latches a stop that comes before its search
        # thread has begun, and is free again before the Future is done.
        self.engine.stop()
        try:
            future.result()
        except Exception:  # a search that failed has ended too
            pass

    def _take_back(self, ply: int) -> None:
        game = self.game
        while len(game.board.move_stack) > ply:
            game.pop()
        game.turn_started = None
        game.their_turn_started = None

    def _end_game(self, reason: EndReason, why: str, chat: bool = True,
                  ending: Termination | None = None) -> list[Message]:
        """End the game on our turn: GAMEEND (and a CHAT saying why)."""
        game = self.game
        self._cancel_search()
        if reason == EndReason.I_LOSE:
            result = _result(not game.we_white)
        elif reason == EndReason.I_WIN:
            result = _result(game.we_white)
        elif reason == EndReason.DRAW:
            result = "1-1"
        else:
            result = "*"
        self._record(result, why, ending)
        self._awaiting_end = True
        stop = self._last_game()
        self._stop_after = self._stop_after or stop
        return ([Chat.safe(why)] if chat else []) + [GameEnd(reason, stop)]

    def _claim_time(self, now: float) -> list[Message]:
        """The peer's clock has run out (grace included): we win on time. The claim goes out
        at once, though it is the peer's turn: a peer out of time may never move again, and
        a MOVE of its that crosses our GAMEEND is ignored like any after a GAMEEND."""
        game = self.game
        used = game.their_used + max(0.0, now - (game.their_turn_started or now))
        minutes = f"{game.minutes} minute{'s' if game.minutes != 1 else ''}"
        why = (f"time forfeit: {game.opponent or 'the opponent'}'s time ran out "
               f"({used:.1f} s used of {minutes})")
        self.log(why)
        return self._end_game(EndReason.I_WIN, why, ending=Termination.TIME_FORFEIT)

    def _drop_idle(self, now: float) -> list[Message]:
        """The peer has said nothing for the idle timeout: a CHAT, and the connection closes
        (a game in progress is recorded unfinished)."""
        why = f"nothing received for {self.settings.idle_timeout:g} s"
        self.log(f"closing the connection: {why}")
        self._cancel_search()
        if self.game is not None:
            self._record("*", f"connection dropped: {why}")
        self.done = True
        return [Chat.safe(f"closing the connection: {why}")]

    def _protocol_error(self, why: str) -> list[Message]:
        """Bad input: say why; a game in progress ends (GAMEEND: the bad message was the
        peer's turn, so the turn is ours)."""
        self.errors.append(why)
        del self.errors[:-MAX_ERRORS]
        self.error_count += 1
        self.log(f"protocol error: {why}")
        chat = Chat.safe(f"error: {why}")
        if self.game is None:
            return [chat]
        self._cancel_search()
        self._record("*", why)
        self._awaiting_end = True
        self._pending_back = None
        stop = self._last_game()
        self._stop_after = self._stop_after or stop
        return [chat, GameEnd(EndReason.UNKNOWN, stop)]

    def _result_of_their_end(self, reason: EndReason) -> tuple[str, str]:
        board = self.game.board
        if not board.legal_moves:
            return _result(not board.white_to_move), "no legal moves"
        draw = self.game.draw()
        if draw:
            return "1-1", f"draw: {draw}"
        they_white = not self.game.we_white
        if reason == EndReason.I_LOSE:
            return _result(not they_white), "the opponent gave up"
        if reason == EndReason.I_WIN:
            return _result(they_white), "the opponent claimed a win"
        if reason == EndReason.DRAW:
            return "1-1", "the opponent claimed a draw"
        return "*", "ended by the opponent"

    def _record(self, result: str, why: str, ending: Termination | None = None) -> None:
        game = self.game
        self.game = None
        self._pending_back = None
        if self._searched:  # a fresh hash table for the next game, on the search thread
            self._cancel_search()
            self._clearing = self.engine.clear_async()
        white, black = ((self.settings.name, game.opponent) if game.we_white
                        else (game.opponent, self.settings.name))
        record = GameRecord(
            round=game.round, white=white, black=black, result=result,
            start=game.start_position, moves=tuple(game.board.move_stack),
            termination=why, date=game.date, site=self.site, ending=ending,
        )
        self.records.append(record)
        self.log(f"game {record.round} over after {len(record.moves)} plies: {result} ({why})")
        if self.on_game is not None:
            try:
                self.on_game(record)
            except Exception as exc:  # a full disk must not end the match
                self.log(f"could not save the game: {type(exc).__name__}: {exc}")

    def _last_game(self) -> bool:
        """The stop code of our GAMEEND: the initiator's last game ends the session."""
        return bool(self.match) and self.progress.requested >= self.match.games

    def _after_game(self) -> list[Message]:
        """Both GAMEENDs are out: the next game, or the end of the session."""
        if self._stop_after:
            self.done = True
            return []
        if self.match and self._requested is None and self.game is None:
            return self._request_game()
        return []

    def _request_game(self) -> list[Message]:
        m = self.match
        index = self.progress.take(m.games)
        if index is None:
            self.done = True
            return []
        we_white = m.white_first if index % 2 == 0 else not m.white_first
        board = Board(VARIANT, m.fen) if m.fen else Board(VARIANT)
        self._requested = (we_white, board)
        start = parse_fen(VARIANT, VARIANT.start_fen)
        position = None if board.position == start else position_to_dxp(board.position)
        return [GameRequest(self.settings.name, not we_white, m.minutes, m.moves, position)]

    def _sent(self, messages: list[Message]) -> list[Message]:
        if messages:
            self._last_sent_end = isinstance(messages[-1], GameEnd)
        return messages


def _result(white_wins: bool) -> str:
    return "2-0" if white_wins else "0-2"


def _move_words(message: DxpMove) -> str:
    sep = "x" if message.captured else "-"
    text = f"{message.origin}{sep}{message.destination}"
    if message.captured:
        text += " taking " + ",".join(str(n) for n in message.captured)
    return text
