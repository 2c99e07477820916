"""``damka dxp``: engine-against-engine games over TCP with the DamExchange protocol (DXP).

Three layers, each knowing nothing of the one above it:

* ``protocol.dxp.codec``: message texts <-> value types, and NUL framing (no I/O);
* ``DxpSession`` (here): the state machine of one connection. It is fed messages and search
  results and returns the messages to send; it keeps the board, the clocks and the game end,
  and drives the search facade (engine.search.Engine). It never touches a socket, so a whole
  dialogue can be scripted in a test;
* the transport (here): sockets, pacing of our messages, and the listen/accept and connect
  loops. Each connection has its own thread (reading the socket, and waking the session when
  a deadline passes), its own session and its own engine; ``max_sessions`` of them play at
  once, and a connection beyond that is told "busy" (a CHAT, and GAMEACC code 2 for its
  GAMEREQ). Searches run in one long-lived thread per session (run_connection explains the
  locking).

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
DXP exists for international draughts (10x10) only.
"""

from __future__ import annotations

import datetime
import itertools
import queue
import select
import socket
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from engine import __version__
from engine.board import Board
from engine.draws import DrawCounters, game_history, next_counters
from engine.errors import DamkaError
from engine.fen import parse_fen
from engine.game import Game, Termination, draw_termination
from engine.move import Move
from engine.notation import square_letters
from engine.pdn import append_game, check_appendable, write_game
from engine.position import Position
from engine.printable import printable
from engine.search import Engine, Limits, SearchResult
from engine.squares import square_number, square_of_number
from engine.variants import get_variant

from protocol.dxp.transport import send_all
from protocol.dxp.codec import (
    DEFAULT_PORT,
    NAME_WIDTH,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    DxpError,
    DxpMove,
    DxpPosition,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    GameRequestError,
    Message,
    Reassembler,
    UnsupportedVersionError,
    decode,
    encode,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "PACE",
    "MatchSettings",
    "DxpSettings",
    "MatchProgress",
    "GameRecord",
    "DxpSession",
    "SearchDone",
    "run_connection",
    "refuse_busy",
    "DxpServer",
    "connect",
    "record_game",
    "pdn_game",
    "draw_by_rules",
    "main",
]

VARIANT = get_variant("international")
DEFAULT_HOST = "127.0.0.1"
#: the least time between two of our messages with nothing received in between, and always
#: after GAMEACC or BACKACC: pydraughts merges messages that arrive together and loses the
#: second, and a widely used client loses a first move sent right after GAMEACC
PACE = 0.1
#: seconds per move when the GAMEREQ gives no thinking time (000 minutes)
DEFAULT_MOVETIME = 1.0
#: seconds per move once our clock has run out (we still move rather than stall the game)
LAST_RESORT_MOVETIME = 0.05
#: the peer loses on time once it has used its clock plus this grace for the transport: our
#: measure of its time includes the network both ways and the wake-ups on both sides
FLAG_GRACE = 0.5
#: ... plus this much for each move the peer has made (round trips add up over a game)
FLAG_GRACE_PER_MOVE = 0.05
#: drop a peer silent this long (seconds; not while its clock runs in a game, nor while we think)
DEFAULT_IDLE_TIMEOUT = 300.0
#: the longest GAMEREQ clock a follower accepts by default, minutes a side
DEFAULT_MAX_MINUTES = 120
#: protocol errors a session keeps (the count goes on)
MAX_ERRORS = 100
#: connections served at once by default (each has its own engine and hash table)
DEFAULT_MAX_SESSIONS = 2
#: a connection beyond the limit waits this long for a session to end before it is told busy
BUSY_WAIT = 0.5
#: ... then this long for its GAMEREQ (answered with GAMEACC code 2) before it is closed
BUSY_LINGER = 2.0
#: the longest the reading thread sleeps before it asks the session for its next deadline
POLL_CAP = 0.2
NAME = f"damka {__version__}"[:NAME_WIDTH]

Log = Callable[[str], None]


def _no_log(line: str) -> None:
    pass


