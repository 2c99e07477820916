"""Regression tests for faults that the property tests (tests/test_properties_*.py) found in
the parsers of outside input. Each test is the failing example, kept as a plain test."""

from __future__ import annotations

import time

import pytest

from engine.errors import InvalidFenError
from engine.fen import parse_fen
from engine.variants import get_variant


@pytest.mark.parametrize("fen", ["W:W1-100000000", "W:W31-99999999999999:B1-20", "B:WK1-K100000000"])
def test_fen_range_past_the_board_is_refused_at_once(fen):
    """A range was spelled out square by square before any was checked: ``1-100000000`` took
    45 s and gigabytes; a larger one never ended."""
    start = time.monotonic()
    with pytest.raises(InvalidFenError, match="bad range"):
        parse_fen(get_variant("international"), fen)
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize("fen", ["W:W1-1_0", "W:W\u0661-5", "W:W1-\u0665"])
def test_fen_range_takes_ascii_digits_only(fen):
    """``int`` reads ``1_0`` as 10 and Arabic-Indic digits as numbers: not PDN."""
    with pytest.raises(InvalidFenError, match="bad range"):
        parse_fen(get_variant("international"), fen)


def test_fen_ranges_still_read():
    v = get_variant("international")
    assert parse_fen(v, "W:W31-50:B1-20") == parse_fen(v, v.start_fen)
    assert parse_fen(v, "W:WK46-K50:B1") == parse_fen(v, "W:WK46,K47,K48,K49,K50:B1")


@pytest.mark.parametrize("value", ["a\nquit", "x\r", "\r\nstop"])
def test_hub_writer_refuses_a_line_break_in_a_value(value):
    """``format_line`` wrote ``set-param name=x value="a`` and then ``quit"`` as a second
    command: a line break ends a Hub line, and Hub has no escape."""
    from protocol.hub.text import format_line

    with pytest.raises(ValueError, match="line break"):
        format_line("set-param", name="x", value=value)


@pytest.mark.parametrize("args", [("a b",), ("",), ("x=y",)])
def test_hub_writer_refuses_a_name_that_is_not_a_word(args):
    from protocol.hub.text import format_line

    with pytest.raises(ValueError, match="one word"):
        format_line("go", *args)


def test_hub_error_message_stays_on_one_line():
    import io

    from protocol.hub.server import HubServer
    from protocol.hub.text import parse_line

    out = io.StringIO()
    HubServer(out).error('first line\nsecond "line"\r\nthird')
    (line,) = out.getvalue().splitlines()
    assert parse_line(line) == ("error", {"message": "first line second 'line' third"})


@pytest.mark.parametrize("line", [
    'set-param name=hash-mb value=inf', 'set-param name=move-overhead value=1e400',
    'set-param name=line-pacing value=-inf', 'level nodes=inf', 'level moves=1e400 time=5',
])
def test_hub_infinite_numbers_are_bad_input_not_an_internal_error(line):
    """``int(float("inf"))`` raises OverflowError, which the Hub engine reported as
    ``error message="internal error: OverflowError ..."``."""
    import io

    from protocol.hub.server import HubServer

    out = io.StringIO()
    server = HubServer(out)
    before = (repr(server.params), repr(server.limits))
    server.handle(line)
    answer = out.getvalue()
    assert answer.startswith("error ") and "internal error" not in answer, answer
    assert (repr(server.params), repr(server.limits)) == before


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"a":' * 3000, b"[" * 2029])
def test_play_api_deeply_nested_json_is_a_400_not_a_500(body):
    """``json.loads`` raises RecursionError on deep nesting: the API answered 500."""
    pytest.importorskip("starlette", reason="the 'play' extra is not installed")
    from starlette.testclient import TestClient

    from protocol.play.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json", r.text


@pytest.mark.parametrize("body", [b'{"\\uda00":null}', b'{"variant": "\\ud800"}', b'["\\udfff"]'])
def test_play_api_lone_surrogate_in_json_is_a_400_not_a_500(body):
    """JSON may escape a lone surrogate; the answer that quoted it (an unknown field) could not
    be encoded as UTF-8, and the API answered 500."""
    pytest.importorskip("starlette", reason="the 'play' extra is not installed")
    from starlette.testclient import TestClient

    from protocol.play.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json", r.text


