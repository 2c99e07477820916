"""Rule tests: hand-built positions, one rule each, written in the rule set's own notation.

Every test runs against both move generators through the ``generate`` fixture: the pure-Python
reference (engine.reference) and the fast core (engine._core.generate). Both return moves as
(origin, destination, captured mask, path, promotes) over internal squares; the tests compare
sets of (origin, destination, captured mask, promotes).

The expected moves were worked out by hand from docs/rules.md; positions named ``rule_*`` in
tests/data/perft.json are the rule-book examples of dctl (FMJD and FID articles).
"""

from __future__ import annotations

import json
from typing import Callable, Sequence

import pytest

from engine import reference
from engine.fen import parse_fen
from engine.position import Position
from engine.squares import parse_square, row_col, square_at, square_name
from conftest import PERFT_JSON
from engine.variants import (
    BRAZILIAN,
    CZECH,
    ENGLISH,
    INTERNATIONAL,
    ITALIAN,
    RUSSIAN,
    SPANISH,
    VARIANTS,
    CapturePromotion,
    Variant,
)

Move = tuple[int, int, int, bool]  # (origin, destination, captured mask, promotes)
Generate = Callable[[Variant, Position], Sequence[tuple]]


def _fast_generate(variant: Variant, position: Position) -> Sequence[tuple]:
    from engine import _core

    return _core.generate(variant, position)


@pytest.fixture(params=["reference", "fast"])
def generate(request: pytest.FixtureRequest) -> Generate:
    if request.param == "reference":
        return lambda variant, position: reference.legal_moves(variant, position)
    return _fast_generate


# ---------------------------------------------------------------------------------------------
# Helpers: moves written in the rule set's notation


def capture(variant: Variant, origin: str, destination: str, captured: str, promotes: bool = False) -> Move:
    """A capture such as ``capture(INTERNATIONAL, "15", "13", "9 10")``."""
    mask = 0
    for name in captured.split():
        mask |= 1 << parse_square(variant, name)
    return (parse_square(variant, origin), parse_square(variant, destination), mask, promotes)


def step(variant: Variant, origin: str, destination: str, promotes: bool = False) -> Move:
    """A quiet move such as ``step(ITALIAN, "30", "27")``."""
    return (parse_square(variant, origin), parse_square(variant, destination), 0, promotes)


def describe(variant: Variant, moves: set[Move]) -> list[str]:
    """Moves as readable text for failure messages: ``15x13 [9 10]`` or ``30-27``, ``=K`` if crowned."""
    out = []
    for origin, destination, captured, promotes in moves:
        text = f"{square_name(variant, origin)}{'x' if captured else '-'}{square_name(variant, destination)}"
        if captured:
            names = [square_name(variant, s) for s in range(variant.squares) if captured >> s & 1]
            text += f" [{' '.join(names)}]"
        out.append(text + (" =K" if promotes else ""))
    return sorted(out)


def legal(generate: Generate, variant: Variant, fen: str) -> set[Move]:
    return {(m[0], m[1], m[2], bool(m[4])) for m in generate(variant, parse_fen(variant, fen))}


def assert_moves(generate: Generate, variant: Variant, fen: str, expected: set[Move]) -> None:
    got = legal(generate, variant, fen)
    assert got == expected, f"{variant} {fen}: got {describe(variant, got)}, expected {describe(variant, expected)}"


# ---------------------------------------------------------------------------------------------
# Turkish strike rule and duplicate captures


def test_turkish_strike_piece_cannot_be_jumped_twice_and_origin_is_empty(generate: Generate) -> None:
    """An English king goes round four pieces back to its empty start square, and stops there.

    Going round either way is the same move (same origin, destination and captured set).
    """
    v = ENGLISH
    assert_moves(generate, v, "W:WK21:B17,18,25,26", {capture(v, "21", "21", "17 18 25 26")})