# -- positions and moves between DXP and the engine ---------------------------------------


def position_from_dxp(dxp: DxpPosition) -> Position:
    """The engine position of a GAMEREQ position; InvalidFenError if no game can have it."""
    white, black = [], []
    for number, ch in enumerate(dxp.squares, start=1):
        if ch in "wW":
            white.append(("K" if ch == "W" else "") + str(number))
        elif ch in "zZ":
            black.append(("K" if ch == "Z" else "") + str(number))
    fen = f"{'W' if dxp.white_to_move else 'B'}:W{','.join(white)}:B{','.join(black)}"
    return parse_fen(VARIANT, fen)  # the FEN reader checks men on their crowning rows


def position_to_dxp(position: Position) -> DxpPosition:
    return DxpPosition(position.white_to_move, square_letters(VARIANT, position, "wWzZe"))


def move_to_dxp(move: Move, seconds: float = 0) -> DxpMove:
    return DxpMove(
        square_number(VARIANT, move.origin),
        square_number(VARIANT, move.destination),
        tuple(square_number(VARIANT, s) for s in move.captured),
        round(seconds),
    )


def find_move(board: Board, dxp: DxpMove) -> Move | None:
    """The legal move with the same origin, destination and set of captured pieces."""
    origin = square_of_number(VARIANT, dxp.origin)
    destination = square_of_number(VARIANT, dxp.destination)
    captured = tuple(sorted(square_of_number(VARIANT, n) for n in dxp.captured))
    for move in board.legal_moves:
        if move.origin == origin and move.destination == destination and move.captured == captured:
            return move
    return None


def draw_by_rules(board: Board) -> str | None:
    """The draw rule that ends the game in this position (international rules), or None.

    Threefold repetition, 25 moves each with only kings moving and nothing captured, and the
    endgame rules: a lone king against three pieces (one a king) 16 moves each, against at
    most two (one a king) 5 moves each. The counters come from the board's move stack.
    """
    history = game_history(board)
    return draw_rule(board.position, history.counters, history.positions)


def draw_rule(position: Position, counters: DrawCounters, earlier: Sequence[Position]) -> str | None:
    """draw_by_rules for a position, its draw counters and the positions before it (oldest
    first); the rules themselves are engine.game's."""
    termination = draw_termination(VARIANT, position, counters, earlier)
    return None if termination is None else str(termination)


# -- finished games -----------------------------------------------------------------------


@dataclass(frozen=True)
class GameRecord:
    """A finished (or abandoned) game, as written to the PDN file. ``termination`` says why in
    words (a PDN comment after the last move); ``ending`` is the Termination of an end the
    board does not show (a time forfeit, a resignation), None when the rules or nobody know."""

    round: int
    white: str
    black: str
    result: str  #: "2-0", "0-2", "1-1" or "*"
    start: Position
    moves: tuple[Move, ...]
    termination: str
    date: datetime.date
    site: str = "DXP"
    event: str = "DXP game"
    ending: Termination | None = None


def record_game(record: GameRecord) -> Game:
    """The record as an engine.game Game: the tags, the moves, the end (``Game.end`` for an
    end the rules do not give, such as a loss on time) and the why as a closing comment."""
    tags = {
        "Event": record.event,
        "Site": record.site,
        "Date": record.date.strftime("%Y.%m.%d"),
        "Round": str(record.round),
        "White": record.white,
        "Black": record.black,
        "GameType": str(VARIANT.gametype),
    }
    game = Game(VARIANT, record.start, tags)
    for move in record.moves:
        game.push(move)
    if record.result != "*":
        rules = game.rules_outcome()
        if (rules is None or rules.result != record.result
                or record.ending not in (None, rules.termination)):
            game.end(record.result, record.ending)
    if record.termination:
        game.add_comment(record.termination)
    return game


def pdn_game(record: GameRecord) -> str:
    """The record as PDN (engine.pdn's writer): the seven-tag roster, GameType, FEN when not
    the start position, Termination for an end the board does not show, the moves, the why
    in a comment and the result; a blank line after it."""
    return write_game(record_game(record)) + "\n"


