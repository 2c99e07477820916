"""Scripted Hub dialogues against the real ``damka hub`` process (docs/protocols.md 1 and 7)."""

from __future__ import annotations

import time

import pytest

from engine import Board
from protocol.hub.server import hub_score
from protocol.hub.text import parse_line

from hub_process import HubProcess

START = "W" + "b" * 20 + "e" * 10 + "w" * 20
#: seconds a loaded 2-core machine may add to any answer (a scheduler delay, not the engine's
#: own time): the tests check that the engine answers, stops and keeps to its budget, and
#: leave speed figures to bench/
LOAD = 0.5
SHOT = "WeebeeeeeeeeeeeeeebeeeeeeeeebeeeeweeeeeeeeeeeeWeeee"  # W:W33,K46:B3,18,28


@pytest.fixture
def hub():
    process = HubProcess()
    yield process
    process.close()


def _done(hub: HubProcess, timeout: float = 20.0) -> tuple[dict, list[str]]:
    line, before = hub.expect("done", timeout)
    return parse_line(line)[1], before


def _board_after(moves: str, fen: str | None = None) -> Board:
    board = Board("international", fen)
    for m in moves.split():
        board.push(m)
    return board


def test_a_bad_level_names_the_field_and_what_it_must_be(hub):
    hub.handshake()
    for line, message in [("level depth=", "depth must be a whole number, not ''"),
                          ("level depth=2.5", "depth must be a whole number, not '2.5'"),
                          ("level nodes=many", "nodes must be a whole number, not 'many'"),
                          ("level time=1 inc=x", "inc must be a number, not 'x'"),
                          ("level move-time=soon", "move-time must be a number, not 'soon'")]:
        hub.send(line)
        assert parse_line(hub.recv()) == ("error", {"message": f"bad level: {message}"}), line
    hub.send("level nodes=1e3")  # a number written so is still a whole number
    hub.send("pos start")
    hub.send("go think")
    done, before = _done(hub)
    assert not [line for line in before if line.startswith("error")]
    assert Board("international").parse_move(done["move"]) in Board("international").legal_moves


def test_nothing_before_hub_then_the_handshake(hub):
    assert hub.silent_for(0.5), "the engine wrote before 'hub'"
    lines = hub.handshake()
    assert lines[0].startswith("id ")
    ident = parse_line(lines[0])[1]
    assert ident["name"] == "damka" and ident["version"]
    params = [parse_line(line) for line in lines[1:]]
    assert all(cmd == "param" for cmd, _ in params)
    for line in lines[1:]:
        assert line.split(" ")[1].startswith("name="), "pydraughts needs name= first"
    by_name = {args["name"]: args for _, args in params}
    assert set(by_name["variant"]["values"].split()) == {
        "normal", "english", "russian", "brazilian", "spanish", "italian", "czech"}
    assert by_name["variant"]["value"] == "normal"
    for name in ("hash-mb", "level", "move-overhead", "pydraughts-8x8"):
        assert name in by_name
    hub.send("ping")
    assert hub.recv() == "pong"


def test_every_param_line_is_plain_key_value_pairs(hub):
    """pydraughts splits each argument on '=' and needs exactly one per argument."""
    hub.send("hub")
    _, lines = hub.expect("wait")
    for line in lines:
        for arg in parse_line(line)[1].items():
            name, value = arg
            assert "=" not in value and '"' not in value


def test_think_at_depth_returns_a_legal_move_with_info(hub):
    hub.handshake()
    hub.send("pos pos=" + START + ' moves="32-28 16-21"')
    hub.send("level depth=3")
    hub.send("go think")
    done, before = _done(hub)
    infos = [parse_line(line)[1] for line in before if line.startswith("info")]
    assert infos and max(int(i["depth"]) for i in infos) == 3
    for info in infos:
        for key in ("depth", "nodes"):
            int(info[key])
        float(info["score"]), float(info["time"]), float(info["nps"])
    board = _board_after("32-28 16-21")
    move = board.parse_move(done["move"])
    assert move in board.legal_moves
    assert done["move"] == move.hub(board.variant)  # full capture notation
    board.push(move)
    assert board.parse_move(done["ponder"]) in board.legal_moves


def test_done_lists_move_then_ponder(hub):
    hub.handshake()
    hub.send("pos start")
    hub.send("level depth=4")
    hub.send("go think")
    line, _ = hub.expect("done")
    assert line.split()[1].startswith("move=") and line.split()[2].startswith("ponder=")


