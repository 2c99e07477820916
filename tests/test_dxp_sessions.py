"""``damka dxp`` under a silent peer (issue 12 item 2): one connection that says nothing
must not keep the server from the next client, and is dropped after the idle timeout; a
connection beyond ``--max-sessions`` is told busy at once. The idle timeout never cuts a
peer off while its clock runs in a game.

Timing: the machine may be busy (other tests, other processes), so every bound here is a
wide one: "answered within 2 seconds" is the promise tested; the idle drops are checked to
come no sooner than the timeout and well within a generous ceiling.
"""

from __future__ import annotations

import subprocess
import sys
import time

from dxp_peers import CEILING, REPO, DamkaDxp, RawPeer, ServerThread
from engine.game import Game
from engine.variants import get_variant
from protocol.dxp.codec import AcceptCode, Chat, DxpMove, EndReason, GameAccept, GameEnd, GameRequest
from protocol.match.dxp_player import DxpPlayer
from protocol.dxp.session import FLAG_GRACE, DxpSettings
from protocol.match.engines import parse_engine
from protocol.match.timecontrol import TimeControl

IDLE = 1.0  # the idle timeout in these tests (seconds)


def _dropped_after_idle(silent: RawPeer) -> None:
    """The silent peer is dropped after the idle timeout, with a CHAT saying why."""
    said = silent.until_closed()
    lasted = time.monotonic() - silent.opened
    assert [type(m) for m in said] == [Chat] and "nothing received" in said[0].text
    assert IDLE - 0.05 <= lasted < CEILING


def _stop(peer: RawPeer) -> None:
    """End the game and the session (stop code 1), as a peer that talks does."""
    peer.send(GameEnd(EndReason.UNKNOWN, True))
    assert peer.recv() == GameEnd(EndReason.UNKNOWN, True)
    peer.close()


def test_a_silent_connection_does_not_block_the_next_client_and_is_dropped():
    server = ServerThread(DxpSettings(movetime=0.02, idle_timeout=IDLE), max_sessions=2)
    silent = RawPeer(server.port)
    try:
        time.sleep(0.2)  # the silent one is surely being served
        client = RawPeer(server.port)
        asked = time.monotonic()
        client.send(GameRequest("Second", True, 0, 0))
        assert client.recv(timeout=2.0).code == AcceptCode.ACCEPTED
        assert time.monotonic() - asked < 2.0
        assert isinstance(client.recv(), DxpMove)  # and it plays
        _dropped_after_idle(silent)
        _stop(client)  # while the client that talks stays, and ends its session itself
    finally:
        silent.close()
        server.close()
    assert any("nothing received for 1 s" in line for line in server.lines)


def test_the_idle_timeout_waits_while_the_peers_clock_runs():
    """A game of one (short) minute each: the peer thinks longer than the idle timeout but
    within its clock and keeps its game; then its clock, not the idle timeout, ends it."""
    minute = 3 * IDLE
    server = ServerThread(DxpSettings(movetime=0.02, idle_timeout=IDLE, minute=minute), max_sessions=1)
    peer = RawPeer(server.port)
    try:
        peer.send(GameRequest("Thinker", False, 1, 0))  # damka is Black: the peer moves
        assert peer.recv().code == AcceptCode.ACCEPTED
        time.sleep(IDLE + 0.5)  # past the idle timeout, within the clock
        peer.send(DxpMove(32, 28))
        assert isinstance(peer.recv(), DxpMove)  # still there, and it answers
        silent_from = time.monotonic()
        chat, end = peer.recv(timeout=CEILING), peer.recv()
        assert "time ran out" in chat.text and end == GameEnd(EndReason.I_WIN, False)
        assert time.monotonic() - silent_from >= minute - (IDLE + 0.5) + FLAG_GRACE - 0.3
        peer.send(GameEnd())
    finally:
        peer.close()
        server.close()


def test_the_match_runner_reconnects_after_an_idle_drop_between_games():
    server = ServerThread(DxpSettings(movetime=0.02, idle_timeout=IDLE), max_sessions=1)
    player = DxpPlayer(parse_engine(f"dxp=127.0.0.1:{server.port}"), get_variant("international"))
    player.start()
    try:
        for _ in range(2):
            game = Game("international")
            player.new_game(game, False, TimeControl(movetime=0.05))  # accepted, or it raises
            player.end_game(game)
            deadline = time.monotonic() + CEILING
            while not player._ended.is_set():  # the follower drops the quiet connection
                assert time.monotonic() < deadline, "the idle connection was not dropped"
                time.sleep(0.05)
    finally:
        player.close()
        server.close()
    assert sum("nothing received" in line for line in server.lines) == 2


def test_damka_dxp_with_one_session_tells_the_second_client_busy():
    server = DamkaDxp("--move-time", "0.05", "--hash", "8", "--max-sessions", "1",
                      "--idle-timeout", str(IDLE))
    silent = RawPeer(server.port)
    try:
        time.sleep(0.2)
        client = RawPeer(server.port)
        asked = time.monotonic()
        client.send(GameRequest("Second", True, 0, 0))
        chat, accept = client.recv(timeout=2.0), client.recv(timeout=2.0)
        assert time.monotonic() - asked < 2.0
        assert isinstance(chat, Chat) and chat.text.startswith("busy")
        assert isinstance(accept, GameAccept) and accept.code == AcceptCode.REFUSED_THIS_GAME
        assert client.until_closed() == []
        _dropped_after_idle(silent)  # and then the next client is served
        third = RawPeer(server.port)
        third.send(GameRequest("Third", False, 0, 0))
        assert third.recv().code == AcceptCode.ACCEPTED
        _stop(third)
    finally:
        silent.close()
        server.close()
    assert server.proc.returncode is not None


def test_dxp_command_line_limits():
    for args, said in ((["--max-sessions", "0"], "max-sessions"), (["--idle-timeout", "-1"], "seconds"),
                       (["--idle-timeout", "soon"], "seconds")):
        run = subprocess.run([sys.executable, "-m", "protocol", "dxp", *args], cwd=REPO,
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and said in run.stderr