_pdn_lock = threading.Lock()


def append_pdn(path: str, record: GameRecord) -> None:
    """Append one game in one write (sessions of several connections share the file)."""
    with _pdn_lock:
        append_game(path, record_game(record))


# -- the session --------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchSettings:
    """What the initiator asks for. ``white_first`` is our colour in the first game; colours
    then alternate. ``takebacks`` (for tests): on our turn at ply ``at`` (once per game) we
    ask to go back to ply ``to`` before moving."""

    games: int = 2
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
    #: 2, as the spec has it for "time too long"), so that no peer holds a session for hours
    #: without moving; None: any
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


class _SearchWorker:
    """A long-lived thread that runs a session's searches one after another.

    Engine.search_async starts a thread per search, which costs about a millisecond here:
    more than the whole budget for handling a move. A queued job costs some microseconds.
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self._jobs: "queue.SimpleQueue" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="damka-dxp-search", daemon=True)
        self._thread.start()

    def submit(self, board: Board, limits: Limits,
               done: Callable[[Future], object]) -> "Future[SearchResult]":
        """Queue a search; ``done`` is called with its Future in the search thread (never
        in the caller's: it is attached before the search can finish)."""
        future: "Future[SearchResult]" = Future()
        future.add_done_callback(done)
        self._jobs.put((board.copy(), limits, future))
        return future

    def cancel(self, future: Future) -> None:
        """Stop a search (queued or running) and wait until it has let go of the engine.
        (A cancelled job's callback still runs, in the caller's thread: it must be ignored.)"""
        if future.cancel():
            return
        while True:
            self.engine.stop()  # again and again: it may be called just before the search begins
            try:
                future.result(timeout=0.01)
            except Exception:  # timeouts, and a search that failed: done either way
                pass
            if future.done():
                break
        while self.engine.searching:  # the engine is released a moment after the result
            time.sleep(0.0002)

    def clear(self) -> None:
        """Forget the hash table, in this thread and in turn with the searches: between two
        games, while nothing waits for us (a large table takes tens of milliseconds)."""
        self._jobs.put("clear")

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if job == "clear":
                self.engine.clear()
                continue
            board, limits, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = self.engine.search(board, limits)
            except BaseException as exc:  # handed over through the Future
                future.set_exception(exc)
            else:
                future.set_result(result)

    def close(self) -> None:
        """End the thread once the queued jobs are done (join() waits for that)."""
        self._jobs.put(None)

    def join(self) -> None:
        self._thread.join()


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
        self._worker: _SearchWorker | None = None
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
        if self._worker is not None:
            self._worker.close()

    def join(self) -> None:
        """Wait until the search thread has finished its last job (a hash-table clear, say),
        so that the engine is free for the next connection."""
        if self._worker is not None:
            self._worker.join()
            self._worker = None

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
        if self._worker is None:
            self._worker = _SearchWorker(self.engine)
        token = next(self._tokens)
        limits = self._limits()
        future = self._worker.submit(self.game.board, limits,
                                     lambda f, token=token: self.post(SearchDone(token, f)))
        self._search = (token, future)

    def _cancel_search(self) -> None:
        if self._search is None:
            return
        _, future = self._search
        self._search = None
        self._worker.cancel(future)

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
        if self._worker is not None:  # a fresh hash table for the next game
            self._worker.clear()
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


# -- the transport ------------------------------------------------------------------------


class _Writer:
    """Writes messages, keeping PACE between two of ours with nothing received between them
    (and always after GAMEACC/BACKACC); ``on_sent(message, at)`` hears when each went out."""

    def __init__(self, sock: socket.socket, pace: float, trace: Log | None,
                 on_sent: Callable[[Message, float], object] | None = None):
        self.sock = sock
        self.pace = pace
        self.trace = trace
        self.on_sent = on_sent
        self.last_sent = -1e9
        self.last: Message | None = None
        self.received_since = True

    def send(self, messages: Iterable[Message]) -> bool:
        for message in messages:
            wait = self.last_sent + self.pace - time.monotonic()
            paced = not self.received_since or isinstance(self.last, (GameAccept, BackAccept))
            if paced and wait > 0:
                time.sleep(wait)
            try:
                send_all(self.sock, encode(message))
            except OSError:  # (a peer that never reads: TimeoutError after SEND_TIMEOUT)
                return False
            if self.trace:
                self.trace(f"> {message.to_text()}")
            self.last_sent = time.monotonic()
            self.last = message
            self.received_since = False
            if self.on_sent is not None:
                self.on_sent(message, self.last_sent)
        return True


def run_connection(sock: socket.socket, session: DxpSession, *, pace: float = PACE,
                   trace: Log | None = None) -> DxpSession:
    """Run one connection to its end (the session is done or the peer went away).

    This thread reads the socket and hands each message to the session at once; a finished
    search calls back from the search thread. Both go through one lock, and each sends what
    the session returned before letting go of it, so messages leave in the session's order.
    (No hand-off between threads on the way: each would add a wake-up to every move.)
    Between messages this thread waits with a timeout: when the session's next deadline
    (``wake_at``: the peer's flag, or its idle timeout) has passed, it calls ``tick``. It
    asks again at least every POLL_CAP seconds, since a search that ends starts the peer's
    clock meanwhile.
    """
    lock = threading.RLock()  # (a cancelled search calls back at once, in the same thread)
    writer = _Writer(sock, pace, trace, on_sent=session.sent)

    def deliver(messages: list[Message]) -> None:  # under the lock
        if not writer.send(messages):
            session.disconnect("sending failed")
        if session.done:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes this thread's poll
            except OSError:
                pass

    def on_search(event: SearchDone) -> None:  # in the search thread
        with lock:
            if not session.done:
                deliver(session.search_done(event))

    session.post = on_search
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    frames = Reassembler()
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLPRI)
    try:
        with lock:
            deliver(session.start())
        while not session.done:
            with lock:
                wake = session.wake_at()
            wait = POLL_CAP if wake is None else min(POLL_CAP, max(0.0, wake - time.monotonic()))
            try:
                ready = poller.poll(wait * 1000)
            except OSError as exc:
                with lock:
                    session.disconnect(f"connection error: {exc}")
                break
            if not ready:
                with lock:
                    if session.done:
                        break
                    if wake is not None and time.monotonic() >= wake:
                        deliver(session.tick(time.monotonic()))
                continue
            try:
                data = sock.recv(4096)
                reason = "the peer closed the connection"
            except OSError as exc:
                data, reason = b"", f"connection error: {exc}"
            at = time.monotonic()
            with lock:
                if session.done:
                    break
                if not data:
                    session.disconnect(reason)
                    break
                writer.received_since = True
                for text in frames.feed(data):
                    if trace:
                        trace(f"< {printable(text)}")
                    deliver(session.receive(text, at))
                    if session.done:
                        break
    finally:
        with lock:
            session.close()
        session.join()  # outside the lock: the search thread may be calling back
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
    return session