def test_forced_win_is_shown_in_the_win_band(hub):
    hub.handshake()
    hub.send("pos pos=" + SHOT)
    hub.send("level depth=4")
    hub.send("go think")
    done, before = _done(hub)
    assert done["move"] == "33x13x18x28"
    scores = [float(parse_line(l)[1]["score"]) for l in before if l.startswith("info")]
    assert scores and scores[-1] == pytest.approx(99.97)


def test_capture_moves_in_any_order_and_short_form(hub):
    hub.handshake()
    for moves in ("32-28 17-22 28x17", "32-28 17-22 28x17x22", "32-28 17-22 28X17X22"):
        hub.send("pos start moves=" + f'"{moves}"')
        hub.send("level depth=1")
        hub.send("go think")
        done, _ = _done(hub)
        board = _board_after("32-28 17-22 28x17")
        assert board.parse_move(done["move"]) in board.legal_moves
    # captured squares listed in any order
    hub.send("pos pos=" + SHOT + ' moves="33x13x28x18"')
    hub.send("level depth=2")
    hub.send("go think")
    done, _ = _done(hub)
    board = _board_after("33x13x18x28", "W:W33,K46:B3,18,28")
    assert board.parse_move(done["move"]) in board.legal_moves


def test_bad_input_is_an_error_and_the_previous_position_stays(hub):
    hub.handshake()
    hub.send("pos start moves=\"32-28 17-22\"")
    bad = [
        "frobnicate",
        'pos pos="Wbbb',  # unterminated quote
        "pos pos=Wxyz",
        "pos pos=" + START.replace("w", "x"),
        'pos start moves="32-28 17-22 28-23"',  # illegal (a capture is compulsory)
        'pos start moves="32-28 17-22 99-98"',
        'pos start moves="32-28 17-22 28x19"',  # not a legal capture
        "level depth=abc",
        "level move-time=-1",
        "set-param name=variant value=frisian",
        "set-param name=hash-mb value=0",
        "set-param name=hash-mb value=4097",
        "set-param value=3",
        "set-param name=nonsense value=1",
        "pos pos=" + "W" + "e" * 4 + "w" + "e" * 45,  # a white man on its crowning row
    ]
    for line in bad:
        hub.send(line)
        answer = hub.recv()
        assert answer.startswith("error message="), (line, answer)
        assert parse_line(answer)[0] == "error"
    hub.send("level depth=2")
    hub.send("go think")
    done, _ = _done(hub)
    board = _board_after("32-28 17-22")
    assert board.parse_move(done["move"]) in board.legal_moves
    assert hub.proc.poll() is None


def test_ambiguous_short_capture_is_refused(hub):
    hub.handshake()
    hub.send("set-param name=variant value=english")
    # 26x10 can take 17 or 19 on the way: only the full form says which
    position = Board("english", "W:W26:B14,15,22,23").hub_position()
    hub.send(f'pos pos={position} moves="26x10"')
    answer = hub.recv()
    assert answer.startswith("error"), answer
    assert "ambiguous" in answer
    hub.send(f'pos pos={position} moves="26x10x23x15"')
    hub.send("ping")
    assert hub.recv() == "pong"


@pytest.mark.parametrize(
    "level",
    ["depth=2", "nodes=3000", "move-time=0.2", "time=3", "moves=20 time=4 inc=0.1",
     "time=2 inc=0.05", "depth=2 unknown=7 handicap=3"],
)
def test_every_level_form(hub, level):
    hub.handshake()
    hub.send("pos start")
    hub.send("level " + level)
    start = time.monotonic()
    hub.send("go think")
    done, before = _done(hub)
    elapsed = time.monotonic() - start
    assert Board().parse_move(done["move"]) in Board().legal_moves
    infos = [parse_line(l)[1] for l in before if l.startswith("info")]
    if "depth=2" in level:
        assert max(int(i["depth"]) for i in infos) == 2
    if "nodes" in level:
        assert int(infos[-1]["nodes"]) <= 3000 + 1100  # the core polls every 1024 nodes
    if "move-time=0.2" in level:
        assert elapsed < 0.2 + LOAD
    if level.startswith("time=3"):
        assert elapsed < 3.0 + LOAD


def test_go_without_level_uses_a_default_limit(hub):
    hub.handshake()
    hub.send("pos start")
    start = time.monotonic()
    hub.send("go think")
    _done(hub)
    assert time.monotonic() - start < 2.0 + LOAD  # DEFAULT_MOVETIME