def test_turkish_strike_captured_pieces_block_the_line(generate: Generate) -> None:
    """A Russian king that has gone round b4-d4-d2-b2 back to a3 may not pass over b4 again.

    Were b4 removed at once, the king could go on from a3 and take e7 as well.
    """
    v = RUSSIAN
    assert_moves(
        generate,
        v,
        "W:WKa3:Bb2,b4,d2,d4,e7",
        {
            capture(v, "a3", "a3", "b2 b4 d2 d4"),  # either way round, merged
            capture(v, "a3", "f8", "b4 e7"),
            capture(v, "a3", "f8", "b2 d2 d4 e7"),
            capture(v, "a3", "d8", "b2 d2 e7"),
        },
    )


# ---------------------------------------------------------------------------------------------
# Promotion during a capture


def test_international_man_passing_last_row_mid_capture_stays_a_man(generate: Generate) -> None:
    """FMJD 4.15: 15x4x13 touches the crowning row on 4 but ends as a man on 13."""
    v = INTERNATIONAL
    assert_moves(generate, v, "W:W15:B9,10", {capture(v, "15", "13", "9 10")})


def test_russian_man_crowned_mid_capture_continues_as_king(generate: Generate) -> None:
    """promo_a: b6:d8 crowns, and the new flying king takes e7 landing on f6, g5 or h4."""
    v = RUSSIAN
    assert_moves(
        generate,
        v,
        "W:Wb6,e3,g1:Bc7,e7,b4,h6",
        {capture(v, "b6", end, "c7 e7", promotes=True) for end in ("f6", "g5", "h4")},
    )


def test_russian_crowned_king_must_land_where_it_can_go_on(generate: Generate) -> None:
    """promo_b: after b6:d8:e7 the king must land on g5 (f6 and h4 are dead ends) and take f4."""
    v = RUSSIAN
    assert_moves(
        generate,
        v,
        "W:Wb6,c3,e1:Bc7,e7,h6,f4,a7",
        {capture(v, "b6", end, "c7 e7 f4", promotes=True) for end in ("e3", "d2", "c1")},
    )


@pytest.mark.parametrize("fen", ["W:Wb6,e3,g1:Bc7,e7,b4,h6", "W:Wb6,c3,e1:Bc7,e7,h6,f4,a7"])
def test_brazilian_man_passing_last_row_mid_capture_stays_a_man(generate: Generate, fen: str) -> None:
    """The promo_a / promo_b positions under Brazilian rules: b6xd8xf6, still a man."""
    v = BRAZILIAN
    assert_moves(generate, v, fen, {capture(v, "b6", "f6", "c7 e7")})


def test_english_crowning_ends_the_move(generate: Generate) -> None:
    """9x2 crowns; the new king may not go on to take 7 in the same move."""
    v = ENGLISH
    assert_moves(generate, v, "W:W9:B6,7", {capture(v, "9", "2", "6", promotes=True)})


def test_czech_crowning_ends_the_move(generate: Generate) -> None:
    v = CZECH
    assert_moves(generate, v, "W:Wb6:Bc7,e7", {capture(v, "b6", "d8", "c7", promotes=True)})


def test_man_crowned_by_a_quiet_move(generate: Generate) -> None:
    v = INTERNATIONAL
    assert_moves(generate, v, "W:W7:B1", {step(v, "7", "2", promotes=True)})


# ---------------------------------------------------------------------------------------------
# Flying kings


def test_flying_king_lands_only_where_the_capture_can_go_on(generate: Generate) -> None:
    """Ka1 takes c3; of the landing squares d4-h8 only e5 lets it take f4, so it must use e5."""
    for v in (RUSSIAN, CZECH, BRAZILIAN):
        assert_moves(
            generate,
            v,
            "W:WKa1:Bc3,f4",
            {capture(v, "a1", "g3", "c3 f4"), capture(v, "a1", "h2", "c3 f4")},
        )


