"""The games of ``damka play``: each an engine.game.Game with its settings, as plain JSON.

Nothing here knows about HTTP: a request is a decoded JSON value, an answer a dict, and every
bad input is an ApiError carrying the HTTP status and a short code, raised *before* anything
changes, so a rejected request leaves the game exactly as it was. Squares are written in the
rule set's own notation ("32", "c3"); the board geometry sent to the page is already turned
the way the rule set draws it (Italian and Spanish mirrored), White at the bottom.

The computer's move runs in the engine's own search thread (Engine.search_async); the result
is played by a callback only if the game has not changed meanwhile (a take-back or a new move
bumps ``version``), so a slow search can never land on the wrong position.
"""

from __future__ import annotations

import datetime
import secrets
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from engine import __version__
from engine.errors import AmbiguousMoveError, DamkaError, IllegalMoveError, InvalidFenError
from engine.game import Game, Outcome, Termination
from engine.move import Move
from engine.pdn import write_game
from engine.search import Engine, Limits, SearchResult
from engine.squares import parse_square, row_col, square_name
from engine.variants import UnknownVariantError, Variant, get_variant

__all__ = ["ApiError", "Settings", "PlaySession", "SessionStore", "LEVEL_NAMES", "MOVE_TIME",
           "DEFAULT_VARIANT", "DEFAULT_OPPONENT", "DEFAULT_LEVEL", "read_new_game", "read_no_fields"]

LEVEL_NAMES = ("easy", "medium", "hard")
#: a new game without settings (a first visit): the American rules against the computer, as
#: the rules pages say; the human takes the side that moves first in every rule set
DEFAULT_VARIANT = "english"
DEFAULT_OPPONENT = "computer"
DEFAULT_LEVEL = "medium"
#: the most the computer may think per move, seconds (the levels' node caps usually stop
#: it far sooner; "hard" stays within about 2 s with the request around it)
MOVE_TIME = {"easy": 0.3, "medium": 0.8, "hard": 1.5}
HASH_MB = 8
MAX_GAMES = 32
MAX_MOVES = 2000  #: a restored game longer than this is not a game but an attack

_MESSAGES = {
    Termination.NO_PIECES: "{loser} has no pieces left",
    Termination.NO_MOVES: "{loser} has no legal move",
    Termination.REPETITION: "the same position occurred three times with the same side to move",
    Termination.KING_MOVES: "25 moves each with only kings moving and nothing captured",
    Termination.ENDGAME_16: "a lone king held out 16 moves each against three pieces",
    Termination.ENDGAME_5: "a lone king held out 5 moves each against two pieces",
    Termination.NO_PROGRESS: "40 moves each without a capture or a crowning",
}