def test_infinite_analysis_until_stop_with_ping_served(hub):
    hub.handshake()
    hub.send("pos start")
    hub.send("level infinite")
    hub.send("go analyze")
    hub.expect("info")
    time.sleep(0.3)
    delays = []
    for _ in range(5):
        sent = time.monotonic()
        hub.send("ping")
        while True:
            stamp, line = hub.recv_timed()
            if line == "pong":
                delays.append(stamp - sent)
                break
            assert line.startswith("info")
        time.sleep(0.05)
    # answered while the search goes on (the loop above read no done), and soon
    assert max(delays) < LOAD, delays
    sent = time.monotonic()
    hub.send("stop")
    done, _ = _done(hub, timeout=2)
    assert time.monotonic() - sent < LOAD
    assert Board().parse_move(done["move"]) in Board().legal_moves


def test_ponder_then_ponder_hit(hub):
    hub.handshake()
    hub.send('pos start moves="32-28"')
    hub.send("level move-time=0.3")
    hub.send("go ponder")
    # no done while pondering, however long past the move time
    time.sleep(1.0)
    lines = []
    while not hub.silent_for(0.05):
        lines.append(hub.recv())
    assert not any(l.startswith("done") for l in lines)
    hub.send("ponder-hit")
    start = time.monotonic()
    done, _ = _done(hub, timeout=3)
    assert time.monotonic() - start < 0.3 + LOAD
    board = _board_after("32-28")
    assert board.parse_move(done["move"]) in board.legal_moves


def test_ponder_then_stop(hub):
    hub.handshake()
    hub.send('pos start moves="32-28"')
    hub.send("level time=10")
    hub.send("go ponder")
    time.sleep(0.3)
    hub.send("stop")
    _done(hub, timeout=2)


def test_another_command_ends_the_search_first(hub):
    hub.handshake()
    hub.send("pos start")
    hub.send("level infinite")
    hub.send("go analyze")
    hub.expect("info")
    hub.send('pos start moves="32-28"')
    done, _ = _done(hub, timeout=3)  # the search ended with its done
    hub.send("level depth=1")
    hub.send("go think")
    done, _ = _done(hub)
    board = _board_after("32-28")
    assert board.parse_move(done["move"]) in board.legal_moves


def test_stop_and_ponder_hit_when_idle_are_ignored(hub):
    hub.handshake()
    hub.send("stop")
    hub.send("ponder-hit")
    hub.send("ping")
    assert hub.recv() == "pong"


def test_new_game_and_variants_by_alias(hub):
    hub.handshake()
    for value, fen_side in (("russian", "W"), ("shashki", "W"), ("checkers", "B"), ("italian", "W")):
        hub.send(f"set-param name=variant value={value}")
        hub.send("new-game")
        hub.send("pos start")
        hub.send("level depth=2")
        hub.send("go think")
        done, _ = _done(hub)
        board = Board(value)
        assert board.white_to_move == (fen_side == "W")
        assert board.parse_move(done["move"]) in board.legal_moves


def test_eight_by_eight_positions_in_the_sets_own_numbering(hub):
    hub.handshake()
    hub.send("set-param name=variant value=english")
    hub.send("pos pos=B" + "b" * 12 + "e" * 8 + "w" * 12 + ' moves="11-15 22-18"')
    hub.send("level depth=2")
    hub.send("go think")
    done, _ = _done(hub)
    board = Board("english")
    board.push("11-15")
    board.push("22-18")
    assert done["move"] == "15x22x18"  # the only legal move, full capture form


def test_end_of_input_ends_the_process_quietly():
    hub = HubProcess()
    hub.handshake()
    hub.send("pos start")
    hub.send("level infinite")
    hub.send("go analyze")
    hub.proc.stdin.close()
    assert hub.proc.wait(timeout=5) == 0
    assert hub.proc.stderr.read() == ""


def test_quit_exits_at_once():
    hub = HubProcess()
    hub.handshake()
    hub.send("quit")
    assert hub.proc.wait(timeout=5) == 0
    assert hub.proc.stderr.read() == ""


@pytest.mark.parametrize(
    "score, text",
    [(0, "0.00"), (4, "0.04"), (-130, "-1.30"), (29997, "99.97"), (-29996, "-99.96"),
     (12345, "80.00"), (-9000, "-80.00")],
)
def test_hub_score_bands(score, text):
    assert hub_score(score) == text
