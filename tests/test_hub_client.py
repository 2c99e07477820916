"""The Hub client against real engines (our ``damka hub``, dame-rs's ``dame hub``) and against
scripted fakes: programs that do not speak Hub, that die, hang, or answer in odd ways."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.board import Board
from engine.game import Game
from engine.limits import Limits
from protocol.hub.client import (
    HubClient,
    HubClientError,
    HubEngineDied,
    HubProtocolError,
    HubTimeoutError,
    budget,
    level_line,
)

DAMKA = [str(Path(sys.executable).with_name("damka")), "hub"]
DAME = Path(sys.executable).with_name("dame")
needs_dame = pytest.mark.skipif(not DAME.exists(), reason="dame-rs is not installed")


# -- our own engine -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def damka():
    with HubClient(DAMKA, options={"hash-mb": 16}) as client:
        yield client


def test_handshake_reads_id_and_params(damka):
    assert damka.id["name"] == "damka" and damka.name == "damka"
    assert "variant" in damka.params and damka.params["hash-mb"]["type"] == "int"
    assert damka.state.value == "ready"


def test_go_returns_a_legal_move_and_infos(damka):
    damka.new_game()
    move, ponder, infos = damka.go(None, ["32-28", "17-22"], Limits(depth=4))
    board = Board()
    board.push("32-28")
    board.push("17-22")
    assert board.parse_move(move) in board.legal_moves
    assert infos and infos[-1].depth == 4 and infos[-1].pv[0] == move
    assert ponder is None or ponder == infos[-1].pv[1]


def test_go_from_a_board_with_history_and_a_fen(damka):
    game = Game("international", "W:WK49,36:BK1,15")
    for text in ("49-43", "1-6", "43-49"):
        game.push(text)
    result = damka.go(game.board, limits=Limits(nodes=2000))
    assert game.board.parse_move(result.move)
    result = damka.go("W:W31-50:B1-20", limits=Limits(movetime=0.05))
    assert Board().parse_move(result.move)
    assert result.elapsed < 2.0


def test_ping_and_stop_during_an_infinite_search(damka):
    damka.start_search(None, [], Limits(infinite=True), mode="analyze")
    time.sleep(0.1)
    assert damka.ping() < 1.0
    result = damka.stop()
    assert Board().parse_move(result.move)
    assert damka.state.value == "ready"
    assert damka.stop() is None  # idle: nothing to stop


def test_8x8_rule_set_through_the_variant_parameter():
    with HubClient(DAMKA, variant="russian") as client:
        move, _, _ = client.go(None, ["c3-d4"], Limits(depth=3))
        board = Board("russian")
        board.push("c3-d4")
        assert board.parse_move(move)


def test_parameter_errors_are_clear():
    with pytest.raises(HubClientError, match="no parameter 'bogus'"):
        HubClient(DAMKA, options={"bogus": 1}).start()
    with pytest.raises(HubClientError, match="rejected"):
        HubClient(DAMKA, options={"hash-mb": 0}).start()


def test_level_lines():
    assert level_line(Limits(depth=7)) == "level depth=7"
    assert level_line(Limits(nodes=1000, depth=3)) == "level depth=3 nodes=1000"
    assert level_line(Limits(movetime=0.25)) == "level move-time=0.250"
    assert level_line(Limits(time_left=5, increment=0.2, moves_to_go=40)) == \
        "level moves=40 time=4.800 inc=0.200"
    assert level_line(Limits(time_left=60)) == "level time=60.000"
    assert level_line(Limits(infinite=True)) == "level infinite"
    with pytest.raises(ValueError):
        level_line(Limits())
    assert budget(Limits(time_left=3, movetime=1)) == 1 and budget(Limits(depth=3)) is None


# -- dame-rs, the peer engine -----------------------------------------------------------------------


@needs_dame
def test_damka_and_dame_play_a_few_moves_against_each_other():
    game = Game("international", tags={"White": "damka", "Black": "dame"})
    with HubClient(DAMKA) as white, HubClient([str(DAME), "hub"]) as black:
        assert black.id["name"] == "dame"
        for client in (white, black):
            client.new_game()
        while game.ply < 8 and not game.is_over():
            client = white if game.board.white_to_move else black
            move, _, _ = client.go(game.board, limits=Limits(movetime=0.05))
            game.push(move)  # raises if the engine's move is not legal
    assert game.ply == 8


@needs_dame
def test_dame_plays_only_international():
    with pytest.raises(HubClientError, match="only international"):
        HubClient([str(DAME), "hub"], variant="russian").start()


@needs_dame
def test_dame_without_its_hub_argument():
    with pytest.raises(HubProtocolError, match="hub"):
        HubClient([str(DAME)], start_timeout=5).start()


# -- programs that do not speak Hub ------------------------------------------------------------------


def test_a_program_that_prints_something_else_and_exits():
    start = time.monotonic()
    with pytest.raises(HubProtocolError) as info:
        HubClient([sys.executable, "-c", "print('hello')"], start_timeout=5).start()
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert "'hello'" in message and "`hub` argument" in message


def test_a_program_that_stays_silent_times_out():
    start = time.monotonic()
    client = HubClient([sys.executable, "-c", "import time; time.sleep(30)"], start_timeout=1)
    with pytest.raises(HubProtocolError, match="printed nothing"):
        client.start()
    assert 1 <= time.monotonic() - start < 4
    assert not client.alive()


def test_a_missing_program():
    with pytest.raises(HubClientError, match="cannot start"):
        HubClient(["/nonexistent/engine", "hub"]).start()


# -- scripted fake engines -----------------------------------------------------------------------------

FAKE = textwrap.dedent(
    """\
    import os, sys, time
    mode = sys.argv[1]
    log = open(os.environ["FAKE_LOG"], "a") if os.environ.get("FAKE_LOG") else None

    def out(text):
        sys.stdout.write(text + "\\n")
        sys.stdout.flush()

    deaf = False
    for line in sys.stdin:
        if log:
            log.write(line)
            log.flush()
        words = line.split()
        cmd = words[0] if words else ""
        if deaf:
            continue
        if cmd == "hub":
            out("a banner line that is not Hub")
            out('id name=fake version=1 author="A Person"')
            out('param name=variant value=normal type=enum values="normal russian"')
            out("param name=speed value=1 type=int min=0 max=9")
            out("wait")
        elif cmd == "init":
            out("init eval")
            out("ready")
        elif cmd == "go":
            if mode == "die":
                sys.stderr.write("fake: segmentation fault\\n")
                sys.exit(3)
            if mode in ("hang", "late"):
                continue
            if mode == "deaf":
                deaf = True
                continue
            out('info pv="32-28 17-22" custom=x score=0.25 depth=3 nodes=100')
            out("info nodes=200 depth=4 time=0.010 nps=0.02")
            out('a "broken line')
            out('error message="something odd"')
            out("")
            out("done move=32-28" if mode == "bare" else "done ponder=17-22 move=32-28")
        elif cmd == "stop" and mode == "late":
            out("done move=33-28")
        elif cmd == "ping":
            out("pong")
        elif cmd == "quit":
            break
    if deaf:
        time.sleep(30)  # not even the end of its input stops it
    """
)


@pytest.fixture()
def fake(tmp_path, monkeypatch):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE)
    log = tmp_path / "received.txt"
    monkeypatch.setenv("FAKE_LOG", str(log))

    def make(mode: str, **kwargs) -> HubClient:
        return HubClient([sys.executable, str(script), mode], name="fake", **kwargs)

    make.log = log
    return make


def test_odd_but_valid_output_is_understood(fake):
    with fake("normal", options={"speed": 3}, variant="russian") as client:
        assert client.id["author"] == "A Person"
        result = client.go(Board("russian"), limits=Limits(time_left=5, increment=0.2))
        assert (result.move, result.ponder) == ("32-28", "17-22")
        first, second = result.infos
        assert first.depth == 3 and first.score == 0.25 and first.pv == ("32-28", "17-22")
        assert first.args["custom"] == "x" and first.time is None
        assert second.nodes == 200 and second.pv == ()
        assert result.errors == ["something odd"] and client.errors == ["something odd"]
        assert "a banner line that is not Hub" in client.extra and 'a "broken line' in client.extra
        assert client.ping() < 2
    sent = fake.log.read_text().splitlines()
    assert sent[:4] == ["hub", "set-param name=speed value=3", "set-param name=variant value=russian",
                        "init"]
    assert "level time=4.800 inc=0.200" in sent and sent[-1] == "quit"
    assert sent[4].startswith("pos pos=W") and len(sent[4].split("=")[1]) == 33


def test_a_bare_done_means_no_move(fake):
    with fake("bare") as client:
        move, ponder, infos = client.go(None, [], Limits(depth=1))
        assert move == "32-28" and ponder is None and len(infos) == 2


def test_an_engine_that_dies_during_a_search(fake):
    client = fake("die").start()
    with pytest.raises(HubEngineDied) as info:
        client.go(None, [], Limits(depth=5))
    assert info.value.returncode == 3
    assert "code 3" in str(info.value) and "segmentation fault" in str(info.value)
    with pytest.raises(HubClientError):
        client.go(None, [], Limits(depth=5))
    client.quit()


def test_a_search_that_ends_only_on_stop(fake):
    client = fake("late", reply_timeout=2).start()
    start = time.monotonic()
    with pytest.raises(HubTimeoutError) as info:
        client.go(None, [], Limits(movetime=0.1), timeout=0.5)
    assert time.monotonic() - start < 2
    assert info.value.late_result.move == "33-28"
    assert client.state.value == "ready"  # the engine answered stop: it can go on
    assert client.ping() < 2
    client.quit()


def test_an_engine_that_hangs_is_killed(fake):
    client = fake("deaf", reply_timeout=0.3).start()
    with pytest.raises(HubTimeoutError) as info:
        client.go(None, [], Limits(depth=3), timeout=0.3)
    assert info.value.late_result is None and client.state.value == "broken"
    start = time.monotonic()
    code = client.quit(timeout=0.3)
    assert time.monotonic() - start < 3
    assert code != 0 and not client.alive()


def test_a_board_is_sent_from_its_last_irreversible_move(fake):
    board = Board("international", "W:WK49,36:BK1,15")
    for text in ("36-31", "1-6", "49-43", "6-1"):
        board.push(text)
    with fake("normal") as client:
        client.go(board, ["43-49"], Limits(depth=1))
    pos = next(line for line in fake.log.read_text().splitlines() if line.startswith("pos"))
    # from the position after White's man move 36-31: only king moves follow
    after_man_move = Board("international", "W:WK49,36:BK1,15")
    after_man_move.push("36-31")
    assert pos == f'pos pos={after_man_move.hub_position()} moves="1-6 49-43 6-1 43-49"'