def refuse_busy(sock: socket.socket, why: str, follower: bool, *, linger: float = BUSY_LINGER,
                name: str = NAME) -> None:
    """A connection we cannot serve now: a CHAT saying so at once; a follower then answers
    the peer's GAMEREQ (if one comes within ``linger`` seconds) with GAMEACC code 2, "refused
    this game, willing to play another" (later). Then the connection is closed."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        send_all(sock, encode(Chat.safe(why)), BUSY_LINGER)
        if follower:
            frames = Reassembler()
            deadline = time.monotonic() + linger
            answered = False
            while not answered:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                sock.settimeout(left)
                data = sock.recv(4096)
                if not data:
                    break
                for text in frames.feed(data):
                    if text.startswith(GameRequest.HEADER):
                        send_all(sock, encode(GameAccept(name, AcceptCode.REFUSED_THIS_GAME)),
                                 BUSY_LINGER)
                        answered = True
                        break
    except OSError:  # (socket.timeout included)
        pass
    finally:
        _close_gently(sock)


def _close_gently(sock: socket.socket, wait: float = 1.0) -> None:
    """Close after the peer has had what we sent: FIN, then read until its end (or ``wait``
    seconds), so that a reset never overtakes our last messages."""
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(4096):
                break
    except OSError:
        pass
    sock.close()


class _EnginePool:
    """Engines for the sessions: made when first needed (``make``), kept for the next session
    (so at most one per session that can run at once: memory is sessions x hash)."""

    def __init__(self, first: Engine | None, make: Callable[[], Engine] | None):
        self._idle: list[Engine] = [first] if first is not None else []
        self._make = make
        self._lock = threading.Lock()

    def get(self) -> Engine | None:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._make() if self._make is not None else None

    def put(self, engine: Engine) -> None:
        with self._lock:
            self._idle.append(engine)


class DxpServer:
    """A listening socket that hands out connections (``play`` serves each in its thread)."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.create_server((host, port), family=family)
        self.sock.settimeout(0.25)  # so that close() from another thread is noticed
        self._closed = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return host, port

    def accept(self, until: Callable[[], bool] | None = None) -> tuple[socket.socket, str] | None:
        """The next connection, or None once the server is closed (or ``until()`` is true,
        asked every quarter of a second)."""
        while not self._closed.is_set() and not (until is not None and until()):
            try:
                conn, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self._closed.is_set():
                    return None
                raise
            conn.settimeout(None)
            return conn, f"{peer[0]}:{peer[1]}"
        return None

    def close(self) -> None:
        self._closed.set()
        self.sock.close()


