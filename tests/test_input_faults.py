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
