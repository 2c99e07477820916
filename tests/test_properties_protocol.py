"""Property tests (hypothesis) of the protocols' parsers of outside input: Hub lines and the
Hub engine's commands, DXP messages and their NUL framing, the play page's JSON bodies, and PDN
and openings files made of long runs of brackets, quotes, braces and spaces.

* Valid input round-trips exactly (Hub lines, every DXP message, frames split anywhere).
* Any input is read or refused with the documented error (HubSyntaxError, DxpError, a 4xx JSON
  error, PdnError, OpeningsError), never another exception, an ``internal error`` or a 5xx, and
  never a hang (a long run is read in bounded time).
* A refused input changes nothing: the Hub engine's parameters, position and limits, and a
  play game's state, are as before an ``error`` / a 4xx answer.
"""

from __future__ import annotations

import io
import json
import string
import time

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from engine import Board
from engine.notation import write_hub_position
from engine.pdn import PdnError, read_game, read_games
from engine.squares import square_name
from engine.variants import get_variant
from protocol.dxp.codec import (MAX_LENGTH, NAME_WIDTH, AcceptCode, BackAccept, BackCode,
                                BackRequest, Chat, DxpError, DxpMove, DxpPosition, EndReason,
                                GameAccept, GameEnd, GameRequest, Reassembler, decode, encode)
from protocol.hub.server import VARIANT_VALUES, HubServer
from protocol.hub.text import HubSyntaxError, format_line, parse_line
from protocol.match.openings import OpeningsError, read_openings
from property_strategies import (ALL_VARIANTS, boards_with_moves, mutations, placements,
                                 played_boards, profile, text_or_mutation, variants)

# -- Hub lines -------------------------------------------------------------------------------


def _name_char(c: str) -> bool:
    return not (c.isspace() or c in '="' or ord(c) < 32 or ord(c) == 127)


HUB_NAMES = st.text(st.characters(codec="utf-8").filter(_name_char), min_size=1, max_size=10)
#: a value is any text without a double quote or a line break (Hub has no escapes)
HUB_VALUES = st.text(st.characters(codec="utf-8", exclude_characters='"\r\n'), max_size=20)


@profile(200)
@given(HUB_NAMES, st.dictionaries(HUB_NAMES.filter(lambda n: "_" not in n), HUB_VALUES, max_size=6))
def test_hub_line_round_trips_through_the_wire(command, args):
    line = format_line(command, **args)
    # one line on the wire however it is read: Scan's byte lines or Python's text lines
    wire = (line + "\n").encode("utf-8")
    assert wire.count(b"\n") == 1
    assert len(io.StringIO(line + "\n", newline=None).readlines()) == 1
    assert parse_line(wire.decode("utf-8")) == (command, args)


@profile(100)
@given(HUB_NAMES, st.tuples(st.text(max_size=8), st.sampled_from('"\n\r'), st.text(max_size=8)).map("".join))
def test_hub_writer_refuses_a_value_that_would_break_the_line(name, value):
    with pytest.raises(ValueError):
        format_line("set-param", name=name, value=value)


HUB_ALPHABET = 'abcdefghijklmnopqrstuvwxyz-=" \t\r0123456789.WBwbe'


@profile(300)
@given(text_or_mutation(st.sampled_from([
    'set-param name=variant value=russian', 'pos pos=W' + 'e' * 50 + ' moves="32-28 19-23"',
    'level move-time=0.5', 'go think', 'info depth=3 score=0.25 pv="32-28 19-23"',
    'id name=damka version="0.1 beta"']), HUB_ALPHABET, 100))
def test_any_hub_line_is_read_or_refused_with_hub_syntax_error(line):
    try:
        command, args = parse_line(line)
    except HubSyntaxError:
        return
    assert command and all(_name_char(c) for c in command)
    assert all(name and '"' not in value for name, value in args.items())


# -- the Hub engine: bad input keeps its state ----------------------------------------------


def _hub_state(server: HubServer):
    board = server.board
    return (
        repr(server.params),
        None if board is None else (board.variant, board.position, tuple(board.move_stack)),
        server._pos_source,
        tuple(server._pos_moves),
        repr(server.limits),
    )


NUMBERS = st.one_of(
    st.integers(-10, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "-1e400", "1e3", "0x10", "", " ", "1_000",
                     "\u0661", "99999999999999999999999"]),
)


