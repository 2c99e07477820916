"""A DXP referee in the middle: a TCP relay that checks every message it passes on.

Used by bench/soak.py to watch two DXP programs play each other (``damka dxp --initiator``
against ``damka dxp``) without taking part: the initiator connects to the tap, the tap
connects to the follower, and each message is read, stamped, checked and then forwarded
unchanged (checked first, so that the tap sees the messages in the order they crossed).

Checked with the project's own codec and rules (protocol.dxp, engine.board): every message
decodes; a MOVE comes from the side to move and is legal; a game ends (GAMEEND) only when the
rules end it; no BACKREQ; no CHAT saying ``error``. Each move's time is measured at the tap,
from the message that handed the mover the turn to its MOVE, and a move over the time per
move plus the grace counts as a time forfeit (the runner's rule; DXP with 0 minutes has no
clock of its own to flag).
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from engine.board import Board
from protocol.dxp.codec import (
    BackAccept,
    BackRequest,
    Chat,
    DxpError,
    DxpMove,
    GameAccept,
    GameEnd,
    GameRequest,
    AcceptCode,
    Reassembler,
    decode,
)
from protocol.dxp.convert import VARIANT, draw_by_rules, find_move, position_from_dxp

__all__ = ["DxpTap", "TapFault", "TapGame"]

INITIATOR, FOLLOWER = "initiator", "follower"
#: how damka's CHATs begin when they explain an end by the rules; any other CHAT is a fault
RULES_CHATS = ("no legal moves", "draw:", "move limit")


@dataclass(frozen=True)
class TapFault:
    """Something a correct pair of programs never does. ``kind``: "protocol", "illegal move",
    "time forfeit" or "connection"."""

    kind: str
    connection: int
    text: str


@dataclass
class TapGame:
    """A game seen by the tap: who had White, how many plies, how it ended."""

    connection: int
    initiator_white: bool
    plies: int = 0
    end: str = ""  #: the rules' end ("no legal moves", "draw: ...") or what went wrong
    move_times: list[float] = field(default_factory=list)


class _Referee:
    """The state of one relayed connection: the game in progress, whose turn since when."""

    def __init__(self, tap: "DxpTap", number: int):
        self.tap = tap
        self.number = number
        self.board: Board | None = None
        self.game: TapGame | None = None
        self.requested: tuple[bool, Board] | None = None  # (initiator white, start)
        self.turn_since = 0.0
        self.ending = False  # a GAMEEND went out; the next one acknowledges it
        self.games = 0  # games finished on this connection

    def fault(self, kind: str, text: str) -> None:
        self.tap._fault(TapFault(kind, self.number, text))

    def observe(self, side: str, at: float, text: str) -> None:
        try:
            message = decode(text)
        except DxpError as exc:
            self.fault("protocol", f"{side} sent a malformed message ({exc.reason}): {text[:60]!r}")
            return
        handler = getattr(self, "_on_" + type(message).__name__, None)
        if handler is None:  # pragma: no cover - every message type has a handler
            self.fault("protocol", f"{side} sent {type(message).__name__}")
            return
        handler(side, at, message)

    def _on_GameRequest(self, side: str, at: float, message: GameRequest) -> None:
        if side != INITIATOR:
            self.fault("protocol", "the follower sent GAMEREQ")
            return
        if self.board is not None:
            self.fault("protocol", "GAMEREQ during a game")
            self._finish("abandoned for a new GAMEREQ")
        start = position_from_dxp(message.position) if message.position else None
        self.requested = (not message.follower_white, Board(VARIANT, start))
        self.turn_since = at

    def _on_GameAccept(self, side: str, at: float, message: GameAccept) -> None:
        if side != FOLLOWER or self.requested is None:
            self.fault("protocol", f"GAMEACC from the {side} without a GAMEREQ")
            return
        initiator_white, board = self.requested
        self.requested = None
        if message.code != AcceptCode.ACCEPTED:
            self.fault("protocol", f"the follower refused a game: code {int(message.code)}")
            return
        self.board, self.game = board, TapGame(self.number, initiator_white)
        self.turn_since = at
        self.ending = False

    def _mover(self) -> str:
        assert self.board is not None and self.game is not None
        return INITIATOR if self.board.white_to_move == self.game.initiator_white else FOLLOWER

    def _on_DxpMove(self, side: str, at: float, message: DxpMove) -> None:
        board, game = self.board, self.game
        if board is None or game is None:
            if not self.ending:  # (a move crossing a GAMEEND is allowed)
                self.fault("protocol", f"{side} sent MOVE outside a game: {message.to_text()}")
            return
        if side != self._mover():
            self.fault("protocol", f"{side} sent MOVE out of turn: {message.to_text()}")
            return
        move = find_move(board, message)
        if move is None:
            self.fault("illegal move", f"{side} played {message.to_text()} in {board.fen()}")
            self._finish("illegal move")
            return
        spent = at - self.turn_since
        game.move_times.append(spent)
        limit = self.tap.movetime + self.tap.grace
        if spent > limit:
            self.fault("time forfeit", f"{side} took {spent:.3f} s for ply {game.plies + 1} of "
                       f"game {self.games + 1} on this connection (limit {self.tap.movetime:g} s "
                       f"+ {self.tap.grace:g} s grace)")
        board.push(move)
        game.plies += 1
        self.turn_since = at

    def _rules_end(self) -> str | None:
        assert self.board is not None
        if not self.board.legal_moves:
            return "no legal moves"
        draw = draw_by_rules(self.board)
        return f"draw: {draw}" if draw else None

    def _on_GameEnd(self, side: str, at: float, message: GameEnd) -> None:
        if self.board is None:
            if self.ending:
                self.ending = False  # the acknowledgement
            elif self.requested is None:
                self.fault("protocol", f"{side} sent GAMEEND outside a game")
            return
        end = self._rules_end()
        if end is None:
            self.fault("protocol", f"{side} ended the game ({message.reason.name}) before the "
                       f"rules did, after {self.game.plies} plies")
            end = f"ended early by the {side}"
        self._finish(end)
        self.ending = True

    def _on_Chat(self, side: str, at: float, message: Chat) -> None:
        self.tap._chat(self.number, side, message.text)
        text = message.text.lower()
        if text.startswith(RULES_CHATS):  # why the game ended by the rules
            return
        kind = "time forfeit" if "time forfeit" in text else "protocol"
        self.fault(kind, f"{side} said: {message.text}")

    def _on_BackRequest(self, side: str, at: float, message: BackRequest) -> None:
        self.fault("protocol", f"{side} asked to take back moves")

    def _on_BackAccept(self, side: str, at: float, message: BackAccept) -> None:
        self.fault("protocol", f"{side} sent BACKACC without a BACKREQ")

    def _finish(self, end: str) -> None:
        game = self.game
        self.board = self.game = None
        if game is not None:
            self.games += 1
            game.end = end
            self.tap._game(game)

    def closed(self) -> None:
        if self.board is not None:
            self.fault("connection", f"connection closed during a game "
                       f"after {self.game.plies} plies")
            self._finish("connection closed")


class DxpTap:
    """Listen on 127.0.0.1 (a free port: ``address``) and relay each connection to
    ``target``, refereeing it. ``on_game(game)`` hears every finished game and
    ``on_fault(fault)`` every fault as it is seen (both from the relay threads). ``faults``,
    ``games`` and ``chats`` hold what was seen."""

    def __init__(self, target: tuple[str, int], movetime: float, grace: float,
                 on_game: Callable[[TapGame], object] | None = None,
                 on_fault: Callable[[TapFault], object] | None = None):
        self.target = target
        self.movetime = movetime
        self.grace = grace
        self.on_game = on_game
        self.on_fault = on_fault
        self.faults: list[TapFault] = []
        self.games: list[TapGame] = []
        self.chats: list[tuple[int, str, str]] = []
        self.accepted = 0
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="dxp-tap", daemon=True).start()

    def _fault(self, fault: TapFault) -> None:
        with self._lock:
            self.faults.append(fault)
        if self.on_fault is not None:
            self.on_fault(fault)

    def _chat(self, number: int, side: str, text: str) -> None:
        with self._lock:
            self.chats.append((number, side, text))

    def _game(self, game: TapGame) -> None:
        with self._lock:
            self.games.append(game)
        if self.on_game is not None:
            self.on_game(game)

    def _accept(self) -> None:
        while not self._closed:
            try:
                initiator, _ = self._server.accept()
            except OSError:
                return
            try:
                follower = socket.create_connection(self.target, timeout=10)
                follower.settimeout(None)
            except OSError as exc:
                self._fault(TapFault("connection", -1, f"cannot reach the follower: {exc}"))
                initiator.close()
                continue
            for sock in (initiator, follower):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.accepted += 1
                number = self.accepted
                self._sockets += [initiator, follower]
            referee = _Referee(self, number)
            lock = threading.Lock()
            pumps = [threading.Thread(target=self._pump, daemon=True,
                                      args=(src, dst, side, referee, lock),
                                      name=f"dxp-tap-{number}-{side}")
                     for src, dst, side in ((initiator, follower, INITIATOR),
                                            (follower, initiator, FOLLOWER))]
            for pump in pumps:
                pump.start()
            self._threads += pumps

    def _pump(self, src: socket.socket, dst: socket.socket, side: str,
              referee: _Referee, lock: threading.Lock) -> None:
        frames = Reassembler()
        try:
            while True:
                data = src.recv(4096)
                if not data:
                    break
                at = time.monotonic()
                with lock:
                    for text in frames.feed(data):
                        referee.observe(side, at, text)
                    dst.sendall(data)
        except OSError:
            pass
        with lock:
            referee.closed()
        for sock in (dst, src):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        """Stop listening, close every relayed connection and wait for the relays."""
        self._closed = True
        self._server.close()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=5)
        for sock in sockets:
            sock.close()