def connect(host: str, port: int, timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    return sock


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) -> (host, port); ValueError if it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


# -- the command ----------------------------------------------------------------------------


def _stdout_log(line: str) -> None:
    sys.stdout.write(f"damka dxp: {line}\n")  # one write: sessions log from several threads
    sys.stdout.flush()


#: connections (served or being told busy) beyond the session limit that may wait at once;
#: more are closed without a word (a flood must not make a thread each)
MAX_WAITING = 16


def play(
    engine: Engine,
    settings: DxpSettings,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    connect_to: tuple[str, int] | None = None,
    on_game: Callable[[GameRecord], object] | None = None,
    log: Log = _stdout_log,
    trace: Log | None = None,
    server: DxpServer | None = None,
    on_session: Callable[[DxpSession], object] | None = None,
    max_sessions: int = 1,
    new_engine: Callable[[], Engine] | None = None,
) -> int:
    """Serve (listen) or play (connect) until done; returns the exit status.

    Listening, each connection gets its own thread, session and engine (``engine`` first,
    then more from ``new_engine``, kept for later sessions), up to ``max_sessions`` at once
    (1 without ``new_engine``); a connection beyond that waits BUSY_WAIT seconds for a free
    session and is then told busy (``refuse_busy``). A follower serves until the server is
    closed; an initiator until all its games are requested. Then the sessions still playing
    are waited for. Connecting, one connection is played to its end. ``on_session`` sees
    each connection's session (for statistics); ``on_game`` is called under a lock.
    """
    progress = MatchProgress()
    counter = itertools.count(1)
    shared = threading.Lock()

    def rounds() -> int:
        with shared:
            return next(counter)

    def finished(record: GameRecord) -> None:
        if on_game is not None:
            with shared:
                on_game(record)

    def session(peer: str, engine: Engine, session_log: Log) -> DxpSession:
        new = DxpSession(engine, settings, on_game=finished, log=session_log, progress=progress,
                         rounds=rounds, site=peer)
        if on_session is not None:
            on_session(new)
        return new

    if connect_to is not None:
        try:
            sock = connect(*connect_to)
        except OSError as exc:
            log(f"cannot connect to {connect_to[0]}:{connect_to[1]}: {exc}")
            return 1
        peer = f"{connect_to[0]}:{connect_to[1]}"
        log(f"connected to {peer}")
        run_connection(sock, session(peer, engine, log), trace=trace)
        log("connection closed")
        return 0

    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
    limit = max_sessions if new_engine is not None else 1
    pool = _EnginePool(engine, new_engine)
    slots = threading.BoundedSemaphore(limit)
    waiting = threading.BoundedSemaphore(limit + MAX_WAITING)
    threads: list[threading.Thread] = []
    busy = f"busy: already playing on {limit} connection{'s' if limit != 1 else ''}; try again later"

    def all_requested() -> bool:
        return settings.match is not None and progress.requested >= settings.match.games

    def serve(sock: socket.socket, peer: str) -> None:
        try:
            if not slots.acquire(timeout=BUSY_WAIT):
                log(f"{peer}: refused: {busy}")
                refuse_busy(sock, busy, follower=settings.match is None, name=settings.name)
                return
            try:
                try:
                    ours = pool.get()
                except (MemoryError, ValueError) as exc:  # (no memory for another hash table)
                    ours = None
                    log(f"{peer}: cannot make an engine: {type(exc).__name__}: {exc}")
                if ours is None:
                    refuse_busy(sock, busy, follower=settings.match is None, name=settings.name)
                    return
                try:
                    run_connection(sock, session(peer, ours, lambda line: log(f"{peer}: {line}")),
                                   trace=None if trace is None else (lambda line: trace(f"{peer} {line}")))
                finally:
                    pool.put(ours)
            finally:
                slots.release()
            log(f"connection from {peer} closed")
        except Exception:  # whatever happened, keep serving
            log(traceback.format_exc().rstrip())
        finally:
            waiting.release()

    server = server or DxpServer(host, port)
    bound_host, bound_port = server.address
    log(f"listening on {bound_host}:{bound_port}")
    try:
        while not all_requested():
            accepted = server.accept(until=all_requested)
            if accepted is None:
                break
            sock, peer = accepted
            if not waiting.acquire(blocking=False):
                log(f"connection from {peer} closed at once: too many connections")
                sock.close()
                continue
            log(f"connection from {peer}")
            thread = threading.Thread(target=serve, args=(sock, peer), name=f"damka-dxp {peer}",
                                      daemon=True)
            threads.append(thread)
            thread.start()
            threads = [t for t in threads if t.is_alive()]
    finally:
        server.close()
        for thread in threads:
            thread.join()
    return 0