@st.composite
def hub_commands(draw) -> str:
    """A Hub command the engine serves while idle (no go, quit or init, which start searches
    or stop the loop), with valid or broken arguments."""
    kind = draw(st.sampled_from(["set-param", "level", "pos", "ping", "stop", "ponder-hit",
                                 "junk"]))
    if kind == "set-param":
        name = draw(st.sampled_from(["variant", "hash-mb", "level", "move-overhead",
                                     "forced-capture", "pydraughts-8x8", "line-pacing", "hash",
                                     "nonsense", ""]))
        value = draw(st.one_of(NUMBERS, st.sampled_from(
            list(VARIANT_VALUES) + ["true", "false", "easy", "hard", "full", "shashki", "x"])))
        return f'set-param name="{name}" value="{value}"'
    if kind == "level":
        keys = draw(st.lists(st.sampled_from(["depth", "nodes", "move-time", "time", "inc",
                                              "moves", "infinite"]), unique=True, max_size=3))
        return "level " + " ".join(f'{k}="{draw(NUMBERS)}"' for k in keys)
    if kind == "pos":
        variant = draw(st.sampled_from(ALL_VARIANTS))
        board = draw(played_boards(variant, 6))
        pos = write_hub_position(variant, draw(placements(variant)) if draw(st.booleans())
                                 else board.position)
        pos = draw(st.one_of(st.just(pos), mutations(pos, "WBwbe x")))
        moves = [m.hub(variant) for m in board.legal_moves][:3]
        token = draw(st.one_of(st.sampled_from(moves or ["1-2"]),
                               st.text("0123456789x-", max_size=8)))
        parts = ["pos"]
        if draw(st.booleans()):
            parts.append(f'pos="{pos}"')
        if draw(st.booleans()):
            parts.append(f'moves="{token}"')
        return " ".join(parts)
    if kind == "junk":
        return draw(st.text(HUB_ALPHABET, max_size=40))
    return kind


@profile(150)
@given(st.lists(hub_commands(), min_size=1, max_size=6))
def test_hub_engine_answers_bad_input_with_error_and_keeps_its_state(lines):
    out = io.StringIO()
    server = HubServer(out)
    for line in lines:
        before = _hub_state(server)
        written = out.tell()
        server.handle(line)
        answer = out.getvalue()[written:]
        assert "internal error" not in answer, (line, answer)
        for reply in answer.splitlines():
            parse_line(reply)  # every answer is one well-formed Hub line
        if answer.startswith("error"):
            assert _hub_state(server) == before, line
    assert not server.searching


# -- DXP messages and framing ---------------------------------------------------------------

ASCII = st.characters(min_codepoint=1, max_codepoint=127)
DXP_NAMES = st.text(ASCII, max_size=NAME_WIDTH).filter(
    lambda n: not n.startswith(" ") and not n.endswith(" "))
SQUARES = st.integers(1, 50)
DXP_POSITIONS = st.builds(DxpPosition, st.booleans(), st.text("ewzWZ", min_size=50, max_size=50))

dxp_messages = st.one_of(
    st.builds(GameRequest, DXP_NAMES, st.booleans(), st.integers(0, 999), st.integers(0, 999),
              st.none() | DXP_POSITIONS),
    st.builds(GameAccept, DXP_NAMES, st.sampled_from(AcceptCode)),
    st.builds(DxpMove, SQUARES, SQUARES,
              st.lists(SQUARES, unique=True, max_size=20).map(tuple), st.integers(0, 9999)),
    st.builds(GameEnd, st.sampled_from(EndReason), st.booleans()),
    st.builds(Chat, st.text(ASCII, min_size=1, max_size=MAX_LENGTH - 1)),
    st.builds(BackRequest, st.integers(1, 999), st.booleans()),
    st.builds(BackAccept, st.sampled_from(BackCode)),
)


@profile(300)
@given(dxp_messages)
def test_every_dxp_message_round_trips_byte_for_byte(message):
    data = encode(message)
    assert data.endswith(b"\0") and data.count(b"\0") == 1 and len(data) <= MAX_LENGTH + 1
    text = data[:-1].decode("ascii")
    assert decode(text) == message
    assert encode(decode(text)) == data


DXP_ALPHABET = "RAMECBK0123456789 WZewzAB.-\x00\x7f"


@profile(300)
@given(text_or_mutation(dxp_messages.map(lambda m: m.to_text()), DXP_ALPHABET, 140))
def test_any_dxp_text_is_decoded_or_refused_with_dxp_error(text):
    try:
        message = decode(text)
    except DxpError as exc:
        assert exc.text == text and exc.reason
        return
    # what was read writes a message that reads back the same, bar the forms only tolerated on
    # reading (an empty CHAT, a name that starts with a space)
    if (isinstance(message, Chat) and not message.text) or getattr(message, "name", "").startswith(" "):
        return
    assert decode(message.to_text()) == message


