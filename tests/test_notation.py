"""FEN, PDN move and Hub move/position notation: round trips and every kind of bad input.

Expected values are written by hand from the numbering rules (docs/rules.md 0.2-0.4 and the
Hub protocol, docs/protocols.md 1.6-1.7), never taken from damka's own output.
"""

from __future__ import annotations

import random

import pytest

from engine import (
    VARIANTS,
    AmbiguousMoveError,
    Board,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Move,
    Position,
    get_variant,
    parse_fen,
    parse_hub_position,
    parse_move,
    write_fen,
    write_hub_position,
    write_pdn,
)
from engine.squares import parse_square, square_name, square_number

VARIANT_IDS = [v.name for v in VARIANTS]
INTL = get_variant("international")
ENGLISH = get_variant("english")
RUSSIAN = get_variant("russian")
SPANISH = get_variant("spanish")


def mask(variant, *names: str) -> int:
    out = 0
    for name in names:
        out |= 1 << parse_square(variant, name)
    return out


def random_positions(variant, games: int = 10, plies: int = 160, seed: str = ""):
    """(board, legal moves) along seeded random games: kings and long captures included."""
    rng = random.Random(f"{variant.name}{seed}")
    for _ in range(games):
        board = Board(variant)
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            yield board, moves
            board.push(rng.choice(moves))


# -- FEN ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_start_fen_round_trip(variant):
    position = parse_fen(variant, variant.start_fen)
    for compact in (False, True):
        assert parse_fen(variant, write_fen(variant, position, compact)) == position


def test_start_piece_counts_by_hand():
    # 20 men each on 10x10, 12 each on 8x8
    for variant in VARIANTS:
        p = parse_fen(variant, variant.start_fen)
        expected = 20 if variant.size == 10 else 12
        assert (bin(p.white).count("1"), bin(p.black).count("1"), p.kings) == (expected, expected, 0)


def test_international_ranges_and_compact_output():
    p = parse_fen(INTL, "W:W31-50:B1-20")
    assert p.white == mask(INTL, *map(str, range(31, 51)))
    assert p.black == mask(INTL, *map(str, range(1, 21)))
    assert p.white_to_move and p.kings == 0
    assert write_fen(INTL, p, compact=True) == "W:W31-50:B1-20"
    assert write_fen(INTL, p) == "W:W" + ",".join(map(str, range(31, 51))) + ":B" + ",".join(
        map(str, range(1, 21))
    )


def test_kings_and_king_ranges():
    p = parse_fen(INTL, "B:WK1-K3,40:BK46,12")
    assert p.kings == mask(INTL, "1", "2", "3", "46")
    assert p.white == mask(INTL, "1", "2", "3", "40")
    assert p.black == mask(INTL, "46", "12")
    assert not p.white_to_move
    assert write_fen(INTL, p) == "B:WK1,K2,K3,40:B12,K46"
    assert write_fen(INTL, p, compact=True) == "B:WK1-3,40:B12,K46"
    assert parse_fen(INTL, write_fen(INTL, p, compact=True)) == p


def test_either_block_order_empty_block_and_trailing_dot():
    a = parse_fen(INTL, "W:W28,33:B19")
    assert parse_fen(INTL, "W:B19:W28,33") == a
    assert parse_fen(INTL, "W:W28,33:B19.") == a
    assert parse_fen(INTL, ' [FEN "W:W28,33:B19"] ') == a
    assert parse_fen(INTL, "w:w28, 33:b19") == a
    empty_black = parse_fen(INTL, "W:W28:B")
    assert empty_black == Position(mask(INTL, "28"), 0, 0, True)
    assert parse_fen(INTL, "B:W:B19") == Position(0, mask(INTL, "19"), 0, False)
    assert parse_fen(INTL, "W:W28") == empty_black


