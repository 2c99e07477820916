"""A DXP follower as a match player: the runner is the initiator and relays the moves.

A thin class over protocol.dxp.codec (messages and framing) and the move/position helpers of
protocol.dxp.convert. Per game: GAMEREQ with the position after the opening (form B) and the
follower's colour, GAMEACC; then each turn the opponent's move goes out as a MOVE and the
follower's MOVE comes back; at the end the move that ended the game, if the follower has not
seen it, and a GAMEEND (our reason: the follower's result seen from the other side) answered
by the follower's GAMEEND (or crossing its own, when it saw the end by the rules). A reader
thread stamps each message as it arrives and fills a queue; every wait has a timeout (no
select(), no busy waiting).

DXP says nothing of increments or times per move: the GAMEREQ gives the game clock in whole
minutes (moves field 0, a clock for the whole game), and a match whose clock DXP cannot say
(30 s, 40/60, 60+1) is refused before it starts (``dxp_minutes``), so that the follower plays
to the clock the runner keeps. With only a time per move the GAMEREQ gives 0 minutes and the
follower uses its own setting (``damka dxp --move-time``), which must fit the runner's
``--movetime``. DXP is 10x10 only.
"""

from __future__ import annotations

import queue
import socket
import threading
import time

from engine import __version__
from engine.game import Game
from engine.printable import printable
from protocol.match.players import Answer, EngineCrash, EngineResigned, EngineTimeout, Player
from protocol.match.timecontrol import MoveRequest, TimeControl
from engine.variants import Variant

from protocol.dxp.convert import find_move, move_to_dxp, position_to_dxp
from protocol.dxp.transport import send_all
from protocol.dxp.codec import (
    AcceptCode,
    Chat,
    DxpError,
    DxpMove,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Reassembler,
    decode,
    encode,
)

__all__ = ["DxpPlayer", "dxp_minutes"]

NAME = f"damka match {__version__}"
#: seconds to wait for a GAMEACC, and for the GAMEEND that answers ours
REPLY_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
#: seconds of each move's wall time not charged to a follower: the socket round trip and the
#: follower's own output, which its clock (the one it plays to: DXP never tells it ours)
#: does not see, while an in-process engine pays none of that
ROUND_TRIP = 0.02


def dxp_minutes(control: TimeControl) -> int:
    """The GAMEREQ thinking time: the game clock in whole minutes (000-999, as DXP, in
    docs/protocols.md 2.2, and Scan's integer reader have it), 0 without a clock. ValueError, saying what to use instead,
    for a clock the field cannot hold: a fraction of a minute, an increment, or a time per
    so many moves (a GAMEREQ clock is for the whole game). The runner refuses such a match
    before it starts, so that both sides play to the clock announced."""
    if control.time is None:
        return 0
    problems = []
    minutes = control.time / 60
    if not minutes.is_integer():
        problems.append(f"{control.time:g} s is not a whole number of minutes")
    elif not 1 <= minutes <= 999:
        problems.append(f"{minutes:g} minutes is outside 1-999")
    if control.increment:
        problems.append("DXP has no increment")
    if control.moves:
        problems.append("DXP has no time per so many moves (its clock is for the whole game)")
    if problems:
        raise ValueError(
            f"a DXP engine is told the clock in whole minutes for the whole game, and the clock "
            f"{control} cannot be told: {'; '.join(problems)}. Use a clock of whole minutes such "
            f"as --tc 60 or --tc 300, or a time per move (--movetime)")
    return int(minutes)