@profile(200)
@given(st.lists(dxp_messages, min_size=1, max_size=6), st.lists(st.integers(0, 2000), max_size=8))
def test_dxp_frames_come_out_whole_however_the_stream_is_cut(messages, cuts):
    stream = b"".join(encode(m) for m in messages)
    points = sorted({min(c, len(stream)) for c in cuts})
    pieces = [stream[a:b] for a, b in zip([0] + points, points + [len(stream)])]
    reader = Reassembler()
    texts = [t for piece in pieces for t in reader.feed(piece)]
    assert [decode(t) for t in texts] == messages
    assert reader.pending == 0


@profile(200)
@given(st.binary(max_size=600), dxp_messages)
def test_dxp_framing_survives_any_bytes_and_then_reads_the_next_message(junk, message):
    """Garbage (over-long frames, non-ASCII, stray NULs) never breaks the stream: each frame
    is bounded, and once a NUL ends the garbage the next message is read intact."""
    reader = Reassembler()
    for text in reader.feed(junk):
        assert 0 < len(text) <= MAX_LENGTH + 1
        try:
            decode(text)
        except DxpError:
            pass
    assert reader.pending <= MAX_LENGTH + 1
    assert reader.feed(b"\0" + encode(message)) [-1:] == [message.to_text()]
    assert reader.pending == 0


# -- a DXP session: bad input is answered, never crashes it -------------------------------

_DXP_ENGINE: list = []


def _dxp_session(in_game: bool):
    """A follower session, idle or in a game (we play Black: the peer moves first)."""
    from engine.search import Engine
    from protocol.dxp.session import DxpSession, DxpSettings

    if not _DXP_ENGINE:
        _DXP_ENGINE.append(Engine("international", hash_mb=1))
    session = DxpSession(_DXP_ENGINE[0], DxpSettings(name="damka test"))
    if in_game:
        answer = session.receive(GameRequest("peer", False, 0, 0).to_text())
        assert answer and isinstance(answer[0], GameAccept) and answer[0].code == AcceptCode.ACCEPTED
    return session


def _not_a_game_request(text: str) -> bool:
    try:
        return not isinstance(decode(text), (GameRequest, DxpMove))
    except DxpError:
        return True


@profile(60)
@given(st.booleans(), st.lists(text_or_mutation(dxp_messages.map(lambda m: m.to_text()), DXP_ALPHABET, 140)
                               .filter(_not_a_game_request), min_size=1, max_size=4))
def test_dxp_session_answers_any_text_without_an_internal_error(in_game, texts):
    """Malformed or out-of-place messages are answered (a CHAT saying why, the game ended where
    the protocol says so), never with an exception or an internal error; a CHAT changes
    nothing. (GAMEREQ and MOVE are left out: they start a game or a search.)"""
    session = _dxp_session(in_game)
    for text in texts:
        game_before = session.game
        board_before = None if game_before is None else game_before.board.position
        out = session.receive(text)
        for message in out:
            encode(message)  # every answer is a well-formed message
            assert not (isinstance(message, Chat) and "internal error" in message.text), message
        assert not any("internal error" in e for e in session.errors), session.errors
        if isinstance(_decoded(text), Chat):
            assert out == [] and session.game is game_before
            if game_before is not None:
                assert session.game.board.position == board_before
    session.close()


def _decoded(text: str):
    try:
        return decode(text)
    except DxpError:
        return None


# -- the play page's JSON API --------------------------------------------------------------

starlette = pytest.importorskip("starlette", reason="the 'play' extra is not installed")
from starlette.testclient import TestClient  # noqa: E402

from protocol.play.app import create_app  # noqa: E402

_CLIENT: list[TestClient] = []


def _client() -> TestClient:
    """One in-process client for all examples (hypothesis runs many per test)."""
    if not _CLIENT:
        _CLIENT.append(TestClient(create_app(), raise_server_exceptions=False))
    return _CLIENT[0]


def _friend_game(variant, fen=None, moves=()) -> dict:
    body = {"variant": variant.name, "forced_capture": variant.forced_capture,
            "opponent": "friend", "moves": list(moves)}
    if fen is not None:
        body["fen"] = fen
    r = _client().post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