def test_algebraic_squares():
    p = parse_fen(RUSSIAN, "W:Wa1,Kc3:Bh8,Kb6")
    assert p.white == mask(RUSSIAN, "a1", "c3") and p.kings == mask(RUSSIAN, "c3", "b6")
    # English numbering: 1 = b8 ... 29 = a1, 30 = c1 (docs/rules.md 0.4)
    assert square_number(RUSSIAN, parse_square(RUSSIAN, "a1")) == 29
    assert square_number(RUSSIAN, parse_square(RUSSIAN, "b8")) == 1
    assert square_number(RUSSIAN, parse_square(RUSSIAN, "h8")) == 4
    assert write_fen(RUSSIAN, p) == "W:Wa1,Kc3:BKb6,h8"
    assert parse_fen(RUSSIAN, "W:WA1,KC3:BH8,KB6") == p
    # a numeric FEN of an algebraic set (dctl, pydraughts) is in the English numbers
    assert parse_fen(RUSSIAN, "W:W29,K22:BK9,4") == p  # a1 c3, b6 h8
    for name in ("russian", "brazilian", "czech"):
        variant = get_variant(name)
        assert parse_fen(variant, "W:W21-32:B1-12") == Board(variant).position


def test_italian_and_spanish_numbering():
    italian = get_variant("italian")
    # Italian 1 = a8 (top left), Spanish 1 = h1 (White's near right): Spanish n = Italian 33 - n
    for n in range(1, 33):
        assert parse_square(SPANISH, str(n)) == parse_square(italian, str(33 - n))
    # Spanish White men start on 1-12, at the bottom of the engine's board (White moves up)
    p = parse_fen(SPANISH, SPANISH.start_fen)
    assert p.white == mask(SPANISH, *map(str, range(1, 13)))
    assert all(parse_square(SPANISH, str(n)) >= 20 for n in range(1, 13))


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_fen_round_trip_on_random_positions(variant):
    seen = 0
    for board, _ in random_positions(variant, games=4, seed="fen"):
        p = board.position
        for compact in (False, True):
            assert parse_fen(variant, write_fen(variant, p, compact)) == p
        seen += 1
    assert seen > 100


BAD_FENS = [
    ("international", ""),
    ("international", "   "),
    ("international", "X:W31:B1"),
    ("international", "W31,32:B1"),
    ("international", "W:W31:B1:W32"),
    ("international", "W:W31:W32"),
    ("international", "W:Q31:B1"),
    ("international", "W:W0:B1"),
    ("international", "W:W51:B1"),
    ("international", "W:W31-29:B1"),
    ("international", "W:W31-:B1"),
    ("international", "W:Wabc:B1"),
    ("international", "W:WK:B1"),
    ("international", "W:W31,31:B1"),
    ("international", "W:W31:B31"),
    ("international", "W:W3:B20"),  # a white man on its crowning row
    ("international", "W:W31:B46"),  # a black man on its crowning row
    ("english", "B:W33:B1"),
    ("english", "B:W21-32:B1-12:"),
    ("russian", "W:Wa2:Bh8"),  # a light square
    ("russian", "W:Wi1:Bh8"),
    ("russian", "W:W33:Bh8"),  # English numbers go to 32
    ("russian", "W:Wa1-c1:Bh8"),
    ("russian", "W:Wb8:Ba1"),
]


@pytest.mark.parametrize("name,fen", BAD_FENS)
def test_bad_fen_raises_invalid_fen_error(name, fen):
    with pytest.raises(InvalidFenError) as info:
        parse_fen(get_variant(name), fen)
    assert isinstance(info.value, ValueError)
    assert info.value.fen == fen


def test_non_text_fen():
    with pytest.raises(InvalidFenError):
        parse_fen(INTL, None)  # type: ignore[arg-type]


# -- moves: round trips ---------------------------------------------------------------


def hub_numbers(text: str) -> list[int]:
    return [int(t) for t in text.replace("-", "x").split("x")]


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_every_written_form_parses_back(variant):
    """short PDN (when written), long PDN and Hub forms of every legal move read back."""
    rng = random.Random(variant.name)
    kinds = {"positions": 0, "multi": 0, "king": 0, "promotes": 0, "full path written": 0}
    for board, legal in random_positions(variant):
        kinds["positions"] += 1
        for move in legal:
            written = write_pdn(variant, move, legal)
            assert parse_move(variant, written, legal) == move
            assert parse_move(variant, move.pdn_long(variant), legal) == move
            hub = move.hub(variant)
            assert parse_move(variant, hub, legal) == move
            numbers = hub_numbers(hub)
            assert numbers[0] == square_number(variant, move.origin)
            assert numbers[1] == square_number(variant, move.destination)
            assert numbers[2:] == sorted(numbers[2:])  # captured squares ascending by number
            if len(move.captured) >= 2:
                kinds["multi"] += 1
                shuffled = numbers[2:]
                rng.shuffle(shuffled)
                shuffled.reverse()
                text = "x".join(map(str, numbers[:2] + shuffled))
                assert parse_move(variant, text, legal) == move
            if board.position.kings >> move.origin & 1:
                kinds["king"] += 1
            kinds["promotes"] += move.promotes
            if written != move.pdn_short(variant):
                kinds["full path written"] += 1
                assert written == move.pdn_long(variant)
    # the random games really reached kings, promotions and multiple captures
    assert kinds["positions"] > 300 and kinds["multi"] > 5
    assert kinds["king"] > 20 and kinds["promotes"] > 5