def test_flying_king_captures_at_a_distance_and_lands_anywhere_beyond(generate: Generate) -> None:
    """FMJD 4.3 (rule_fr_4.3): K46 takes 23 from afar and may stop on 19, 14, 10 or 5."""
    v = INTERNATIONAL
    assert_moves(generate, v, "W:WK46:B23", {capture(v, "46", end, "23") for end in ("19", "14", "10", "5")})


def test_short_king_jumps_only_an_adjacent_piece(generate: Generate) -> None:
    """An English king on 32 sees 23 two squares away: no capture, only its one-square steps."""
    v = ENGLISH
    assert_moves(generate, v, "W:WK32:B23", {step(v, "32", "27"), step(v, "32", "28")})


# ---------------------------------------------------------------------------------------------
# Capture precedence


def test_capture_is_compulsory(generate: Generate) -> None:
    v = ENGLISH
    assert_moves(generate, v, "W:W22:B18", {capture(v, "22", "15", "18")})


def test_free_choice_of_capture_in_czech_when_no_king_can_capture(generate: Generate) -> None:
    """No quantity rule in Czech: taking one piece is as legal as taking two."""
    v = CZECH
    assert_moves(
        generate, v, "W:Wc3,e3:Bd4,b6", {capture(v, "c3", "e5", "d4"), capture(v, "e3", "a7", "d4 b6")}
    )


def test_quantity_rule_brazilian(generate: Generate) -> None:
    """The same position in Brazilian: the two-piece capture is the only legal move."""
    v = BRAZILIAN
    assert_moves(generate, v, "W:Wc3,e3:Bd4,b6", {capture(v, "e3", "a7", "d4 b6")})


def test_quantity_rule_international_kings_count_one(generate: Generate) -> None:
    """FMJD 4.14 (rule_it_4.14): two pieces either way, with or without a king: both legal."""
    v = INTERNATIONAL
    assert_moves(
        generate,
        v,
        "W:W26:B12,K21,31,32",
        {capture(v, "26", "8", "21 12"), capture(v, "26", "28", "31 32")},
    )


def test_czech_king_priority(generate: Generate) -> None:
    """czech_kingprio: the man on e1 and the king on g5 can both take d2; the king must."""
    v = CZECH
    assert_moves(generate, v, "W:WKg5,a3,f2,e1:Bg7,b2,d2", {capture(v, "g5", "c1", "d2")})


def test_spanish_quantity_before_quality(generate: Generate) -> None:
    """Two men (14x18x26, landing on 21 between them) outweigh one king (14x11)."""
    v = SPANISH
    assert_moves(generate, v, "W:W20,K14,5:B18,26,17,K11,6", {capture(v, "14", "30", "18 26")})


def test_spanish_quality_most_kings(generate: Generate) -> None:
    """spanish_quality: one piece each way, so the king on 11 must be taken (landing 7 or 4)."""
    v = SPANISH
    assert_moves(
        generate, v, "W:W20,K14,5:B21,17,K11,6", {capture(v, "14", "7", "11"), capture(v, "14", "4", "11")}
    )


def test_italian_most_pieces_first(generate: Generate) -> None:
    """FID 6.6 (rule_6.6): the man takes three (31x6) and beats the king taking two (21x5)."""
    v = ITALIAN
    assert_moves(generate, v, "W:WK21,31:B10,18,27", {capture(v, "31", "6", "27 18 10")})


def test_italian_king_must_capture_before_a_man(generate: Generate) -> None:
    """FID 6.7 (rule_6.7): king 23x30x21 and man 31x22x15 take two each; the king must."""
    v = ITALIAN
    assert_moves(generate, v, "W:WK23,31:B19,26,27", {capture(v, "23", "21", "27 26")})


def test_italian_most_kings(generate: Generate) -> None:
    """FID 6.8 (rule_6.8): one piece either way; taking the king on 28 is compulsory."""
    v = ITALIAN
    assert_moves(generate, v, "W:WK23:B19,K28", {capture(v, "23", "32", "28")})


