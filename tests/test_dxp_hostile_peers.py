"""DXP peers that would hold a session forever (issue 30 items 7 and 8).

A peer that only chats, or only sends garbage, is dropped after the idle timeout like a
silent one (only messages that advance the game count); a game request with a clock longer
than the follower's limit is refused; a session keeps a bounded list of its errors; and a
peer that never reads what we send is dropped after the write deadline instead of wedging
its session. Every socket is on 127.0.0.1.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

import protocol.dxp.transport as transport
from engine.search import Engine
from protocol.dxp.codec import AcceptCode, Chat, DxpMove, GameAccept, GameRequest
from protocol.dxp.listener import run_connection
from protocol.dxp.session import MAX_ERRORS, DxpSession, DxpSettings
from protocol.dxp.transport import send_all

from dxp_peers import CEILING, RawPeer, ServerThread

IDLE = 1.0


def _held_while(peer: RawPeer, send, every: float = 0.3) -> float:
    """Seconds until the server closes ``peer``'s connection while ``send()`` runs every
    ``every`` seconds (fails after CEILING)."""
    closed = threading.Event()

    def keep_sending() -> None:
        while not closed.is_set():
            try:
                send()
            except OSError:
                return
            closed.wait(every)

    sender = threading.Thread(target=keep_sending, daemon=True)
    sender.start()
    try:
        said = peer.until_closed()
    finally:
        closed.set()
        sender.join(timeout=CEILING)
    assert any(isinstance(m, Chat) and "closing the connection" in m.text for m in said)
    return time.monotonic() - peer.opened


@pytest.mark.parametrize("what", ["chat", "garbage"])
def test_a_peer_that_only_chats_or_sends_garbage_is_dropped_after_the_idle_timeout(what):
    server = ServerThread(DxpSettings(movetime=0.02, idle_timeout=IDLE), max_sessions=1)
    peer = RawPeer(server.port)
    try:
        send = ((lambda: peer.send(Chat("still here"))) if what == "chat"
                else (lambda: peer.send_raw(b"Xnonsense\0")))
        lasted = _held_while(peer, send)
        assert IDLE - 0.05 <= lasted < CEILING
        # and the slot is free for the next client
        client = RawPeer(server.port)
        client.send(GameRequest("Next", True, 0, 0))
        reply = client.recv(timeout=CEILING)
        while isinstance(reply, Chat):
            reply = client.recv(timeout=CEILING)
        assert isinstance(reply, GameAccept) and reply.code == AcceptCode.ACCEPTED
        client.close()
    finally:
        peer.close()
        server.close()


def test_a_game_request_longer_than_the_limit_is_refused():
    server = ServerThread(DxpSettings(movetime=0.02, max_minutes=120), max_sessions=1)
    peer = RawPeer(server.port)
    try:
        peer.send(GameRequest("Slow", True, 999, 0))
        said = [peer.recv(), peer.recv()]
        assert any(isinstance(m, Chat) and "time too long" in m.text for m in said)
        assert any(isinstance(m, GameAccept) and m.code == AcceptCode.REFUSED_THIS_GAME
                   for m in said)
        peer.send(GameRequest("Fine", True, 120, 0))  # at the limit: played
        reply = peer.recv()
        assert isinstance(reply, GameAccept) and reply.code == AcceptCode.ACCEPTED
    finally:
        peer.close()
        server.close()


def test_a_session_keeps_a_bounded_list_of_errors():
    session = DxpSession(Engine("international", hash_mb=1), DxpSettings(movetime=0.02))
    for i in range(3 * MAX_ERRORS):
        session.receive(f"Xbad{i}")
    assert len(session.errors) == MAX_ERRORS and session.error_count == 3 * MAX_ERRORS
    assert "Xbad" in session.errors[-1] and str(3 * MAX_ERRORS - 1) in session.errors[-1]
    session.close()
    session.join()


def test_send_all_gives_up_on_a_peer_that_never_reads():
    ours, theirs = socket.socketpair()
    try:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            send_all(ours, b"M" * 10_000_000, timeout=0.5)
        assert time.monotonic() - started < 0.5 + CEILING / 3
        send_all(ours, b"", timeout=0.1)  # nothing to send: at once
    finally:
        ours.close()
        theirs.close()


def test_a_peer_that_never_reads_ends_its_connection_instead_of_wedging_it(monkeypatch):
    """The connection's thread writes each CHAT answering a malformed message; the peer
    reads none of them. Once the buffers are full the write waits SEND_TIMEOUT and the
    connection ends (before, ``sendall`` waited for ever, and Ctrl-C hung on the join)."""
    monkeypatch.setattr(transport, "SEND_TIMEOUT", 0.5)
    ours, hog = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    session = DxpSession(Engine("international", hash_mb=1),
                         DxpSettings(movetime=0.02, idle_timeout=None), log=lambda line: None)
    thread = threading.Thread(target=run_connection, args=(ours, session),
                              kwargs=dict(pace=0.0), daemon=True)
    thread.start()
    try:
        hog.settimeout(0.2)
        garbage = b"Xnonsense-answered-with-a-chat\0" * 100
        deadline = time.monotonic() + CEILING
        while thread.is_alive() and time.monotonic() < deadline:
            try:
                hog.send(garbage)
            except OSError:  # full (it no longer reads ours either), or closed
                break
        thread.join(timeout=CEILING)
        assert not thread.is_alive(), "the connection is wedged on a peer that never reads"
        assert session.done
    finally:
        hog.close()


def test_control_characters_from_a_peer_reach_no_log_nor_pdn_tag(tmp_path):
    """A CHAT and a name holding escape sequences (which would clear or retitle a terminal;
    DXP text is ASCII): the log and the saved game get escapes, never the characters."""
    from engine.pdn import read_games
    from protocol.dxp.codec import EndReason, GameEnd

    pdn = tmp_path / "games.pdn"
    server = ServerThread(DxpSettings(movetime=0.02), max_sessions=1, pdn=pdn)
    peer = RawPeer(server.port)
    nasty = "\x1b[2J\x1b]0;owned\x07\r"
    try:
        peer.send(Chat("hello " + nasty))
        peer.send(GameRequest("Evil" + nasty, True, 0, 0))
        reply = peer.recv()
        while not isinstance(reply, GameAccept):
            reply = peer.recv()
        peer.send(GameEnd(EndReason.UNKNOWN, True))
        peer.until_closed()
    finally:
        peer.close()
        server.close()
    text = "\n".join(server.lines)
    assert "hello" in text and "Evil" in text
    assert not any(c in text for c in "\x1b\x07\r")
    assert "\\x1b" in text
    [game] = read_games(pdn)
    name = game.tags["Black"]  # we played White (follower_white)
    assert name.startswith("Evil") and not any(c in name for c in "\x1b\x07\r")
    assert "\x1b" not in pdn.read_text()


def test_a_game_abandoned_mid_search_then_a_closed_connection_frees_the_slot(tmp_path):
    """The peer asks for a new game while we think, then hangs up at once. The cancelled
    search's callback waited for the connection's lock on the search thread, while the
    connection's thread, holding the lock, waited for a hash-table clear queued behind that
    callback: the session never ended, every later peer was told busy and the unfinished
    game never reached the PDN (2 or 3 rounds of this were enough; a race, so not every
    run of the old code failed here)."""
    pdn = tmp_path / "games.pdn"
    server = ServerThread(DxpSettings(movetime=5.0), max_sessions=1, pdn=pdn)
    try:
        for attempt in range(8):
            peer = RawPeer(server.port)
            peer.send(GameRequest("Probe", False))
            assert _accepted(peer)
            peer.send(DxpMove(32, 28))  # we are Black: the follower now thinks for 5 s
            time.sleep(0.2)
            peer.send(GameRequest("Probe", False))  # a new game: the one in hand is abandoned
            assert _accepted(peer)
            peer.close()
            time.sleep(0.2)
            nxt = RawPeer(server.port)
            nxt.send(GameRequest("Next", False))
            assert _accepted(nxt), f"the follower still busy after round {attempt + 1}"
            nxt.close()
            time.sleep(0.2)
    finally:
        server.close()
    # every game was recorded: two a round, each unfinished ("*")
    assert pdn.read_text().count('[Result "*"]') == 3 * 8


def _accepted(peer: RawPeer) -> bool:
    reply = peer.recv(timeout=CEILING)
    while isinstance(reply, Chat):
        reply = peer.recv(timeout=CEILING)
    return isinstance(reply, GameAccept) and reply.code == AcceptCode.ACCEPTED