class DxpPlayer(Player):
    """One connection to a DXP follower (it plays one game at a time)."""

    def __init__(self, spec, variant: Variant):
        self.spec = spec
        self.name = spec.name
        self.variant = variant
        self.address: tuple[str, int] = spec.address
        self.sock: socket.socket | None = None
        self._inbox: "queue.Queue[tuple[float, Message | DxpError] | None]" = queue.Queue()
        self._ended = threading.Event()  # the reader saw the connection end
        self._white = True
        self._sent_ply = 0
        self._turn_since = 0.0
        self.chats: list[str] = []

    # -- transport ---------------------------------------------------------------------------

    def start(self) -> None:
        if self.variant.name != "international":
            raise EngineCrash(f"DXP plays international draughts only, not {self.variant.name}")
        host, port = self.address
        try:
            self.sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
            self.sock.settimeout(None)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            raise EngineCrash(f"cannot connect to {host}:{port}: {exc}") from None
        self._inbox = queue.Queue()
        self._ended = threading.Event()
        threading.Thread(target=self._read, args=(self._inbox, self._ended),
                         name=f"dxp-{self.name}", daemon=True).start()

    def _read(self, inbox: queue.Queue, ended: threading.Event) -> None:
        frames = Reassembler()
        sock = self.sock
        assert sock is not None
        try:
            while True:
                data = sock.recv(4096)
                if not data:
                    break
                at = time.monotonic()
                for text in frames.feed(data):
                    try:
                        inbox.put((at, decode(text)))
                    except DxpError as exc:
                        inbox.put((at, exc))
        except OSError:
            pass
        ended.set()
        inbox.put(None)

    def _send(self, message: Message) -> float:
        """Send one message; returns when it went out."""
        if self.sock is None:
            raise EngineCrash(f"{self.name} is not connected")
        try:
            sent = time.monotonic()
            send_all(self.sock, encode(message))
        except OSError as exc:  # (TimeoutError: it has not read what we sent for a while)
            raise EngineCrash(f"sending to {self.name} failed: {exc}") from None
        return sent

    def _wait(self, kinds: tuple[type, ...], timeout: float, doing: str) -> tuple[float, Message]:
        """The next message of one of ``kinds`` (CHATs are kept, others dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name} sent nothing while {doing} for {timeout:.3f} s")
            try:
                item = self._inbox.get(timeout=left)
            except queue.Empty:
                continue
            if item is None:
                self._inbox.put(None)
                raise EngineCrash(f"{self.name} closed the connection while {doing}")
            at, message = item
            if isinstance(message, DxpError):
                raise EngineCrash(f"{self.name} sent a malformed message while {doing}: {message}")
            if isinstance(message, Chat):  # (quoted in errors and comments: made printable)
                self.chats.append(printable(message.text))
            elif isinstance(message, kinds):
                return at, message

    def _drain(self) -> None:
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return
            if item is None:
                self._inbox.put(None)
                return

    # -- the game ------------------------------------------------------------------------------

    def new_game(self, game: Game, white: bool, control: TimeControl) -> None:
        if self._ended.is_set():  # the follower closed an idle connection between games
            self.abort()
            self.start()
        self._drain()
        board = game.board
        start = Game(self.variant).start
        position = None if board.position == start else position_to_dxp(board.position)
        request = GameRequest(NAME, follower_white=white, minutes=dxp_minutes(control),
                              moves=0, position=position)
        sent = self._send(request)
        try:
            at, accept = self._wait((GameAccept,), REPLY_TIMEOUT, "answering GAMEREQ")
        except TimeoutError as exc:
            raise EngineCrash(str(exc)) from None
        assert isinstance(accept, GameAccept)
        if accept.code != AcceptCode.ACCEPTED:
            said = f" ({self.chats[-1]})" if self.chats else ""
            raise EngineCrash(f"{self.name} refused the game: {accept.code.name}{said}")
        self._white = white
        self._sent_ply = game.ply
        self._turn_since = sent  # its clock runs from the request if it moves first

    def play(self, game: Game, request: MoveRequest) -> Answer:
        started = self._turn_since
        for move in game.moves[self._sent_ply:]:
            started = self._send(move_to_dxp(move))
        self._sent_ply = game.ply
        allowance = (request.allowance if request.allowance is not None else REPLY_TIMEOUT) \
            + ROUND_TRIP
        try:
            at, message = self._wait((DxpMove, GameEnd), allowance - (time.monotonic() - started),
                                     "thinking")
        except TimeoutError:
            raise EngineTimeout(f"no move within {allowance:.3f} s (a {ROUND_TRIP:g} s round "
                                "trip included)", usable=False) from None
        if isinstance(message, GameEnd):
            raise EngineResigned(f"it sent GAMEEND ({message.reason.name}) instead of a move")
        assert isinstance(message, DxpMove)
        move = find_move(game.board, message)
        self._sent_ply = game.ply + 1  # its own move is known to it
        return Answer(move if move is not None else f"DXP {message.to_text()}", started, at,
                      uncharged=min(at - started, ROUND_TRIP), reported=float(message.seconds))

    def end_game(self, game: Game) -> None:
        """The moves the follower has not seen yet (the opponent's move that ended the game),
        then GAMEEND: the follower sees an end by the rules for itself (it may send its own
        GAMEEND, which crosses ours) and its record of the game is whole."""
        outcome = game.outcome()
        if outcome is None or outcome.winner is None:
            reason = EndReason.DRAW if outcome is not None else EndReason.UNKNOWN
        else:  # our reason, as the follower's opponent
            reason = EndReason.I_LOSE if outcome.winner == self._white else EndReason.I_WIN
        for move in game.moves[self._sent_ply:]:
            self._send(move_to_dxp(move))
        self._sent_ply = game.ply
        self._send(GameEnd(reason, stop=False))
        try:
            self._wait((GameEnd,), REPLY_TIMEOUT, "answering GAMEEND")
        except TimeoutError as exc:
            raise EngineCrash(str(exc)) from None

    def abort(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self.abort()
