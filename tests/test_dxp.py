"""``damka dxp``: the session as a scripted dialogue, our initiator against our follower over
loopback, pydraughts' DXPEngine against ``damka dxp`` as a real process, and bad input.

Every socket here is bound to 127.0.0.1 on a port the system picks.
"""

from __future__ import annotations

import datetime
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dxp_peers import REPO, DamkaDxp, RawPeer
from engine import Board
from engine.search import Engine
from protocol.dxp.convert import draw_by_rules, move_to_dxp
from protocol.dxp.listener import DxpServer, connect, play, run_connection
from protocol.dxp.records import GameRecord, pdn_game
from protocol.dxp.session import NAME, DxpSession, DxpSettings, MatchSettings, SearchDone, _Game
from protocol.dxp.codec import (
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    DxpMove,
    DxpPosition,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
)

START = "z" * 20 + "e" * 10 + "w" * 20
FAST = 0.02  # seconds per move in the in-process games


@pytest.fixture(scope="module")
def engines():
    return Engine("international", hash_mb=8), Engine("international", hash_mb=8)


# -- the session as a scripted dialogue -----------------------------------------------------


_scripts: list = []


@pytest.fixture(autouse=True)
def _close_scripts():
    """Each scripted session lets go of its engine before the next test uses it."""
    yield
    while _scripts:
        session = _scripts.pop().session
        session.close()
        session.join()


class Script:
    """A follower (or initiator) session driven by hand: search results are waited for."""

    def __init__(self, engine: Engine, settings: DxpSettings = DxpSettings(movetime=FAST)):
        self.events: "queue.Queue[SearchDone]" = queue.Queue()
        self.session = DxpSession(engine, settings, post=self.events.put)
        _scripts.append(self)

    def send(self, message) -> list:
        text = message if isinstance(message, str) else message.to_text()
        return self.session.receive(text)

    def answer(self, timeout: float = 10.0) -> list:
        """The messages sent when the running search finishes."""
        return self.session.search_done(self.events.get(timeout=timeout))

    def a_legal_move(self) -> DxpMove:
        """A legal move for the tester (the side to move on the session's board)."""
        return move_to_dxp(next(iter(self.session.game.board.legal_moves)))


def test_follower_accepts_form_a_and_moves_first_as_white(engines):
    s = Script(engines[0])
    out = s.send(GameRequest("Tester", True, 0, 0))
    assert out == [GameAccept(s.session.settings.name, AcceptCode.ACCEPTED)]
    (move,) = s.answer()
    assert isinstance(move, DxpMove) and 31 <= move.origin <= 35
    s.send(GameEnd(EndReason.UNKNOWN, False))
    assert s.session.records[-1].result == "*"


def test_follower_accepts_form_b_and_waits_as_black(engines):
    s = Script(engines[0])
    out = s.send(GameRequest("Tester", False, 0, 0, DxpPosition(True, START)))
    assert out == [GameAccept(s.session.settings.name, AcceptCode.ACCEPTED)]
    assert s.events.empty() and s.session._search is None
    s.send(DxpMove(32, 28))
    (move,) = s.answer()
    assert isinstance(move, DxpMove) and 16 <= move.origin <= 20


def test_unknown_version_and_unplayable_positions_are_refused(engines):
    s = Script(engines[0])
    name = s.session.settings.name
    assert s.send("R02" + "Tester".ljust(32) + "W005075A") == [GameAccept(name, AcceptCode.VERSION_NOT_SUPPORTED)]
    crowned_man = DxpPosition(True, "w" + "e" * 49)  # a white man on its crowning row
    no_black = DxpPosition(True, "e" * 45 + "w" * 5)
    blocked = DxpPosition(False, "e" * 40 + "w" * 10)  # Black to move without pieces
    for position in (crowned_man, no_black, blocked):
        out = s.send(GameRequest("Tester", True, 0, 0, position))
        assert out[-1] == GameAccept(name, AcceptCode.REFUSED_THIS_GAME)
        assert isinstance(out[0], Chat)
    # still willing to play
    assert s.send(GameRequest("Tester", False))[-1].code == AcceptCode.ACCEPTED