def main(args) -> int:
    """``damka dxp`` with the parsed command-line arguments (see protocol/cli.py)."""
    match = None
    if args.initiator:
        if args.fen:
            board = Board(VARIANT, args.fen)  # ValueError (an exit status 2) if unreadable
            if not board.legal_moves:
                raise ValueError(f"the side to move has no moves in {args.fen!r}")
        match = MatchSettings(
            games=args.games, minutes=args.time, moves=args.moves,
            white_first=args.colour == "white", fen=args.fen,
        )
    settings = DxpSettings(movetime=args.move_time, match=match, no_flag=args.no_flag,
                           idle_timeout=args.idle_timeout or None,
                           max_minutes=getattr(args, "max_minutes", DEFAULT_MAX_MINUTES) or None)
    connect_to = parse_address(args.connect) if args.connect else None

    egtb = getattr(args, "egtb", None)
    if egtb is not None:
        from engine.egtb import default_dir

        egtb = egtb or default_dir()

    def new_engine() -> Engine:
        return Engine(VARIANT, hash_mb=args.hash, level=args.level,
                      threads=args.threads, egtb=egtb)

    if args.pdn:
        check_appendable(args.pdn)  # now, not as the first game ends
    engine = new_engine()  # the first at once: a hash table that does not fit fails now
    on_game = (lambda record: append_pdn(args.pdn, record)) if args.pdn else None
    log = _stdout_log if not args.quiet else _no_log
    trace = _stdout_log if args.verbose else None
    try:
        return play(engine, settings, host=args.host, port=args.port, connect_to=connect_to,
                    on_game=on_game, log=log, trace=trace, max_sessions=args.max_sessions,
                    new_engine=new_engine)
    finally:
        sys.stdout.flush()