class ApiError(Exception):
    """A request that cannot be served: HTTP ``status``, a stable ``code`` and a message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def payload(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def _colour(white: bool) -> str:
    return "white" if white else "black"


# -- reading request bodies ----------------------------------------------------------------


def _object(body: Any, allowed: set[str]) -> dict[str, Any]:
    """The body as a JSON object with only known fields (a typo is an error, not a default)."""
    if not isinstance(body, dict):
        raise ApiError(400, "bad_request", "the request body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        known = f"known: {', '.join(sorted(allowed))}" if allowed else "this request takes none"
        raise ApiError(400, "bad_request", f"unknown field(s) {', '.join(unknown)} ({known})")
    return body


#: the JSON kinds a field may be asked to be, as an error message names them
_JSON_KINDS = {str: "a string", int: "a whole number", bool: "true or false", list: "a list",
               dict: "an object"}


def _field(body: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None:
        return default
    # bool is an int in Python; JSON true is no number
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ApiError(400, "bad_request", f"field {name!r} must be {_JSON_KINDS[kind]}")
    return value


def _choice(body: dict[str, Any], name: str, choices: tuple[str, ...], default: str | None) -> str | None:
    value = _field(body, name, str, default)
    if value is not None and value not in choices:
        raise ApiError(400, "bad_request", f"field {name!r} must be one of {', '.join(choices)}")
    return value


def read_no_fields(body: Any) -> None:
    """A request that takes no fields: nothing, or an empty JSON object."""
    if body is not None:
        _object(body, set())


@dataclass(frozen=True)
class Settings:
    """Who plays what: the rule set, the opponent, the computer's level, the human's side."""

    variant: Variant
    opponent: str  #: "computer" or "friend"
    level: str  #: the computer's level (kept for a friend game too: the next game's default)
    human_white: bool  #: the side the human plays against the computer

    @property
    def against_computer(self) -> bool:
        return self.opponent == "computer"

    def is_human(self, white: bool) -> bool:
        return not self.against_computer or white == self.human_white


_NEW_GAME_FIELDS = {"variant", "forced_capture", "opponent", "level", "human", "fen", "moves", "seed"}


def read_new_game(body: Any) -> tuple[Settings, str | None, list[str], int | None]:
    """Settings, start FEN, moves to replay and seed of a new-game request; ApiError if bad."""
    body = _object(body if body is not None else {}, _NEW_GAME_FIELDS)
    name = _field(body, "variant", str, DEFAULT_VARIANT)
    try:
        variant = get_variant(name)
    except UnknownVariantError as exc:
        raise ApiError(400, "unknown_variant", str(exc)) from None
    forced = _field(body, "forced_capture", bool, True)
    try:
        variant = variant.with_forced_capture(forced and variant.forced_capture)
    except ValueError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    opponent = _choice(body, "opponent", ("computer", "friend"), DEFAULT_OPPONENT)
    level = _choice(body, "level", LEVEL_NAMES, DEFAULT_LEVEL)
    first = _colour(variant.white_starts)
    human = _choice(body, "human", ("white", "black"), first)
    fen = _field(body, "fen", str)
    moves = _field(body, "moves", list, [])
    if len(moves) > MAX_MOVES or not all(isinstance(m, str) for m in moves):
        raise ApiError(400, "bad_request", f"field 'moves' must be a list of at most {MAX_MOVES} strings")
    seed = _field(body, "seed", int)
    settings = Settings(variant, opponent or DEFAULT_OPPONENT, level or DEFAULT_LEVEL, human == "white")
    return settings, fen, moves, seed


# -- one game --------------------------------------------------------------------------------


class PlaySession:
    """One game in the browser: the Game, its settings, its engine and a version counter."""

    def __init__(self, session_id: str, settings: Settings, fen: str | None = None,
                 moves: list[str] | None = None, seed: int | None = None):
        self.id = session_id
        self.settings = settings
        variant = settings.variant
        try:
            self.game = Game(variant, fen.strip() if fen else None, tags=self._tags())
        except (InvalidFenError, ValueError) as exc:
            raise ApiError(422, "invalid_fen", str(exc)) from None
        start = self.game.board.position
        if not (start.white | start.black):
            raise ApiError(422, "invalid_fen", "the position has no pieces: set some up")
        self.seed = secrets.randbelow(2**31) if seed is None else seed
        self.version = 0
        self._pdn: list[str] = []  # each move's PDN, written in the position it was played in
        self._lock = threading.RLock()
        self._engine: Engine | None = None
        self._search: Future[SearchResult] | None = None
        self._search_version = -1
        self._engine_error: str | None = None
        for i, text in enumerate(moves or []):
            if self.game.outcome() is not None:
                raise ApiError(422, "game_over", f"move {i + 1} ({text!r}) comes after the end of the game")
            try:
                self._push(self.game.board.parse_move(text))
            except DamkaError as exc:
                raise ApiError(422, "illegal_move", f"move {i + 1}: {exc}") from None

    def _tags(self) -> dict[str, str]:
        s = self.settings
        computer = f"damka {__version__} ({s.level})"
        if s.against_computer:
            white, black = ("Human", computer) if s.human_white else (computer, "Human")
        else:
            white, black = "White player", "Black player"
        return {
            "Event": "Casual game",
            "Site": "damka play",
            "Date": datetime.date.today().strftime("%Y.%m.%d"),
            "Round": "-",
            "White": white,
            "Black": black,
        }

    # -- reading ------------------------------------------------------------------------------

    @property
    def variant(self) -> Variant:
        return self.settings.variant

    def _name(self, s: int) -> str:
        return square_name(self.variant, s)

    def _move_json(self, move: Move, text: str) -> dict[str, Any]:
        return {
            "pdn": text,
            "from": self._name(move.origin),
            "to": self._name(move.destination),
            "path": [self._name(s) for s in move.path],
            "captured": [self._name(s) for s in move.captured],
            "capture": move.is_capture,
        }

    def legal_moves(self) -> list[dict[str, Any]]:
        """The legal moves here (none once the game is over), each with its full path."""
        with self._lock:
            if self.game.outcome() is not None:
                return []
            board = self.game.board
            return [self._move_json(m, board.pdn(m)) for m in board.legal_moves]

    def _human_to_move(self) -> bool:
        return self.settings.is_human(self.game.board.white_to_move)

    def computer_to_move(self) -> bool:
        with self._lock:
            return (self.settings.against_computer and self.game.outcome() is None
                    and self.game.board.white_to_move != self.settings.human_white)

    def thinking(self) -> bool:
        with self._lock:
            return self._search is not None and not self._search.done()

    def _squares(self) -> list[dict[str, Any]]:
        """Every dark square with its place on the drawn board (row 0 at the top)."""
        size = self.variant.size
        mirrored = self.variant.turned_board
        out = []
        for s in range(self.variant.squares):
            row, col = row_col(size, s)
            out.append({"name": self._name(s), "row": row, "col": size - 1 - col if mirrored else col})
        return out

    def _pieces(self) -> dict[str, str]:
        white, black, kings, _ = self.game.board.position
        out = {}
        for s in range(self.variant.squares):
            bit = 1 << s
            if (white | black) & bit:
                letter = "w" if white & bit else "b"
                out[self._name(s)] = letter.upper() if kings & bit else letter
        return out

    def _rows(self) -> list[dict[str, Any]]:
        """The move list as PDN numbers it: one row per move number, "..." for a skipped half."""
        start_white = self.game.start.white_to_move
        offset = 0 if start_white == self.variant.white_starts else 1
        halves = [None] * offset + list(self._pdn)
        rows = []
        for i in range(0, len(halves), 2):
            first = halves[i]
            second = halves[i + 1] if i + 1 < len(halves) else None
            rows.append({"number": i // 2 + 1, "first": first or "...", "second": second})
        return rows

    def _result(self, outcome: Outcome | None) -> dict[str, Any] | None:
        if outcome is None:
            return None
        # the side that lost: in a set-up position with nothing left for the side not to
        # move, that side, not the one to move
        loser = _colour(self.game.board.white_to_move if outcome.winner is None
                        else not outcome.winner).capitalize()
        reason = outcome.termination
        because = _MESSAGES.get(reason, str(reason)).format(loser=loser) if reason else ""
        if outcome.winner is None:
            message = f"Draw: {because}."
        else:
            message = f"{_colour(outcome.winner).capitalize()} wins: {because}."
        return {
            "result": outcome.result,
            "winner": None if outcome.winner is None else _colour(outcome.winner),
            "reason": str(reason) if reason else None,
            "message": message,
        }

    def _human_moves_played(self) -> bool:
        """True when a move of the human is on the stack (there is something to take back)."""
        ply = self.game.ply
        if not self.settings.against_computer:
            return ply > 0
        first_white = self.game.start.white_to_move
        return ply >= 2 or (ply == 1 and first_white == self.settings.human_white)

    def state(self) -> dict[str, Any]:
        """Everything the page draws, in one JSON object."""
        with self._lock:
            s, game, variant = self.settings, self.game, self.variant
            outcome = game.outcome()
            legal = self.legal_moves()
            last = None
            if game.moves:
                last = self._move_json(game.moves[-1], self._pdn[-1])
            if s.against_computer:
                bottom = s.human_white
            else:
                bottom = variant.white_starts
            return {
                "id": self.id,
                "version": self.version,
                "variant": {
                    "name": variant.name,
                    "title": variant.title,
                    "size": variant.size,
                    "forced_capture": variant.forced_capture,
                    "white_starts": variant.white_starts,
                    "numbering": variant.numbering,
                },
                "opponent": s.opponent,
                "level": s.level,
                "human": _colour(s.human_white) if s.against_computer else None,
                "bottom": _colour(bottom),
                "squares": self._squares(),
                "pieces": self._pieces(),
                "turn": _colour(game.board.white_to_move),
                "fen": game.board.fen(),
                "start_fen": game.start_fen,
                "ply": game.ply,
                "moves": list(self._pdn),
                "move_rows": self._rows(),
                "legal": legal,
                "capture_forced": variant.forced_capture and any(m["capture"] for m in legal),
                "last_move": last,
                "result": self._result(outcome),
                "computer_to_move": self.computer_to_move(),
                "thinking": self.thinking(),
                "can_take_back": self._human_moves_played(),
                "engine_error": self._engine_error,
            }

    def pdn(self) -> str:
        """The game so far as PDN (result ``*`` while it goes on)."""
        with self._lock:
            return write_game(self.game)

    # -- changing -------------------------------------------------------------------------------

    def _push(self, move: Move) -> None:
        text = self.game.board.pdn(move)
        self.game.push(move)
        self._pdn.append(text)
        self.version += 1

    def _check_open(self) -> None:
        outcome = self.game.outcome()
        if outcome is not None:
            raise ApiError(409, "game_over", f"the game is over ({outcome.result}, {outcome.termination})")

    def play(self, body: Any) -> None:
        """Play the human's move: ``{"move": "32-28"}`` (any PDN/Hub text) or
        ``{"path": ["32", "28"]}`` (every square the piece stands on, exactly)."""
        body = _object(body, {"move", "path"})
        text = _field(body, "move", str)
        path = _field(body, "path", list)
        if (text is None) == (path is None):
            raise ApiError(400, "bad_request", "give exactly one of 'move' (text) or 'path' (squares)")
        with self._lock:
            self._check_open()
            board = self.game.board
            if not self.settings.is_human(board.white_to_move):
                raise ApiError(409, "not_your_turn", "it is the computer's turn")
            if text is not None:
                move = self._parse_text(text)
            else:
                move = self._parse_path(path)
            self._push(move)

    def _parse_text(self, text: str) -> Move:
        try:
            return self.game.board.parse_move(text)
        except AmbiguousMoveError as exc:
            raise ApiError(422, "ambiguous_move", str(exc)) from None
        except IllegalMoveError as exc:
            raise ApiError(422, "illegal_move", str(exc)) from None
        except DamkaError as exc:
            raise ApiError(422, "invalid_move", str(exc)) from None

    def _parse_path(self, path: list[Any]) -> Move:
        if not 2 <= len(path) <= 64 or not all(isinstance(p, str) for p in path):
            raise ApiError(400, "bad_request", "'path' must list 2 to 64 square names")
        try:
            squares = tuple(parse_square(self.variant, p) for p in path)
        except ValueError as exc:
            raise ApiError(422, "invalid_move", str(exc)) from None
        for move in self.game.board.legal_moves:
            if move.path == squares:
                return move
        raise ApiError(422, "illegal_move", f"illegal move {'-'.join(path)!r}: not legal in this position")

    def take_back(self) -> int:
        """Take back the last move, and against the computer its reply too (the human is to
        move again); a search under way is stopped and its move dropped. Returns the plies."""
        with self._lock:
            if not self._human_moves_played():
                raise ApiError(409, "nothing_to_take_back", "there is no move of yours to take back")
            if self._engine is not None and self.thinking():
                self._engine.stop()
            popped = 0
            while self.game.ply and (popped == 0 or not self._human_to_move()):
                self.game.pop()
                self._pdn.pop()
                popped += 1
            self.version += 1
            self._engine_error = None
            return popped

    def request_engine_move(self) -> tuple["Future[SearchResult]", bool]:
        """Start the computer's move (or join the search already running for this position).

        Returns the search's Future and whether it is for the current position; a stale one
        (the game changed since) must be awaited and the request made again.
        """
        with self._lock:
            self._check_open()
            if not self.settings.against_computer:
                raise ApiError(409, "no_computer", "this is a game between two players on one screen")
            if not self.computer_to_move():
                raise ApiError(409, "not_computer_turn", "it is your turn, not the computer's")
            if self._search is not None and (not self._search.done() or self._engine_busy()):
                return self._search, self._search_version == self.version
            engine = self._engine_for()
            limits = Limits(movetime=MOVE_TIME[self.settings.level])
            future = engine.search_async(self.game.board, limits)
            self._search, self._search_version = future, self.version
            version = self.version
        # a weak reference: the future keeps its callbacks, and a callback holding the session
        # would keep a dropped game's engine (hash table, search thread) until a full garbage
        # collection
        session = weakref.ref(self)
        future.add_done_callback(lambda f: _commit_if_kept(session, f, version))
        return future, True

    def _engine_busy(self) -> bool:
        return self._engine is not None and self._engine.searching

    def _engine_for(self) -> Engine:
        if self._engine is None:
            from engine.egtb.paths import has_tables

            tables = None
            if has_tables(None, self.variant.name):  # the user has built databases
                from engine.egtb import shared_tablebase

                tables = shared_tablebase(self.variant)
            self._engine = Engine(self.variant, hash_mb=HASH_MB, level=self.settings.level,
                                  seed=self.seed, egtb=tables)
        return self._engine

    def _commit(self, future: "Future[SearchResult]", version: int) -> None:
        """Play the search's move if the game is still where the search started."""
        with self._lock:
            if version != self.version or self.game.outcome() is not None:
                return
            error = future.exception()
            if error is not None:
                self._engine_error = f"the engine failed: {error}"
                return
            move = future.result().best_move
            if move is not None:
                self._push(move)

    def close(self) -> None:
        """Stop a search that runs for this game and let its engine go (the game is being
        dropped)."""
        with self._lock:
            self.version += 1
            if self._engine is not None and self.thinking():
                self._engine.stop()
            self._engine = self._search = None


def _commit_if_kept(session: "weakref.ref[PlaySession]", future: "Future[SearchResult]",
                    version: int) -> None:
    """A search's done-callback: its move is played if the game is still kept."""
    kept = session()
    if kept is not None:
        kept._commit(future, version)


class SessionStore:
    """The games being played, newest used last; the oldest is dropped past ``limit``."""

    def __init__(self, limit: int = MAX_GAMES):
        self.limit = limit
        self._games: OrderedDict[str, PlaySession] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, body: Any) -> PlaySession:
        settings, fen, moves, seed = read_new_game(body)
        session = PlaySession(secrets.token_urlsafe(12), settings, fen, moves, seed)
        with self._lock:
            self._games[session.id] = session
            while len(self._games) > self.limit:
                _, old = self._games.popitem(last=False)
                old.close()
        return session

    def get(self, session_id: str) -> PlaySession:
        with self._lock:
            session = self._games.get(session_id)
            if session is None:
                raise ApiError(404, "unknown_game", f"no game {session_id!r} (the server may have restarted)")
            self._games.move_to_end(session_id)
            return session

    def __len__(self) -> int:
        return len(self._games)
