"""``damka dxp``: engine-against-engine games over TCP with the DamExchange protocol (DXP).

Three layers, each knowing nothing of the one above it:

* ``protocol.dxp.codec``: message texts <-> value types, and NUL framing (no I/O);
* ``DxpSession`` (here): the state machine of one connection. It is fed messages and search
  results and returns the messages to send; it keeps the board, the clocks and the game end,
  and drives the search facade (engine.search.Engine). It never touches a socket, so a whole
  dialogue can be scripted in a test;
* the transport (here): sockets, pacing of our messages, and the listen/accept and connect
  loops. The connection's thread reads the socket; searches run in one long-lived thread per
  session (run_connection explains the locking).

Bad input never ends the process: an illegal move or a malformed or unexpected message ends
the game in progress with a CHAT saying why and a GAMEEND (the bad message used up the peer's
turn, so the turn is ours); a dropped connection ends it silently, and the server goes back to
waiting for the next connection.
Every finished game goes to the ``on_game`` callback (a PDN file with ``--pdn``).
DXP exists for international draughts (10x10) only.
"""

from __future__ import annotations

import datetime
import itertools
import queue
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
from engine.fen import parse_fen, write_fen
from engine.game import draw_termination
from engine.move import Move
from engine.notation import square_letters
from engine.position import Position
from engine.search import Engine, Limits, SearchResult
from engine.squares import square_number, square_of_number
from engine.variants import get_variant

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
    "DxpServer",
    "connect",
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
    """A finished (or abandoned) game, as written to the PDN file."""

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


def pdn_game(record: GameRecord) -> str:
    """A minimal PDN game: the seven-tag roster, GameType, FEN when not the start position,
    the moves and the result. (Kept to one function so a full PDN writer can replace it.)"""
    board = Board(VARIANT, record.start)
    tags = [
        ("Event", record.event),
        ("Site", record.site),
        ("Date", record.date.strftime("%Y.%m.%d")),
        ("Round", str(record.round)),
        ("White", record.white),
        ("Black", record.black),
        ("Result", record.result),
        ("GameType", str(VARIANT.gametype)),
    ]
    if record.start != parse_fen(VARIANT, VARIANT.start_fen):
        tags.append(("FEN", write_fen(VARIANT, record.start)))
    lines = [f'[{name} "{_pdn_escape(value)}"]' for name, value in tags]
    words: list[str] = []
    number = 1
    for i, move in enumerate(record.moves):
        text = board.pdn(move)
        if board.white_to_move:
            text = f"{number}. {text}"  # a move number is never split from its move
        elif i == 0:
            text = f"{number}... {text}"
        words.append(text)
        if not board.white_to_move:
            number += 1
        board.push(move)
    if record.termination:
        words.append("{" + record.termination.replace("}", ")") + "}")
    words.append(record.result)
    lines.append("")
    line = ""
    for word in words:
        if line and len(line) + 1 + len(word) > 79:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines) + "\n\n"


def _pdn_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def append_pdn(path: str, record: GameRecord) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(pdn_game(record))


# -- the session --------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchSettings:
    """What the initiator asks for. ``white_first`` is our colour in the first game; colours
    then alternate. ``takebacks`` (for tests): on our turn at ply ``at`` (once per game) we
    ask to go back to ply ``to`` before moving."""

    games: int = 2
    minutes: int = 0
    moves: int = 0
    white_first: bool = True
    fen: str | None = None
    takebacks: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class DxpSettings:
    name: str = NAME
    movetime: float = DEFAULT_MOVETIME  #: per move when the GAMEREQ gives 0 minutes
    match: MatchSettings | None = None  #: None: we follow; else we initiate these games


