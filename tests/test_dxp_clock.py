"""DXP clocks (issue 12 items 1 and 3): the GAMEREQ thinking time is whole minutes both ways,
and a follower claims the game when the peer oversteps the clock the GAMEREQ gave.

What damka writes is read back with a strict reader written here from the DamExchange
layout (fixed-width fields, the thinking time three digits read as an integer, as Scan reads
it), not with damka's own codec. The time-forfeit tests run the real session: with times
given by hand (``receive(text, at)``, ``tick(now)``) for a real 1-minute clock, and over a
socket with a GAMEREQ minute shrunk to a fraction of a second (``DxpSettings.minute``), the
one change a test makes so that a clock can run out in a test's time.
"""

from __future__ import annotations

import queue
import re
import socket
import threading
import time

import pytest

from dxp_peers import RawPeer, ServerThread
from engine.game import Game, Termination
from engine.pdn import read_game, read_games
from engine.search import Engine
from engine.variants import get_variant
from protocol.cli import main as cli_main
from protocol.dxp.codec import (
    AcceptCode,
    Chat,
    DxpMove,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Reassembler,
    encode,
)
from protocol.match.dxp_player import DxpPlayer, dxp_minutes
from protocol.dxp.records import pdn_game
from protocol.dxp.session import (
    FLAG_GRACE,
    FLAG_GRACE_PER_MOVE,
    DxpSession,
    DxpSettings,
    MatchSettings,
)
from protocol.match.engines import parse_engine
from protocol.match.openings import start_opening
from protocol.match.runner import Match, MatchConfig, MatchError
from protocol.match.timecontrol import TimeControl

NAME32 = "Tester".ljust(32)
_sessions: list[DxpSession] = []


@pytest.fixture(autouse=True)
def _close_sessions():
    """Each session made here lets go of its search thread at the end of its test."""
    yield
    while _sessions:
        session = _sessions.pop()
        session.close()
        session.join()


def _session(settings: DxpSettings) -> DxpSession:
    session = DxpSession(Engine("international", hash_mb=1), settings)
    _sessions.append(session)
    return session


def strict_gamereq(text: str) -> dict:
    """A GAMEREQ read as the DamExchange page lays it out: R, version (2), initiator name
    (32), follower colour W/Z, thinking time in minutes (3 digits, 000-999), number of moves
    (3 digits), A, or B with the colour to move and 50 squares. Anything else fails."""
    assert text[:1] == "R", text
    assert len(text) in (43, 94), f"a GAMEREQ has 43 or 94 characters, not {len(text)}"
    version, name, colour = text[1:3], text[3:35], text[35]
    minutes, moves, form = text[36:39], text[39:42], text[42]
    for field, value in (("version", version), ("thinking time", minutes), ("moves", moves)):
        assert re.fullmatch(r"[0-9]+", value), f"{field} {value!r} is not all digits"
    assert version == "01" and colour in "WZ" and form in "AB"
    assert not name.startswith(" ")
    if form == "A":
        assert len(text) == 43
    else:
        assert len(text) == 94 and text[43] in "WZ" and set(text[44:]) <= set("ewzWZ")
    return {"minutes": int(minutes), "moves": int(moves), "follower_white": colour == "W"}


# -- item 1: what damka writes ---------------------------------------------------------------


@pytest.mark.parametrize("minutes", [0, 1, 5, 90, 999])
def test_the_dxp_initiator_writes_whole_minutes(minutes):
    session = _session(DxpSettings(match=MatchSettings(games=1, minutes=minutes, moves=40)))
    (request,) = session.start()
    fields = strict_gamereq(request.to_text())
    assert fields["minutes"] == minutes and fields["moves"] == 40


def test_damka_dxp_refuses_a_fractional_time(capsys):
    status = cli_main(["dxp", "--initiator", "--time", "0.5", "--connect", "127.0.0.1:1"])
    assert status == 2 and "whole minutes" in capsys.readouterr().err