@profile(40)
@given(st.data(), variants)
def test_play_api_round_trips_a_game(data, variant):
    """A random game sent as a FEN and moves (then more moves one by one, as text or as a
    path) is what the state and the PDN download give back."""
    start = data.draw(played_boards(variant, 10)) if data.draw(st.booleans()) else Board(variant)
    fen = start.fen() if start.move_stack else None
    board = Board(variant, start.position)
    first = []
    for _ in range(data.draw(st.integers(0, 12))):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = legal[data.draw(st.integers(0, len(legal) - 1))]
        first.append(board.pdn(move))
        board.push(move)
    state = _friend_game(variant, fen, first)
    game_id = state["id"]
    for _ in range(data.draw(st.integers(0, 6))):
        legal = list(board.legal_moves)
        if not legal or state["result"] is not None:
            break
        move = legal[data.draw(st.integers(0, len(legal) - 1))]
        if data.draw(st.booleans()):
            body = {"move": move.hub(variant) if data.draw(st.booleans()) else board.pdn(move)}
        else:
            body = {"path": [square_name(variant, s) for s in move.path]}
        r = _client().post(f"/api/games/{game_id}/move", json=body)
        assert r.status_code == 200, (body, r.text)
        state = r.json()
        board.push(move)
    assert state["fen"] == board.fen()
    replay, written = Board(variant, start.position), []
    for move in board.move_stack:
        written.append(replay.pdn(move))
        replay.push(move)
    assert state["moves"] == written
    pdn = _client().get(f"/api/games/{game_id}/pdn").text
    game = read_game(io.StringIO(pdn), variant)
    assert game.moves == board.move_stack and game.start == start.position


def _json_containers(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False),
    _json_containers,
    max_leaves=8,
)


@st.composite
def new_game_bodies(draw):
    """A new-game body: known fields with right or wrong kinds of values, or any JSON."""
    if draw(st.integers(0, 3)) == 0:
        return draw(JSON_VALUES)
    variant = draw(st.sampled_from(ALL_VARIANTS))
    fen = Board(variant, draw(placements(variant))).fen()
    fields = {
        "variant": st.one_of(st.sampled_from([v.name for v in ALL_VARIANTS] + ["shashki", "x"]), JSON_VALUES),
        "forced_capture": st.one_of(st.booleans(), JSON_VALUES),
        "opponent": st.one_of(st.sampled_from(["computer", "friend"]), JSON_VALUES),
        "level": st.one_of(st.sampled_from(["easy", "medium", "hard"]), JSON_VALUES),
        "human": st.one_of(st.sampled_from(["white", "black"]), JSON_VALUES),
        "fen": st.one_of(st.just(fen), mutations(fen, "WBK:,-0123456789abcdefgh"), JSON_VALUES),
        "moves": st.one_of(st.lists(st.text("0123456789abcdefgh-x:", max_size=8), max_size=4), JSON_VALUES),
        "seed": st.one_of(st.integers(), JSON_VALUES),
        "bogus": JSON_VALUES,
    }
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=5))
    body = {name: draw(fields[name]) for name in chosen}
    if "opponent" not in body:
        body["opponent"] = "friend"  # no computer move is started on a game that is created
    return body


def _check_answer(r, ok: tuple[int, ...]) -> None:
    assert r.status_code < 500, r.text
    if r.status_code not in ok:
        assert 400 <= r.status_code < 500, r.text
        error = r.json()["error"]
        assert error["code"] and error["message"]


@profile(150)
@given(new_game_bodies())
def test_play_api_new_game_takes_any_json_or_answers_4xx(body):
    r = _client().post("/api/games", json=body)
    _check_answer(r, (201,))
    if r.status_code == 201:
        state = r.json()
        assert Board(state["variant"]["name"], state["fen"]).fen() == state["fen"]


RAW_BODIES = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
    st.builds(lambda n, c: (c * n).encode(), st.integers(1, 100_000), st.sampled_from(["[", "{\"a\":"])),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()).flatmap(
        lambda b: mutations(b.decode(), '{}[]":,0123456789.eE-+ntruefalsn\\').map(str.encode)),
)
CONTENT_TYPES = st.sampled_from(["application/json", "text/plain", "", "application/xml",
                                 "application/json; charset=utf-8"])


@st.composite
def move_bodies(draw, legal_texts: list[str]):
    kind = draw(st.integers(0, 3))
    if kind <= 1:
        return {"move": draw(st.one_of(st.sampled_from(legal_texts), st.text(max_size=12),
                                       st.sampled_from(legal_texts).flatmap(
                                           lambda t: mutations(t, "0123456789abcdefgh-x:")),
                                       JSON_VALUES))}
    if kind == 2:
        return {"path": draw(st.one_of(st.lists(st.text("0123456789abcdefgh", max_size=3), max_size=70),
                                       JSON_VALUES))}
    return draw(JSON_VALUES)