def test_time_zero_plays_at_the_default_move_time(engines):
    s = Script(engines[0], DxpSettings(movetime=0.05))
    s.send(GameRequest("Tester", True, 0, 0))
    assert s.session._limits().movetime == 0.05
    s.answer()
    s2 = Script(engines[1])
    s2.send(GameRequest("Tester", False, 2, 40))
    limits = s2.session._limits()
    assert limits.time_left == pytest.approx(120) and limits.moves_to_go == 40


def test_illegal_move_ends_the_game_with_a_chat(engines):
    s = Script(engines[0])
    s.send(GameRequest("Tester", False))
    out = s.send(DxpMove(32, 26))  # not a diagonal step
    assert isinstance(out[0], Chat) and "illegal move" in out[0].text
    assert out[1] == GameEnd(EndReason.UNKNOWN, False)
    assert s.session.records[-1].result == "*"
    assert s.send(GameEnd()) == []  # the acknowledgement: nothing more to say
    assert s.send(GameRequest("Tester", False))[-1].code == AcceptCode.ACCEPTED


def test_unexpected_messages(engines):
    s = Script(engines[0])
    assert isinstance(s.send(DxpMove(32, 28))[0], Chat)  # no game
    assert isinstance(s.send("Zzz")[0], Chat)  # unknown type
    assert s.send(BackRequest(1, True)) == [BackAccept(BackCode.REFUSED)]  # no game
    s.send(GameRequest("Tester", True))
    out = s.send(DxpMove(19, 23))  # while it is our turn
    assert isinstance(out[0], Chat) and out[1] == GameEnd()
    s.send(GameEnd())
    s.send(GameRequest("Tester", False))
    out = s.send(GameAccept("Tester"))  # a follower never gets GAMEACC
    assert "GAMEACC" in out[0].text and out[1] == GameEnd()


def test_every_gameend_is_acknowledged_and_stop_code_1_closes(engines):
    s = Script(engines[0])
    s.send(GameRequest("Tester", False))
    s.send(DxpMove(32, 28))
    s.answer()
    assert s.send(GameEnd(EndReason.DRAW, False)) == [GameEnd(EndReason.UNKNOWN, False)]
    assert s.session.records[-1].result == "1-1" and not s.session.done
    s.send(GameRequest("Tester", True))
    assert s.send(GameEnd(EndReason.I_LOSE, True)) == [GameEnd(EndReason.UNKNOWN, True)]
    assert s.session.records[-1].result == "2-0"  # the opponent (Black) gave up
    assert s.session.done


def test_backreq_goes_back_and_the_side_to_move_moves(engines):
    s = Script(engines[0])
    s.send(GameRequest("Tester", False))
    for _ in range(3):
        s.send(s.a_legal_move())
        s.answer()
    assert len(s.session.game.board.move_stack) == 6
    assert s.send(BackRequest(9, True)) == [BackAccept(BackCode.REFUSED)]  # beyond the game
    assert s.send(BackRequest(2, True)) == [BackAccept(BackCode.ACCEPTED)]
    assert len(s.session.game.board.move_stack) == 2  # White (the tester) to move again
    out = s.send(BackRequest(1, False))  # Black (we) to move: we move after K0
    assert out == [BackAccept(BackCode.ACCEPTED)]
    (move,) = s.answer()
    assert isinstance(move, DxpMove) and len(s.session.game.board.move_stack) == 2


def test_backreq_numbering_when_black_starts():
    game = _Game(Board("international", "B:W31-50:B1-20"), True, 0, 0, "x", 1, None)
    assert game.target_ply(BackRequest(1, False)) == 0
    assert game.target_ply(BackRequest(2, True)) == 1
    assert game.back_request(0) == BackRequest(1, False)
    assert game.back_request(3) == BackRequest(3, True)
    white = _Game(Board("international"), True, 0, 0, "x", 1, None)
    for ply in range(10):
        assert white.target_ply(white.back_request(ply)) == ply
        assert game.target_ply(game.back_request(ply)) == ply