class FakeFollower:
    """Listens once, keeps the first message (the GAMEREQ) and accepts the game."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.texts: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        conn, _ = self.server.accept()
        frames = Reassembler()
        with conn:
            conn.settimeout(10)
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                for text in frames.feed(data):
                    self.texts.put(text)
                    if text.startswith("R"):
                        conn.sendall(encode(GameAccept("Fake")))


@pytest.mark.parametrize("seconds, minutes", [(60, 1), (300, 5), (5400, 90)])
def test_the_match_runner_writes_whole_minutes(seconds, minutes):
    follower = FakeFollower()
    player = DxpPlayer(parse_engine(f"dxp=127.0.0.1:{follower.port}"), get_variant("international"))
    player.start()
    try:
        player.new_game(Game("international"), True, TimeControl(time=seconds))
        fields = strict_gamereq(follower.texts.get(timeout=10))
    finally:
        player.close()
        follower.server.close()
    assert fields == {"minutes": minutes, "moves": 0, "follower_white": True}


@pytest.mark.parametrize("control", [TimeControl(time=30), TimeControl(time=90),
                                     TimeControl(time=60, increment=1),
                                     TimeControl(time=60, moves=40), TimeControl(time=60000)])
def test_the_match_runner_refuses_a_clock_dxp_cannot_say(control, tmp_path):
    with pytest.raises(ValueError, match="whole minutes"):
        dxp_minutes(control)
    config = MatchConfig(engines=[parse_engine("dxp=127.0.0.1:1"), parse_engine("damka")],
                         control=control, openings=[start_opening(get_variant("international"))],
                         variant="international")
    with pytest.raises(MatchError, match="--movetime"):
        Match(config)


def test_a_time_per_move_is_announced_as_000():
    assert dxp_minutes(TimeControl(movetime=0.1)) == 0


# -- item 1: what damka reads ----------------------------------------------------------------


@pytest.mark.parametrize("minutes", ["0.5", "1.5", " 05", "5  ", "-01", "abc"])
def test_a_gamereq_time_that_is_not_three_digits_is_refused_with_a_chat(minutes):
    session = _session(DxpSettings())
    out = session.receive("R01" + NAME32 + "Z" + minutes + "075A")
    assert [type(m) for m in out] == [Chat, GameAccept]
    assert "thinking time" in out[0].text and "whole minutes" in out[0].text
    assert out[1].code == AcceptCode.REFUSED_THIS_GAME
    assert session.game is None and not session.done
    # still willing to play: the same request with whole minutes is accepted
    assert session.receive("R01" + NAME32 + "Z001075A")[-1].code == AcceptCode.ACCEPTED


# -- a follower over a socket -----------------------------------------------------------------


def test_a_peer_sending_a_fractional_time_gets_gameacc_2_and_a_chat():
    follower = ServerThread(DxpSettings(movetime=0.02))
    peer = RawPeer(follower.port)
    try:
        peer.send_raw(("R01" + NAME32 + "W0.5000A").encode() + b"\0")
        chat, accept = peer.recv(), peer.recv()
        assert isinstance(chat, Chat) and "0.5" in chat.text and "whole minutes" in chat.text
        assert accept == GameAccept(accept.name, AcceptCode.REFUSED_THIS_GAME)
        peer.send(GameRequest("Tester", False, 1, 0))  # the connection goes on
        assert peer.recv().code == AcceptCode.ACCEPTED
        peer.send(GameEnd(EndReason.UNKNOWN, True))
        assert peer.recv() == GameEnd(EndReason.UNKNOWN, True)
    finally:
        peer.close()
        follower.close()


# -- item 3: time forfeits, with times given by hand -------------------------------------------


T0 = 1000.0  # a monotonic time for the tests below: the session takes the times it is given


def _black_follower(no_flag: bool = False) -> DxpSession:
    """A follower playing Black on a 1-minute clock from T0: the peer (White) is to move."""
    session = _session(DxpSettings(no_flag=no_flag))
    session.start(at=T0)
    out = session.receive(GameRequest("Tester", False, 1, 0).to_text(), at=T0)
    assert out == [GameAccept(session.settings.name, AcceptCode.ACCEPTED)]
    return session


def test_the_flag_falls_when_the_clock_and_the_grace_are_used_up():
    session = _black_follower()
    flag = T0 + 60 + FLAG_GRACE  # no moves made yet: the grace alone
    assert session.wake_at() == pytest.approx(flag)
    assert session.tick(T0 + 59.9) == [] and session.tick(flag - 0.01) == []
    chat, end = session.tick(flag + 0.01)
    assert "time ran out" in chat.text and "Tester" in chat.text
    assert end == GameEnd(EndReason.I_WIN, False)  # DXP's reason for a win (docs/protocols.md 2.2)
    record = session.records[-1]
    assert record.result == "0-2" and record.ending == Termination.TIME_FORFEIT
    # the peer's move that crosses our GAMEEND is ignored; its GAMEEND acknowledges ours
    assert session.receive(DxpMove(32, 28).to_text(), at=flag + 0.1) == []
    assert session.receive(GameEnd().to_text(), at=flag + 0.2) == []
    assert not session.done and session.game is None
    game = read_game(pdn_game(record))
    assert game.result == "0-2" and game.termination == Termination.TIME_FORFEIT
    assert '[Termination "time forfeit"]' in pdn_game(record)


def test_a_move_that_comes_after_the_flag_is_not_played():
    session = _black_follower()
    late = T0 + 60 + FLAG_GRACE + 1
    chat, end = session.receive(DxpMove(32, 28).to_text(), at=late)
    assert "time ran out" in chat.text and end.reason == EndReason.I_WIN
    assert session.records[-1].moves == () and session.records[-1].result == "0-2"


def test_the_peer_is_charged_what_we_measure_not_what_it_reports():
    session = _black_follower()
    session.receive(DxpMove(32, 28, (), seconds=0).to_text(), at=T0 + 40)  # says 0 s, took 40
    assert session.game.their_used == pytest.approx(40)
    session._cancel_search()  # (our reply is not needed here)
    game = session.game
    game.push(next(iter(game.board.legal_moves)))
    game.their_turn_started = T0 + 41
    flag = T0 + 41 + 20 + FLAG_GRACE + FLAG_GRACE_PER_MOVE * 1
    assert session.wake_at() == pytest.approx(flag)
    assert session.tick(flag - 0.01) == []
    assert session.tick(flag + 0.01)[-1] == GameEnd(EndReason.I_WIN, False)


def test_no_flag_never_claims_and_the_idle_timeout_counts_from_the_fall():
    session = _black_follower(no_flag=True)
    flag = T0 + 60 + FLAG_GRACE
    assert session.tick(flag + 30) == []
    assert session.wake_at() == pytest.approx(flag + session.settings.idle_timeout)
    out = session.receive(DxpMove(32, 28).to_text(), at=flag + 30)  # late, and played
    assert out == [] and len(session.game.board.move_stack) == 1


def test_a_game_without_a_clock_has_no_flag():
    session = _session(DxpSettings())
    session.start(at=T0)
    session.receive(GameRequest("Tester", False, 0, 0).to_text(), at=T0)
    assert session.game.flag_at() is None
    assert session.wake_at() == pytest.approx(T0 + session.settings.idle_timeout)


# -- item 3: over a socket, with a short minute ------------------------------------------------

MINUTE = 0.8  # seconds in a GAMEREQ minute for these tests


def test_an_initiator_that_oversteps_its_clock_loses_on_time(tmp_path):
    pdn = tmp_path / "games.pdn"
    follower = ServerThread(DxpSettings(minute=MINUTE), pdn=pdn)
    peer = RawPeer(follower.port)
    try:
        peer.send(GameRequest("Slowcoach", True, 1, 0))  # damka is White and moves first
        assert peer.recv().code == AcceptCode.ACCEPTED
        first = peer.recv()
        assert isinstance(first, DxpMove)
        peer.send(DxpMove(19, 23) if first.destination != 23 else DxpMove(18, 22))
        assert isinstance(peer.recv(), DxpMove)
        silent_from = time.monotonic()
        chat = peer.recv(timeout=30)
        end = peer.recv()
        waited = time.monotonic() - silent_from
        assert "time ran out" in chat.text and "Slowcoach" in chat.text
        assert end == GameEnd(EndReason.I_WIN, False)
        # never before the peer's clock and grace were gone (it had used some of it before)
        assert waited >= MINUTE + FLAG_GRACE - 0.3
        peer.send(GameEnd())
        time.sleep(0.3)
    finally:
        peer.close()
        follower.close()
    (game,) = list(read_games(pdn))
    assert game.result == "2-0" and game.termination == Termination.TIME_FORFEIT
    assert game.tags["White"].startswith("damka") and game.tags["Black"] == "Slowcoach"
    assert len(game.moves) == 3


def test_with_no_flag_a_late_move_is_played():
    follower = ServerThread(DxpSettings(minute=MINUTE, no_flag=True))
    peer = RawPeer(follower.port)
    try:
        peer.send(GameRequest("Slowcoach", False, 1, 0))  # damka is Black
        assert peer.recv().code == AcceptCode.ACCEPTED
        time.sleep(MINUTE + FLAG_GRACE + 0.5)
        peer.send(DxpMove(32, 28))
        assert isinstance(peer.recv(), DxpMove)  # no claim: the game goes on
        peer.send(GameEnd(EndReason.UNKNOWN, True))
        assert peer.recv() == GameEnd(EndReason.UNKNOWN, True)
    finally:
        peer.close()
        follower.close()