def test_italian_king_met_earliest(generate: Generate) -> None:
    """FID 6.9 (rule_6.9): both take three with one king; 30x5 meets it first, 30x7 second."""
    v = ITALIAN
    assert_moves(generate, v, "W:WK30:B10,12,18,K20,K26,27", {capture(v, "30", "5", "26 18 10")})


def test_italian_king_met_earliest_compared_king_by_king(generate: Generate) -> None:
    """'Alioto': both take two kings first; 30x5 takes its second king 2nd, 30x7 only 3rd."""
    v = ITALIAN
    assert_moves(generate, v, "W:WK30:B10,K12,K18,20,K26,K27", {capture(v, "30", "5", "26 18 10")})


def test_italian_free_choice_when_all_else_is_equal(generate: Generate) -> None:
    """FID 6.10 (rule_6.10): a king first and a man second either way: both legal."""
    v = ITALIAN
    assert_moves(
        generate,
        v,
        "W:WK31:B18,20,K27,K28",
        {capture(v, "31", "13", "27 18"), capture(v, "31", "15", "28 20")},
    )


def test_italian_man_cannot_capture_a_king(generate: Generate) -> None:
    """FID 5.3b: the man on 32 faces a king on 28 and has no move at all."""
    assert_moves(generate, ITALIAN, "W:W32:BK28", set())


def test_italian_man_blocked_by_king_moves_the_other_way(generate: Generate) -> None:
    """FID 5.3b: the man on 30 may not take the king on 26, so 30-27 is its only move."""
    v = ITALIAN
    assert_moves(generate, v, "W:W30:BK26", {step(v, "30", "27")})


def test_italian_king_may_capture_a_king(generate: Generate) -> None:
    v = ITALIAN
    assert_moves(generate, v, "W:WK30:BK26", {capture(v, "30", "21", "26")})


# ---------------------------------------------------------------------------------------------
# The "no forced capture" house rule


def test_no_forced_capture_adds_quiet_moves(generate: Generate) -> None:
    v = ENGLISH.with_forced_capture(False)
    assert_moves(generate, v, "W:W22:B18", {capture(v, "22", "15", "18"), step(v, "22", "17")})


def test_no_forced_capture_keeps_the_precedence_among_captures(generate: Generate) -> None:
    """Brazilian house rule: the quantity rule still rules out c3xe5, but quiet moves are legal."""
    v = BRAZILIAN.with_forced_capture(False)
    assert_moves(
        generate,
        v,
        "W:Wc3,e3:Bd4,b6",
        {capture(v, "e3", "a7", "d4 b6"), step(v, "c3", "b4"), step(v, "e3", "f4")},
    )


def test_no_forced_capture_does_not_exist_on_10x10() -> None:
    with pytest.raises(ValueError):
        INTERNATIONAL.with_forced_capture(False)


# ---------------------------------------------------------------------------------------------
# The reference's own play()


def test_play_removes_captured_pieces_and_crowns() -> None:
    v = RUSSIAN
    position = parse_fen(v, "W:Wb6,e3,g1:Bc7,e7,b4,h6")
    (move,) = [m for m in reference.legal_moves(v, position) if m.destination == parse_square(v, "g5")]
    assert move.path == tuple(parse_square(v, s) for s in ("b6", "d8", "g5"))
    assert reference.play(v, position, move) == parse_fen(v, "B:WKg5,e3,g1:Bb4,h6")


# ---------------------------------------------------------------------------------------------
# Paths