def test_a_node_budget_past_the_cores_counter_is_refused_not_a_crash(tmp_path, capsys):
    """2^64 nodes passed every check and overflowed the core's 64-bit counter: a traceback
    from analyse and selfplay, a crash before the first move in a match, an error per go."""
    from engine import Board
    from engine.limits import MAX_NODES
    from engine.search import Engine, Limits
    from protocol.cli import main

    with pytest.raises(ValueError, match="nodes must be between 1 and"):
        Limits(nodes=2 ** 64)
    result = Engine("international", hash_mb=4).search(Board("international"),
                                                      Limits(depth=2, nodes=MAX_NODES))
    assert result.depth == 2 and result.best_move is not None  # the largest is taken
    huge = str(2 ** 64)
    for args in (["analyse", "--nodes", huge],
                 ["selfplay", "--out", str(tmp_path / "d"), "--games", "1", "--nodes", huge],
                 ["match", "--engine", "damka", "--engine", "damka", "--nodes", huge]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"nodes must be between 1 and {MAX_NODES}, not {huge}" in err, err
    assert not (tmp_path / "d").exists()  # selfplay wrote nothing


@pytest.mark.parametrize("line, words", [
    ("level nodes=1e30", "bad level: nodes must be between 1 and 1000000000000000000, not 1e30"),
    ("level move-time=-1", "bad level: move-time must be positive, not -1"),
    ("level time=-10", "bad level: time must be 0 or more, not -10"),
    ("level time=5 inc=-1", "bad level: inc must be 0 or more, not -1"),
    ("level depth=0", "bad level: depth must be between 1 and 96, not 0"),
    ("set-param name=hash-mb value=-1", "hash-mb: -1 is outside 1..4096"),
    ("set-param name=move-overhead value=abc", "move-overhead: not a number: 'abc'"),
    ("set-param name=pydraughts-8x8 value=maybe", "pydraughts-8x8: not a boolean: 'maybe'"),
    ('hub "', "bad syntax: unexpected double quote at column 5"),
])
def test_hub_errors_name_the_value_as_the_client_wrote_it(line, words):
    """The Hub's words (move-time, time, inc), the parameter set, the text sent: not the
    library's field names (movetime, time_left) nor a bare range."""
    import io

    from protocol.hub.server import HubServer
    from protocol.hub.text import parse_line

    out = io.StringIO()
    HubServer(out).handle(line)
    command, args = parse_line(out.getvalue().splitlines()[-1])
    assert command == "error" and args["message"] == words


def test_hub_error_echoing_a_huge_line_is_cut():
    import io

    from protocol.hub.server import ERROR_CHARS, HubServer

    out = io.StringIO()
    HubServer(out).handle("x" * 1_000_000)
    (line,) = out.getvalue().splitlines()
    assert len(line) < ERROR_CHARS + 100 and line.endswith("characters)\"")


def test_fen_square_of_superscript_digits_is_a_clear_error():
    """``"³¹".isdigit()`` is true and ``int`` refuses it: Python's own message came out."""
    with pytest.raises(InvalidFenError, match="'³¹' is not a square"):
        parse_fen(get_variant("international"), "W:W³¹:B1")


def test_hub_help_is_answered_and_the_protocol_not_started():
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "protocol", "hub", "--help"], input="",
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("usage: damka hub")
    assert "ready" not in run.stdout and "id name=damka" not in run.stdout


@pytest.mark.parametrize("masks, reason", [
    ((1, 1, 0, True), "a square holds a white and a black piece"),
    ((2, 1 << 40, 4, True), "a king on an empty square"),
    ((1 << 60, 2, 0, True), "a square past the board's 50"),
    ((-1, 2, 0, True), "non-negative integers"),
    ((1, 1 << 40, 0, True), "a white man on its crowning row"),
])
def test_a_board_refuses_a_position_it_cannot_hold_when_it_is_given(masks, reason):
    """It was taken, and the core's ValueError came at the first move generation."""
    from engine import Board, DamkaError, InvalidPositionError, Position

    with pytest.raises(InvalidPositionError, match=reason) as caught:
        Board("international", Position(*masks))
    assert isinstance(caught.value, DamkaError)
    # masks as numpy reads them from a data file are taken, as plain integers
    import numpy as np

    board = Board("international", Position(np.uint64(1 << 49), np.uint64(1), np.uint64(0),
                                            np.bool_(True)))
    assert board.fen() == "W:W50:B1" and type(board.position.white) is int


def test_a_set_up_position_whose_side_not_to_move_has_no_piece_is_over():
    from engine import Board
    from engine.game import Game, Termination

    for fen in ("W:W46:B", "B:W46:B"):
        outcome = Board("international", fen).outcome()
        assert outcome is not None and outcome.winner is True
        assert outcome.termination == Termination.NO_PIECES
        assert Game("international", fen).outcome() == outcome
    assert Board("international", "W:W46:B1").outcome() is None


def test_perft_refuses_arguments_of_the_wrong_kind():
    """perft(board, "3") was a TypeError from a comparison inside, perft(None, 1) an
    AttributeError, and 1.5 plies were counted as 1."""
    from engine import Board, divide, perft

    board = Board("international")
    for args, error, words in [((board, "3"), TypeError, "depth is a whole number"),
                               ((board, 1.5), TypeError, "depth is a whole number"),
                               ((None, 1), TypeError, "from a Board, not NoneType"),
                               ((board, -1), ValueError, "depth must be >= 0")]:
        for count in (perft, divide):
            with pytest.raises(error, match=words):
                count(*args)
    assert perft(board, 1) == 9


def test_a_move_of_another_rule_sets_board_is_refused_not_misnamed():
    """Square 45 of a 10x10 move: an IndexError in PDN, and a Hub move "46-41" that no 8x8
    board has."""
    from engine import Move

    russian = get_variant("russian")
    for write in (Move(45, 40).pdn_long, Move(45, 40).hub):
        with pytest.raises(ValueError, match="not on the russian board"):
            write(russian)
    assert Move(31, 26).pdn_long(get_variant("international")) == "32-27"