def test_move_limit_ends_the_game_on_our_turn(engines):
    s = Script(engines[0])
    s.send(GameRequest("Tester", False, 0, 1))
    s.send(DxpMove(32, 28))
    assert isinstance(s.answer()[0], DxpMove)  # one move each: the limit is reached
    out = s.send(s.a_legal_move())  # White should have ended the game; we do on our turn
    assert "move limit" in out[0].text and out[1] == GameEnd(EndReason.UNKNOWN, False)
    s2 = Script(engines[1])
    s2.send(GameRequest("Tester", True, 0, 1))
    s2.answer()
    out = s2.send(DxpMove(19, 23))
    assert isinstance(out[0], Chat) and "move limit" in out[0].text
    assert out[1] == GameEnd(EndReason.UNKNOWN, False)


def test_game_over_by_the_rules_on_our_turn(engines):
    s = Script(engines[0])
    # White (the tester) captures the last black piece: Black (we) has no moves
    s.send(GameRequest("Tester", False, 0, 0, DxpPosition(True, _squares({28: "w", 23: "z"}))))
    out = s.send(DxpMove(28, 19, (23,)))
    assert out[-1] == GameEnd(EndReason.I_LOSE, False)
    assert s.session.records[-1].result == "2-0"


def test_draw_rules():
    board = Board("international", "W:WK47,40:BK4,11")
    assert draw_by_rules(board) is None
    for move in ("47-42", "4-10", "42-47", "10-4") * 2:
        assert draw_by_rules(board) is None
        board.push(move)
    assert draw_by_rules(board) == "threefold repetition"
    board = Board("international", "W:WK47:BK4,K3")  # a lone king against two kings: 5 moves each
    for move in ("47-24", "4-9", "24-33", "9-4", "33-38", "3-14", "38-15", "4-27", "15-29"):
        board.push(move)
        assert draw_by_rules(board) is None
    board.push("14-19")
    assert draw_by_rules(board) == "5-move endgame rule"
    board = Board("international", "W:WK47,K48,36:BK4,K3,15")  # 25 moves each, only kings
    walk = ("48-30 3-20 30-43 4-9 43-34 20-25 34-40 25-48 47-24 9-14 40-49 14-28 49-21 28-5 "
            "24-35 5-23 21-26 23-10 26-17 48-26 17-33 26-12 33-38 12-3 35-2 10-28 2-16 28-6 "
            "38-24 6-17 16-32 17-6 32-37 3-20 24-47 6-22 37-42 22-50 42-48 50-11 48-26 11-6 "
            "26-21 6-11 21-43 20-3 47-24 3-12 43-49 12-1").split()
    for move in walk[:-1]:
        board.push(move)
        assert draw_by_rules(board) is None
    board.push(walk[-1])
    assert draw_by_rules(board) == "25-move king rule"


def test_pdn_game_writes_tags_fen_and_moves():
    fen = "B:W38:B12"
    board = Board("international", fen)
    moves = tuple(board.push(text) for text in ("12-17", "38-33", "17-22"))
    record = GameRecord(3, "damka", 'Scan "3.1"', "*", Board("international", fen).position,
                        moves, "move limit", datetime.date(2024, 5, 1), "127.0.0.1:1")
    text = pdn_game(record)
    assert '[Black "Scan \\"3.1\\""]' in text and '[Date "2024.05.01"]' in text
    assert '[GameType "20"]' in text and '[FEN "B:W38:B12"]' in text and '[Round "3"]' in text
    assert text.endswith("\n1... 12-17 2. 38-33 17-22 {move limit} *\n\n")
    start = GameRecord(1, "a", "b", "*", Board("international").position, (), "", datetime.date(2024, 5, 1))
    assert "FEN" not in pdn_game(start)


def _squares(pieces: dict) -> str:
    return "".join(pieces.get(n, "e") for n in range(1, 51))


# -- initiator against follower over loopback ------------------------------------------------