#: rule-test positions, walked two plies deep for the path test
RULE_POSITIONS: list[tuple[Variant, str]] = [
    (ENGLISH, "W:WK21:B17,18,25,26"),
    (RUSSIAN, "W:WKa3:Bb2,b4,d2,d4,e7"),
    (RUSSIAN, "W:Wb6,e3,g1:Bc7,e7,b4,h6"),
    (RUSSIAN, "W:Wb6,c3,e1:Bc7,e7,h6,f4,a7"),
    (BRAZILIAN, "W:Wb6,c3,e1:Bc7,e7,h6,f4,a7"),
    (CZECH, "W:WKg5,a3,f2,e1:Bg7,b2,d2"),
    (SPANISH, "W:W20,K14,5:B18,26,17,K11,6"),
    (ITALIAN, "W:WK30:B10,K12,K18,20,K26,K27"),
    (INTERNATIONAL, "W:W15:B9,10"),
    (ENGLISH.with_forced_capture(False), "W:W22:B18"),
]


def _path_positions() -> list[tuple[Variant, Position]]:
    """The start and rule positions of every rule set and everything two plies below them."""
    names = {v.name for v in VARIANTS}
    with PERFT_JSON.open(encoding="utf-8") as f:
        roots = {(e["variant"], e["fen"]) for e in json.load(f) if e["variant"] in names}
    by_name = {v.name: v for v in VARIANTS}
    starts = [(by_name[name], fen) for name, fen in sorted(roots)] + RULE_POSITIONS
    positions: list[tuple[Variant, Position]] = []
    for variant, fen in starts:
        frontier = [parse_fen(variant, fen)]
        for _ in range(3):
            positions += [(variant, p) for p in frontier]
            frontier = [reference.play(variant, p, m) for p in frontier for m in reference.legal_moves(variant, p)]
    return positions


def _line(variant: Variant, a: int, b: int) -> list[int]:
    """The squares strictly between a and b, which must share a diagonal."""
    (r0, c0), (r1, c1) = row_col(variant.size, a), row_col(variant.size, b)
    distance = abs(r1 - r0)
    assert distance > 0 and abs(c1 - c0) == distance, "a step must follow a diagonal"
    dr, dc = (r1 - r0) // distance, (c1 - c0) // distance
    return [square_at(variant.size, r0 + i * dr, c0 + i * dc) for i in range(1, distance)]


def _check_path(variant: Variant, position: Position, move: tuple) -> None:
    origin, destination, captured, path, promotes = move
    white = position.white_to_move
    king = bool(position.kings >> origin & 1)
    occupied = position.occupied & ~(1 << origin)  # the mover's start square counts as empty
    enemies = position.pieces(not white)
    forward = -1 if white else 1
    far_row = 0 if white else variant.size - 1
    assert path[0] == origin and path[-1] == destination
    assert not occupied >> destination & 1
    if not captured:
        assert len(path) == 2
        between = _line(variant, origin, destination)
        assert not any(occupied >> s & 1 for s in between)
        if not (king and variant.flying_kings):
            assert not between, "a man or short king steps one square"
        if not king:
            assert row_col(variant.size, destination)[0] - row_col(variant.size, origin)[0] == forward
        return
    jumped = 0
    for a, b in zip(path, path[1:]):
        between = _line(variant, a, b)
        pieces = [s for s in between if occupied >> s & 1]
        assert len(pieces) == 1, "each jump passes exactly one piece"
        victim = pieces[0]
        assert enemies >> victim & 1 and captured >> victim & 1 and not jumped >> victim & 1
        assert not occupied >> b & 1, "a jump lands on an empty square"
        if not (king and variant.flying_kings):
            assert len(between) == 1, "a man or short king jumps an adjacent piece"
        if not king and not variant.men_capture_backwards:
            assert row_col(variant.size, b)[0] - row_col(variant.size, a)[0] == 2 * forward
        jumped |= 1 << victim
        reaches_far_row = row_col(variant.size, b)[0] == far_row
        if reaches_far_row and variant.capture_promotion == CapturePromotion.CONTINUE_AS_KING:
            king = True
    assert jumped == captured


def test_every_path_is_a_chain_of_legal_steps_and_jumps(generate: Generate) -> None:
    checked = 0
    for variant, position in _path_positions():
        for move in generate(variant, position):
            _check_path(variant, position, move)
            checked += 1
    assert checked > 5_000