@dataclass
class MatchProgress:
    """Games requested so far by the initiator; shared by the connections of one match."""

    requested: int = 0


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
    minutes: float
    move_limit: int
    opponent: str
    round: int
    date: datetime.date
    our_used: float = 0.0
    their_used: float = 0.0
    turn_started: float | None = None
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
    monotonic time the message arrived (our clock for the move starts then).
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
        self.log = log
        self.match = settings.match
        self.progress = progress or MatchProgress()
        self._rounds = rounds or itertools.count(1).__next__
        self.site = site
        self.done = False
        self.game: _Game | None = None
        #: protocol errors seen (what went wrong, in words)
        self.errors: list[str] = []
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

    # -- entry points ------------------------------------------------------------------

    def start(self) -> list[Message]:
        """The first messages on a new connection (the initiator's GAMEREQ)."""
        return self._sent(self._request_game() if self.match else [])

    def receive(self, text: str, at: float | None = None) -> list[Message]:
        """One message text (NUL removed) from the peer."""
        at = time.monotonic() if at is None else at
        try:
            message = decode(text)
        except UnsupportedVersionError as exc:
            return self._sent(self._unsupported_version(exc))
        except DxpError as exc:
            return self._sent(self._protocol_error(f"malformed message ({exc.reason}): {text[:60]!r}"))
        try:
            return self._sent(self.handle(message, at))
        except Exception as exc:  # a bug of ours must not take the connection down
            self.log(traceback.format_exc().rstrip())
            return self._sent(self._protocol_error(f"internal error: {type(exc).__name__}: {exc}"))

    def handle(self, message: Message, at: float) -> list[Message]:
        handler = getattr(self, "_on_" + type(message).__name__)
        return handler(message, at)

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
        out: list[Message] = []
        if self.game is not None:  # the initiator has given up this game for a new one
            why = "a new GAMEREQ arrived during the game"
            self._cancel_search()
            self._record("*", why)
            out.append(Chat.safe(f"game abandoned: {why}"))
        self._awaiting_end = False
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
        we_white = request.follower_white
        white, black = (self.settings.name, request.name) if we_white else (request.name, self.settings.name)
        self._begin(board, we_white, request.minutes, request.moves, request.name)
        self.log(f"game {self.game.round}: {white} - {black}, {request.minutes} min, "
                 f"{request.moves or 'no'} move limit")
        out.append(GameAccept(self.settings.name, AcceptCode.ACCEPTED))
        if self.game.our_turn:
            out += self._our_turn(at)
        return out

    def _refuse(self, why: str) -> list[Message]:
        self.log(f"refused a game: {why}")
        return [Chat.safe(why), GameAccept(self.settings.name, AcceptCode.REFUSED_THIS_GAME)]

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
            return self._our_turn(at) if self.game.our_turn else []
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
        move = find_move(game.board, message)
        if move is None:
            return self._protocol_error(f"illegal move {message.to_text()} ({_move_words(message)})")
        game.push(move)
        game.their_used += message.seconds
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
        return out + (self._our_turn(at) if game.our_turn else [])

    def _on_BackAccept(self, accept: BackAccept, at: float) -> list[Message]:
        game, target = self.game, self._pending_back
        if game is None or target is None:
            return self._protocol_error("BACKACC without a BACKREQ")
        self._pending_back = None
        if accept.code == BackCode.ACCEPTED:
            self._take_back(target)
            return self._our_turn(at) if game.our_turn else []
        return self._our_turn(at)  # refused: carry on as if nothing happened (our turn)

    # -- the game ----------------------------------------------------------------------

    def _begin(self, board: Board, we_white: bool, minutes: float, moves: int, opponent: str) -> None:
        self._cancel_search()
        self.game = _Game(board, we_white, float(minutes), int(moves), opponent, self._rounds(),
                          datetime.date.today())
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
        if game.minutes <= 0:
            return Limits(movetime=self.settings.movetime)
        left = game.minutes * 60 - game.our_used
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

    def _end_game(self, reason: EndReason, why: str, chat: bool = True) -> list[Message]:
        """End the game on our turn: GAMEEND (and a CHAT saying why)."""
        game = self.game
        self._cancel_search()
        board = game.board
        if reason == EndReason.I_LOSE:
            result = _result(not board.white_to_move)
        elif reason == EndReason.DRAW:
            result = "1-1"
        else:
            result = "*"
        self._record(result, why)
        self._awaiting_end = True
        stop = self._last_game()
        self._stop_after = self._stop_after or stop
        return ([Chat.safe(why)] if chat else []) + [GameEnd(reason, stop)]

    def _protocol_error(self, why: str) -> list[Message]:
        """Bad input: say why; a game in progress ends (GAMEEND: the bad message was the
        peer's turn, so the turn is ours)."""
        self.errors.append(why)
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

    def _record(self, result: str, why: str) -> None:
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
            termination=why, date=game.date, site=self.site,
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
        if self.progress.requested >= m.games:
            self.done = True
            return []
        index = self.progress.requested
        self.progress.requested += 1
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
    (and always after GAMEACC/BACKACC)."""

    def __init__(self, sock: socket.socket, pace: float, trace: Log | None):
        self.sock = sock
        self.pace = pace
        self.trace = trace
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
                self.sock.sendall(encode(message))
            except OSError:
                return False
            if self.trace:
                self.trace(f"> {message.to_text()}")
            self.last_sent = time.monotonic()
            self.last = message
            self.received_since = False
        return True


def run_connection(sock: socket.socket, session: DxpSession, *, pace: float = PACE,
                   trace: Log | None = None) -> DxpSession:
    """Run one connection to its end (the session is done or the peer went away).

    This thread reads the socket and hands each message to the session at once; a finished
    search calls back from the search thread. Both go through one lock, and each sends what
    the session returned before letting go of it, so messages leave in the session's order.
    (No hand-off between threads on the way: each would add a wake-up to every move.)
    """
    lock = threading.RLock()  # (a cancelled search calls back at once, in the same thread)
    writer = _Writer(sock, pace, trace)

    def deliver(messages: list[Message]) -> None:  # under the lock
        if not writer.send(messages):
            session.disconnect("sending failed")
        if session.done:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes this thread's recv
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
    try:
        with lock:
            deliver(session.start())
        while not session.done:
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
                        trace(f"< {text}")
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


class DxpServer:
    """A listening socket that hands out one connection at a time."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.create_server((host, port), family=family)
        self.sock.settimeout(0.25)  # so that close() from another thread is noticed
        self._closed = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()[:2]
        return host, port

    def accept(self) -> tuple[socket.socket, str] | None:
        """The next connection, or None once the server is closed."""
        while not self._closed.is_set():
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
    print(f"damka dxp: {line}", flush=True)


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
) -> int:
    """Serve (listen) or play (connect) until done; returns the exit status.

    Listening, a follower serves connection after connection until stopped; an initiator
    waits for connections until all its games are played. Connecting, one connection is
    played to its end. ``on_session`` sees each connection's session (for statistics).
    """
    progress = MatchProgress()
    rounds = itertools.count(1).__next__

    def session(peer: str) -> DxpSession:
        new = DxpSession(engine, settings, on_game=on_game, log=log, progress=progress,
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
        run_connection(sock, session(peer), trace=trace)
        log("connection closed")
        return 0

    server = server or DxpServer(host, port)
    bound_host, bound_port = server.address
    log(f"listening on {bound_host}:{bound_port}")
    try:
        while not (settings.match and progress.requested >= settings.match.games):
            accepted = server.accept()
            if accepted is None:
                break
            sock, peer = accepted
            log(f"connection from {peer}")
            try:
                run_connection(sock, session(peer), trace=trace)
            except Exception:  # whatever happened, keep serving
                log(traceback.format_exc().rstrip())
            log(f"connection from {peer} closed")
    finally:
        server.close()
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
    settings = DxpSettings(movetime=args.move_time, match=match)
    connect_to = parse_address(args.connect) if args.connect else None
    engine = Engine(VARIANT, hash_mb=args.hash, level=args.level)
    on_game = (lambda record: append_pdn(args.pdn, record)) if args.pdn else None
    log = _stdout_log if not args.quiet else _no_log
    trace = _stdout_log if args.verbose else None
    try:
        return play(engine, settings, host=args.host, port=args.port, connect_to=connect_to,
                    on_game=on_game, log=log, trace=trace)
    finally:
        sys.stdout.flush()
