"""The DXP codec: every message laid out byte for byte as the DamExchange pages define it,
round trips, refusals, and NUL framing across partial and coalesced reads."""

from __future__ import annotations

import pytest

from protocol.dxp.codec import (
    MAX_LENGTH,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    DxpError,
    DxpMove,
    DxpPosition,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Reassembler,
    GameRequestError,
    UnsupportedVersionError,
    decode,
    encode,
)

START = "z" * 20 + "e" * 10 + "w" * 20
NAME32 = "MatchRunner" + " " * 21

# (message, exact text) for every message type, including the DXP page's own examples
# (docs/protocols.md 2.2)
LAYOUTS = [
    (GameRequest("MatchRunner", False, 5, 75), "R01" + NAME32 + "Z005075A"),
    (GameRequest("MatchRunner", True, 5, 75, DxpPosition(True, START)),
     "R01" + NAME32 + "W005075BW" + START),
    (GameRequest("DXP Client", True, 2, 30, DxpPosition(False, "e" * 49 + "Z")),
     "R01DXP Client" + " " * 22 + "W002030BZ" + "e" * 49 + "Z"),
    (GameRequest("x" * 32, True, 999, 0), "R01" + "x" * 32 + "W999000A"),
    (GameAccept("damka 0.1"), "Adamka 0.1" + " " * 23 + "0"),
    (GameAccept("Scan 3.1", AcceptCode.VERSION_NOT_SUPPORTED), "AScan 3.1" + " " * 24 + "1"),
    (GameAccept("S", AcceptCode.REFUSED_THIS_GAME), "AS" + " " * 31 + "2"),
    (GameAccept("S", AcceptCode.REFUSED_ALL), "AS" + " " * 31 + "3"),
    (DxpMove(6, 11, (), 12), "M0012061100"),
    (DxpMove(5, 25, (22, 12, 23, 20), 12), "M001205250422122320"),
    (DxpMove(32, 28), "M0000322800"),
    (DxpMove(50, 1, (), 9999), "M9999500100"),
    (DxpMove(46, 5, tuple(range(6, 26)), 3),
     "M0003460520" + "".join(f"{n:02d}" for n in range(6, 26))),
    (GameEnd(), "E00"),
    (GameEnd(EndReason.I_LOSE, False), "E10"),
    (GameEnd(EndReason.DRAW, True), "E21"),
    (GameEnd(EndReason.I_WIN, False), "E30"),
    (Chat("Nice game so far"), "CNice game so far"),
    (Chat("x" * 126), "C" + "x" * 126),
    (BackRequest(5, False), "B005Z"),
    (BackRequest(1, True), "B001W"),
    (BackRequest(999, True), "B999W"),
    (BackAccept(), "K0"),
    (BackAccept(BackCode.NOT_SUPPORTED), "K1"),
    (BackAccept(BackCode.REFUSED), "K2"),
]


@pytest.mark.parametrize("message, text", LAYOUTS, ids=[t[:12] for _, t in LAYOUTS])
def test_layout_and_round_trip(message, text):
    assert message.to_text() == text
    assert encode(message) == text.encode("ascii") + b"\0"
    assert decode(text) == message
    assert len(text) <= MAX_LENGTH


def test_field_offsets_of_a_gamereq():
    text = GameRequest("I", False, 90, 50, DxpPosition(True, START)).to_text()
    assert len(text) == 94
    assert text[0] == "R" and text[1:3] == "01"
    assert text[3:35] == "I".ljust(32)
    assert text[35] == "Z" and text[36:39] == "090" and text[39:42] == "050"
    assert text[42] == "B" and text[43] == "W" and text[44:94] == START
    assert len(GameRequest("I", False, 90, 50).to_text()) == 43
    assert len(GameAccept("F").to_text()) == 34


def test_the_longest_capture_fits():
    """20 pieces is the most one capture can take; the message is 51 characters."""
    move = DxpMove(1, 50, tuple(range(21, 41)), 1)
    assert len(move.to_text()) == 51
    assert decode(move.to_text()).captured_set == frozenset(range(21, 41))


def test_captured_squares_in_any_order():
    a, b = decode("M001205250422122320"), decode("M001205250420232212")
    assert a.captured_set == b.captured_set == {12, 20, 22, 23}


def test_tolerant_readings():
    assert decode("C") == Chat("")  # an empty chat from a sloppy peer
    assert decode("A" + "Kingsrow".ljust(32) + "0").name == "Kingsrow"
    assert Chat.safe("bad \x00 byte \xe9" + "y" * 200).to_text().startswith("Cbad ? byte ?y")
    assert len(Chat.safe("y" * 500).to_text()) == MAX_LENGTH