class Follower:
    """``play`` as a follower in a thread, on 127.0.0.1 and a free port."""

    def __init__(self, engine: Engine, pdn: Path | None = None):
        self.server = DxpServer("127.0.0.1", 0)
        self.port = self.server.address[1]
        self.records: list[GameRecord] = []
        self.lines: list[str] = []

        def on_game(record: GameRecord) -> None:
            self.records.append(record)
            if pdn is not None:
                with open(pdn, "a") as f:
                    f.write(pdn_game(record))

        self.thread = threading.Thread(
            target=play, args=(engine, DxpSettings(movetime=FAST)),
            kwargs=dict(server=self.server, on_game=on_game, log=self.lines.append), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.close()
        self.thread.join(timeout=10)


def _initiate(engine: Engine, port: int, match: MatchSettings, name: str = NAME) -> DxpSession:
    session = DxpSession(engine, DxpSettings(name=name, movetime=FAST, match=match))
    return run_connection(connect("127.0.0.1", port), session)


def test_initiator_against_follower_several_games_with_takebacks(engines, tmp_path):
    pdn = tmp_path / "games.pdn"
    follower = Follower(engines[0], pdn)
    try:
        match = MatchSettings(games=3, moves=6, takebacks=((4, 1), (6, 2), (5, 3)))
        ours = _initiate(engines[1], follower.port, match, name="initiator")
        assert ours.errors == [] and ours.done
        assert [r.result for r in ours.records] == ["*"] * 3
        assert [r.white for r in ours.records] == ["initiator", NAME, "initiator"]
        assert [r.black for r in ours.records] == [NAME, "initiator", NAME]
        time.sleep(0.2)
        assert [r.moves for r in follower.records] == [r.moves for r in ours.records]
        assert all(len(r.moves) == 12 for r in ours.records)  # 6 moves each, take-backs replayed
        assert any("took back" in line for line in follower.lines)

        # the follower serves the next connection: a start position that ends by the rules
        fen = "W:W28:B23"
        second = _initiate(engines[1], follower.port, MatchSettings(games=2, fen=fen))
        assert second.errors == []
        assert [r.result for r in second.records] == ["2-0", "2-0"]
        assert [len(r.moves) for r in second.records] == [1, 1]
        time.sleep(0.2)
        assert [r.result for r in follower.records[3:]] == ["2-0", "2-0"]
    finally:
        follower.close()
    text = pdn.read_text()
    assert text.count("[Event ") == 5 and text.count('[FEN "W:W28:B23"]') == 2
    assert "{no legal moves} 2-0" in text


def test_the_initiator_listens_and_the_follower_connects(engines):
    """The other pair of TCP roles: our initiator waits for a follower that dials in."""
    server = DxpServer("127.0.0.1", 0)
    initiator_games: list[GameRecord] = []
    settings = DxpSettings(name="initiator", movetime=FAST, match=MatchSettings(games=2, moves=3))
    thread = threading.Thread(target=play, args=(engines[1], settings), daemon=True,
                              kwargs=dict(server=server, on_game=initiator_games.append, log=lambda line: None))
    thread.start()
    follower_games: list[GameRecord] = []
    status = play(engines[0], DxpSettings(movetime=FAST), connect_to=("127.0.0.1", server.address[1]),
                  on_game=follower_games.append, log=lambda line: None)
    thread.join(timeout=10)
    assert status == 0 and not thread.is_alive()  # the initiator stops after its games
    assert [len(g.moves) for g in follower_games] == [6, 6]
    assert [g.moves for g in follower_games] == [g.moves for g in initiator_games]
    assert [g.white for g in follower_games] == ["initiator", NAME]


# -- a real process: pydraughts' DXPEngine and bad input --------------------------------------


@pytest.fixture(scope="module")
def follower_process(tmp_path_factory):
    pdn = tmp_path_factory.mktemp("dxp") / "follower.pdn"
    # (on two search threads: the DXP games below are the end-to-end test of --threads)
    proc = DamkaDxp("--move-time", "0.05", "--hash", "16", "--threads", "2", "--pdn", str(pdn))
    proc.pdn = pdn
    yield proc
    proc.close()


def test_bad_input_and_dropped_connections_do_not_stop_the_follower(follower_process):
    port = follower_process.port
    peer = RawPeer(port)
    peer.send_raw(b"Xgarbage\0")
    assert "error" in peer.recv().text
    peer.send_raw(b"C" + b"x" * 400 + b"\0")  # over-long
    assert "longer than 127" in peer.recv().text
    peer.send_raw(b"R02" + b"T".ljust(32) + b"W005075A\0")
    assert peer.recv().code == AcceptCode.VERSION_NOT_SUPPORTED
    # an illegal move ends the game; the connection stays for the next one
    peer.send(GameRequest("T", False))
    assert peer.recv().code == AcceptCode.ACCEPTED
    peer.send_raw(b"M0000")  # a move that arrives in pieces
    peer.send_raw(b"3126")
    peer.send_raw(b"00\0")
    assert isinstance(peer.recv(), DxpMove)
    peer.send(DxpMove(27, 21))  # no piece on 27
    chat, end = peer.recv(), peer.recv()
    assert "illegal move" in chat.text and end == GameEnd(EndReason.UNKNOWN, False)
    peer.send(GameEnd())
    # a malformed message during a game ends it too
    peer.send(GameRequest("T", False))
    assert peer.recv().code == AcceptCode.ACCEPTED
    peer.send_raw(b"M00\0")
    chat, end = peer.recv(), peer.recv()
    assert "malformed" in chat.text and isinstance(end, GameEnd)
    peer.send(GameEnd())
    # the peer drops the connection while the follower thinks
    peer.send(GameRequest("T", True))
    assert peer.recv().code == AcceptCode.ACCEPTED
    peer.close()
    # and a peer that vanishes in the middle of a message
    peer = RawPeer(port)
    peer.send_raw(b"R01T")
    peer.close()
    time.sleep(0.3)
    assert follower_process.alive()
    # the next connection is served
    peer = RawPeer(port)
    peer.send(GameRequest("T", True, 0, 0, DxpPosition(True, START)))
    assert peer.recv().code == AcceptCode.ACCEPTED
    accepted_at = time.monotonic()
    assert not peer.pending  # GAMEACC and the first MOVE never come in one read
    assert isinstance(peer.recv(), DxpMove)
    assert time.monotonic() - accepted_at >= 0.08  # sent at least 100 ms after GAMEACC
    peer.send(GameEnd(EndReason.UNKNOWN, True))
    assert peer.recv() == GameEnd(EndReason.UNKNOWN, True)
    peer.close()
    assert follower_process.alive()
    time.sleep(0.3)
    text = follower_process.pdn.read_text()
    assert text.count("[Event ") >= 4 and "connection lost" in text


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_pydraughts_plays_a_complete_game_against_damka_dxp(follower_process):
    from draughts import Board as PyBoard
    from draughts import WHITE
    from draughts.engine import DXPEngine

    before = follower_process.pdn.read_text() if follower_process.pdn.exists() else ""
    client = DXPEngine(None, {"engine-opened": True, "ip": "127.0.0.1", "port": follower_process.port})
    board = PyBoard(variant="standard")
    rng = random.Random(5)
    try:
        while not board.is_over() and len(board.move_stack) < 300:
            legal = [m.board_move for m in board.legal_moves()]
            if board.turn == WHITE:  # damka, the follower, plays White
                move = _play_or_fail(client, board, timeout=30)
                assert move.board_move in legal, f"illegal move {move.pdn_move}"
                board.push(move)
            else:
                board.push(rng.choice(board.legal_moves()))
    finally:
        client.quit()  # sends E01; pydraughts then sleeps 7 s closing its socket
    assert board.is_over() and len(board.move_stack) > 20
    assert board.winner() == WHITE
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        added = follower_process.pdn.read_text()[len(before):]
        if "[Result" in added:
            break
        time.sleep(0.1)
    assert '[Result "2-0"]' in added and '[White "damka' in added and "DXP Client" in added
    assert follower_process.alive()


def _play_or_fail(client, board, timeout: float):
    """client.play with a time limit: pydraughts busy-waits for ever if no MOVE comes."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(client.play(board)), daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        client.receiver.listening = False  # lets pydraughts' wait loop end
        worker.join(5)
        pytest.fail(f"no move from damka within {timeout} s at ply {len(board.move_stack)}")
    return box[0].move


def test_cli_refuses_bad_arguments():
    run = subprocess.run([sys.executable, "-m", "protocol", "dxp", "--initiator", "--fen", "W:W1:B20",
                          "--connect", "127.0.0.1:1"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "error" in run.stderr
    run = subprocess.run([sys.executable, "-m", "protocol", "dxp", "--connect", "nowhere"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "HOST:PORT" in run.stderr