def test_pdn_forms_by_hand():
    b = Board("international", "W:W33:B18,28")
    legal = list(b.legal_moves)
    # 33 takes 28 and 18 and lands on 13 (docs/protocols.md 1.7)
    assert len(legal) == 1
    move = legal[0]
    assert move == Move(32, 12, (32, 21, 12), (17, 27), False)
    assert move.hub(INTL) == "33x13x18x28"
    assert move.pdn_long(INTL) == "33x22x13"
    assert move.pdn_short(INTL) == "33x13"
    assert b.pdn(move) == "33x13"
    for text in ("33x13", "33x22x13", "33x13x18x28", "33x13x28x18", "33:13", "33x13!", " 33x13 "):
        assert b.parse_move(text) == move


def test_russian_uses_colon_and_reads_any_separator():
    b = Board("russian", "W:Wc3:Bd4,f6")
    move = b.parse_move("c3:e5:g7")
    assert move.pdn_long(RUSSIAN) == "c3:e5:g7"
    assert b.pdn(move) == "c3:g7"
    assert b.parse_move("c3xg7") == b.parse_move("C3:G7") == move
    # Hub squares are numbers: English numbering, c3 = 22, g7 = 8, d4 = 18, f6 = 11
    assert move.hub(RUSSIAN) == "22x8x11x18"
    assert b.parse_move("22x8x18x11") == move


def test_quiet_moves_and_leading_zeros():
    b = Board()
    move = b.parse_move("32-28")
    assert move == Move(31, 27)
    assert move.hub(INTL) == move.pdn_long(INTL) == b.pdn(move) == "32-28"
    assert b.parse_move("032-028") == move
    assert b.parse_move("32x28") == move  # a capture separator on a step is read leniently


def test_spanish_hub_captured_order_is_by_number():
    # Spanish numbers run the other way round from the engine's squares (1 = h1)
    v = SPANISH
    move = Move(0, 0, (0,), (parse_square(v, "20"), parse_square(v, "25")))
    assert [square_name(v, s) for s in move.captured] == ["25", "20"]  # internal order
    assert move.hub(v).endswith("x20x25")


# -- moves: errors ----------------------------------------------------------------------

# English: the white man on 26 can take 22 and 14 (over 17) or 23 and 15 (over 19), both to 10
AMBIGUOUS = "W:W26:B14,15,22,23"


def test_ambiguous_short_form_names_the_candidates():
    b = Board("english", AMBIGUOUS)
    assert len(b.legal_moves) == 2
    with pytest.raises(AmbiguousMoveError) as info:
        b.parse_move("26x10")
    assert sorted(info.value.candidates) == ["26x17x10", "26x19x10"]
    assert isinstance(info.value, ValueError)
    assert "26x17x10" in str(info.value)


def test_ambiguous_moves_are_written_in_full_and_resolve_by_path_or_captures():
    b = Board("english", AMBIGUOUS)
    left = b.parse_move("26x17x10")
    right = b.parse_move("26x19x10")
    assert left != right
    assert (b.pdn(left), b.pdn(right)) == ("26x17x10", "26x19x10")
    assert b.parse_move("26x10x14x22") == b.parse_move("26x10x22x14") == left
    assert b.parse_move("26x10x23x15") == right
    assert left.hub(ENGLISH) == "26x10x14x22"


def test_a_move_whose_path_is_ambiguous_is_written_with_the_rule_sets_separator():
    """d4 takes e3 and lands on f2, and so does a longer capture ending on f2: the path
    names both, so the captured squares are written too, with Russian's ':' (a standard
    PDN reader of Russian reads 'x' as no separator at all)."""
    russian = get_variant("russian")
    b = Board(russian, "W:Wa1,c1,g1,h2,a3,g3,d4:Be3,a5,e5,h6,a7,c7,e7,b8,f8,h8")
    single = next(m for m in b.legal_moves if m.captured and len(m.captured) == 1)
    assert b.pdn(single) == "d4:f2:e3"
    assert b.parse_move("d4:f2:e3") == single
    # the Hub form keeps 'x' and the English numbers
    numbers = [str(square_number(russian, parse_square(russian, n))) for n in ("d4", "f2", "e3")]
    assert single.hub(russian) == "x".join(numbers)