@pytest.mark.parametrize(
    "text",
    [
        "",
        "X123",  # unknown type
        "M000106",  # too short
        "M00010611",  # too short
        "M0001061101",  # says one capture, gives none
        "M000106110012",  # says none, gives one
        "M0001511100",  # square 51
        "M0001001100",  # square 0
        "M00010611a0",  # not digits
        "M000106112112222322242526272829303132333435363738394041",  # 21 captured
        "M00010611020707",  # the same piece twice
        "E0",
        "E40",
        "E02",
        "E000",
        "B000W",
        "B001X",
        "B01W",
        "K3",
        "K",
        "A" + "x" * 32 + "4",
        "A" + "x" * 31 + "0",
        "R01" + NAME32 + "Z005075",  # truncated form A
        "R01" + NAME32 + "Z005075C",  # unknown form
        "R01" + NAME32 + "X005075A",  # bad colour
        "R01" + NAME32 + "Z0x5075A",
        "R01" + NAME32 + "Z005075BW" + START[:-1],  # position one square short
        "R01" + NAME32 + "Z005075BW" + START[:-1] + "q",  # unknown piece
        "R01" + NAME32 + "Z005075BX" + START,
        "Cé",  # not ASCII
        "C" + "x" * 127,  # 128 characters
        "Rxx",
    ],
)
def test_malformed_messages_are_refused(text):
    with pytest.raises(DxpError):
        decode(text)


@pytest.mark.parametrize("minutes", ["0.5", "1.5", " 05", "05 ", "-01", "+01", "1e1", "0x1", "   "])
def test_thinking_time_is_three_digits_of_whole_minutes(minutes):
    """Some initiators write a real number there; DXP says 000-999 minutes: refused
    (GameRequestError, which a follower answers with GAMEACC 2), never guessed at."""
    with pytest.raises(GameRequestError) as info:
        decode("R01" + NAME32 + "Z" + minutes + "075A")
    assert "thinking time" in info.value.reason
    assert decode("R01" + NAME32 + "Z090075A").minutes == 90


def test_whole_minutes_only_are_written():
    assert GameRequest("I", True, 5.0).to_text()[36:39] == "005"
    for bad in (0.5, 1.25, -1, 1000, True, "5"):
        with pytest.raises(ValueError):
            GameRequest("I", True, bad).to_text()


def test_unknown_protocol_version_is_told_apart():
    with pytest.raises(UnsupportedVersionError) as info:
        decode("R02" + NAME32 + "Z005075A")
    assert info.value.version == 2


@pytest.mark.parametrize(
    "build",
    [
        lambda: DxpMove(0, 11).to_text(),
        lambda: DxpMove(1, 51).to_text(),
        lambda: DxpMove(1, 50, tuple(range(1, 22))).to_text(),
        lambda: DxpMove(1, 50, (7, 7)).to_text(),
        lambda: GameRequest("x" * 33, True).to_text(),
        lambda: GameRequest(" lead", True).to_text(),
        lambda: GameRequest("I", True, 1000).to_text(),
        lambda: GameRequest("I", True, 5, 1000).to_text(),
        lambda: Chat("").to_text(),
        lambda: Chat("x" * 127).to_text(),
        lambda: Chat("é").to_text(),
        lambda: BackRequest(0, True).to_text(),
        lambda: BackRequest(1000, True).to_text(),
        lambda: DxpPosition(True, "e" * 49),
    ],
)
def test_messages_that_cannot_be_written(build):
    with pytest.raises(ValueError):
        build()


# -- framing ------------------------------------------------------------------------------

STREAM = [GameAccept("F"), DxpMove(32, 28), DxpMove(5, 25, (22, 12, 23, 20), 12), Chat("hi"), GameEnd()]


def test_coalesced_messages_come_apart():
    data = b"".join(encode(m) for m in STREAM)
    texts = Reassembler().feed(data)
    assert [decode(t) for t in texts] == STREAM


@pytest.mark.parametrize("size", [1, 2, 3, 7, 13, 34, 35, 64])
def test_partial_reads_are_reassembled(size):
    data = b"".join(encode(m) for m in STREAM)
    frames = Reassembler()
    texts = []
    for i in range(0, len(data), size):
        texts += frames.feed(data[i:i + size])
    assert [decode(t) for t in texts] == STREAM
    assert frames.pending == 0


def test_a_message_split_right_at_its_nul():
    frames = Reassembler()
    assert frames.feed(b"E00") == []
    assert frames.pending == 3
    assert frames.feed(b"\0E01") == ["E00"]
    assert frames.feed(b"\0") == ["E01"]


def test_empty_frames_are_skipped():
    assert Reassembler().feed(b"\0\0K0\0\0\0") == ["K0"]


def test_an_over_long_frame_is_refused_and_the_stream_goes_on():
    frames = Reassembler()
    texts = frames.feed(b"C" + b"x" * 300)
    texts += frames.feed(b"y" * 5000)
    assert frames.pending <= MAX_LENGTH + 1  # memory stays bounded without a NUL
    texts += frames.feed(b"\0E00\0")
    assert len(texts) == 2
    with pytest.raises(DxpError):
        decode(texts[0])
    assert decode(texts[1]) == GameEnd()


def test_exactly_127_characters_pass():
    text = "C" + "z" * 126
    assert Reassembler().feed(text.encode() + b"\0") == [text]
    assert decode(text) == Chat("z" * 126)


def test_non_ascii_bytes_reach_decode_and_are_refused():
    texts = Reassembler().feed(b"C\xff\xfe\0K0\0")
    with pytest.raises(DxpError):
        decode(texts[0])
    assert decode(texts[1]) == BackAccept()