_GAMES: dict = {}


def _game_with_moves(variant) -> str:
    """One friend game per rule set, a few moves in (kept across examples: a refused request
    must leave it exactly so)."""
    if variant not in _GAMES or _client().get(f"/api/games/{_GAMES[variant]}").status_code != 200:
        board = Board(variant)
        moves = []
        for _ in range(6):
            move = next(iter(board.legal_moves))
            moves.append(board.pdn(move))
            board.push(move)
        _GAMES[variant] = _friend_game(variant, None, moves)["id"]
    return _GAMES[variant]


@profile(100)
@given(st.data(), variants, st.sampled_from(["move", "move", "takeback", "engine"]))
def test_play_api_refused_requests_change_nothing(data, variant, route):
    client = _client()
    game_id = _game_with_moves(variant)
    before = client.get(f"/api/games/{game_id}").json()
    legal_texts = [m["pdn"] for m in before["legal"]] or ["1-2"]
    if data.draw(st.integers(0, 3)) == 0:
        r = client.post(f"/api/games/{game_id}/{route}", content=data.draw(RAW_BODIES),
                        headers={"content-type": data.draw(CONTENT_TYPES)})
    else:
        body = data.draw(move_bodies(legal_texts)) if route == "move" else data.draw(JSON_VALUES)
        r = client.post(f"/api/games/{game_id}/{route}", json=body)
    _check_answer(r, (200,))
    event(f"{route} {r.status_code}")
    after = client.get(f"/api/games/{game_id}").json()
    if r.status_code != 200:
        assert after == before, r.text
    elif route == "move":
        assert after["ply"] == before["ply"] + 1
        client.post(f"/api/games/{game_id}/takeback")  # back to the state the others expect
        assert client.get(f"/api/games/{game_id}").json()["fen"] == before["fen"]
    elif route == "takeback":
        # put the taken-back move back (friend games take back one ply)
        assert after["ply"] == before["ply"] - 1
        r = client.post(f"/api/games/{game_id}/move", json={"move": before["moves"][-1]})
        assert r.status_code == 200 and r.json()["fen"] == before["fen"]


@profile(60)
@given(RAW_BODIES, CONTENT_TYPES)
def test_play_api_new_game_takes_any_bytes_or_answers_4xx(raw, kind):
    r = _client().post("/api/games", content=raw, headers={"content-type": kind})
    _check_answer(r, (201,))


# -- PDN and openings files with long runs -------------------------------------------------------

#: what a malformed file repeats: the run that made the PDN tag expression backtrack for minutes
#: (``[A`` and spaces) and its kin, each after a start that puts the reader inside a tag, a
#: value, a comment, a variation or a game
RUN_UNITS = (" ", "\n", "[", "]", '"', "{", "}", "\\", "(", ")", "[A", '[A "', "[A x", '"]', "1-")
RUN_STARTS = ("", '[Event "x"]\n', '[Event "x"]\n1. 32-28 *\n\n', "1. 32-28 ", "[A", '[A "',
              "[A x", "{", "(", ";")
RUN_ENDS = ("", "]", '"]', "}", ")", " *")


@st.composite
def long_runs(draw) -> str:
    """One to three runs of 1,000 to 20,000 characters, each after a start, then an end."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        unit = draw(st.sampled_from(RUN_UNITS))
        n = draw(st.integers(1_000, 20_000))
        parts.append(draw(st.sampled_from(RUN_STARTS)) + unit * (n // len(unit)))
    return "".join(parts) + draw(st.sampled_from(RUN_ENDS))


#: the bound is asserted on the read alone (the deadline would count the drawing too)
LONG_RUN_SECONDS = 5


@settings(profile(60), deadline=None)
@given(long_runs())
def test_pdn_with_long_runs_is_read_or_refused_in_bounded_time(text):
    start = time.monotonic()
    try:
        list(read_games(io.StringIO(text)))
    except PdnError as exc:
        assert exc.line is not None and exc.line >= 1
        event("refused")
    assert time.monotonic() - start < LONG_RUN_SECONDS


@settings(profile(40), deadline=None)
@given(text=long_runs())
def test_openings_file_with_long_runs_is_read_or_refused_in_bounded_time(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("openings") / "openings.txt"
    path.write_text(text, encoding="utf-8")
    start = time.monotonic()
    try:
        read_openings(path, "international")
    except OpeningsError as exc:
        assert str(path) in str(exc)
        event("refused")
    assert time.monotonic() - start < LONG_RUN_SECONDS