@pytest.mark.parametrize(
    "text",
    ["46-41", "20-25", "32-26", "32-23", "31x22", "33x13x18x28", "32-28-23", "28-32"],
)
def test_illegal_move(text):
    b = Board()
    with pytest.raises(IllegalMoveError) as info:
        b.parse_move(text)
    assert info.value.text == text


@pytest.mark.parametrize(
    "text",
    ["", "  ", "hello", "32", "32-27x", "32-", "-28", "32--28", "32-99", "0-5", "32-28x23", "a1-b2", "32/28", "3 2-28"],
)
def test_junk_is_invalid_move(text):
    b = Board()
    with pytest.raises(InvalidMoveError) as info:
        b.parse_move(text)
    assert isinstance(info.value, ValueError)
    assert info.value.text == text


@pytest.mark.parametrize("text", ["c3-d9", "c3-d3", "c3-k4", "33-29", "c3"])
def test_junk_is_invalid_move_algebraic(text):
    with pytest.raises(InvalidMoveError):
        Board("russian").parse_move(text)


def test_non_text_move():
    with pytest.raises(InvalidMoveError):
        parse_move(INTL, 3228, [])  # type: ignore[arg-type]


def test_writing_an_illegal_move_raises():
    with pytest.raises(IllegalMoveError):
        Board().pdn(Move(0, 5))


# -- Hub positions -------------------------------------------------------------------------


HUB_STARTS = {
    "international": "W" + "b" * 20 + "e" * 10 + "w" * 20,
    "english": "B" + "b" * 12 + "e" * 8 + "w" * 12,
    "russian": "W" + "b" * 12 + "e" * 8 + "w" * 12,
    "brazilian": "W" + "b" * 12 + "e" * 8 + "w" * 12,
    "czech": "W" + "b" * 12 + "e" * 8 + "w" * 12,
    "italian": "W" + "b" * 12 + "e" * 8 + "w" * 12,
    "spanish": "W" + "w" * 12 + "e" * 8 + "b" * 12,
}


@pytest.mark.parametrize("name", sorted(HUB_STARTS))
def test_hub_start_positions(name):
    variant = get_variant(name)
    start = parse_fen(variant, variant.start_fen)
    assert write_hub_position(variant, start) == HUB_STARTS[name]
    assert parse_hub_position(variant, HUB_STARTS[name]) == start


def test_hub_position_by_hand():
    text = "B" + "e" * 9 + "W" + "e" * 17 + "w" + "e" * 4 + "b" + "e" * 12 + "B" + "e" * 4
    # square 10 white king, 28 white man, 33 black man, 46 black king; Black to move
    p = parse_hub_position(INTL, text)
    assert p == parse_fen(INTL, "B:WK10,28:B33,K46")
    assert write_hub_position(INTL, p) == text


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_hub_position_round_trip_on_random_positions(variant):
    for board, _ in random_positions(variant, games=3, seed="hub"):
        text = board.hub_position()
        assert len(text) == variant.squares + 1
        assert parse_hub_position(variant, text) == board.position
        assert Board.from_hub(variant, text).position == board.position


BAD_HUB = [
    ("international", "W" + "e" * 49),
    ("international", "W" + "e" * 51),
    ("international", "X" + "e" * 50),
    ("international", "W" + "e" * 49 + "x"),
    ("international", "W" + "w" + "e" * 49),  # white man on square 1
    ("international", "W" + "e" * 49 + "b"),  # black man on square 50
    ("english", "W" + "e" * 50),
    ("english", "W" + "e" * 31),
    ("russian", ""),
]


@pytest.mark.parametrize("name,text", BAD_HUB)
def test_bad_hub_position(name, text):
    with pytest.raises(InvalidFenError):
        parse_hub_position(get_variant(name), text)


def test_non_text_hub_position():
    with pytest.raises(InvalidFenError):
        parse_hub_position(INTL, None)  # type: ignore[arg-type]
