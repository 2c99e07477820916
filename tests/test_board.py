"""Board: making and taking back moves on the masks, copies, the lazy legal-move view, game end."""

from __future__ import annotations

import random

import pytest

import engine
from engine import (
    VARIANTS,
    AmbiguousMoveError,
    Board,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Move,
    Outcome,
    Position,
    Termination,
    UnknownVariantError,
    get_variant,
)
from engine import _core

VARIANT_IDS = [v.name for v in VARIANTS]


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_push_pop_restore_the_exact_position(variant):
    rng = random.Random(f"board-{variant.name}")
    for _ in range(6):
        board = Board(variant)
        history = []
        while len(history) < 150:
            moves = list(board.legal_moves)
            if not moves:
                break
            history.append((board.position, board.fen(), moves))
            played = board.push(rng.choice(moves))
            assert board.peek() == played and board.move_stack[-1] == played
            assert board.white_to_move != history[-1][0].white_to_move
            assert not (board.position.white & board.position.black)
            assert board.position.kings & ~(board.position.white | board.position.black) == 0
        while history:
            position, fen, moves = history.pop()
            played = board.pop()
            assert played in moves
            assert board.position == position and board.fen() == fen
            assert list(board.legal_moves) == moves
        assert board.move_stack == []
        assert board.position == Board(variant).position


def test_making_a_move_by_hand():
    b = Board()
    b.push("32-28")
    assert b.fen(compact=True) == "B:W28,31,33-50:B1-20"
    b.push("19-23")
    move = b.push("28x19")
    assert move.captured == (22,)  # square 23
    assert b.fen(compact=True) == "B:W19,31,33-50:B1-18,20"
    assert len(b.move_stack) == 3


def test_promotion_and_kings_keep_their_status():
    b = Board("international", "W:W6,K50:B15")
    move = b.push("6-1")
    assert move.promotes
    assert b.fen() == "B:WK1,K50:B15"
    b.push("15-20")
    b.push("1-23")  # a flying king keeps being a king
    assert b.fen() == "B:WK23,K50:B20"


def test_capture_removes_kings_from_the_king_mask():
    b = Board("international", "W:W33:BK28,18")
    b.push("33x13")
    assert b.position == Position(1 << 12, 0, 0, False)
    assert b.is_game_over() and b.outcome() == Outcome("2-0", True, Termination.NO_PIECES)


def test_english_crowning_ends_the_move():
    # the man on 11 jumps 7 and is crowned on 2; as a king it could go on over 6, but may not
    b = Board("english", "W:W11:B6,7")
    assert [b.pdn(m) for m in b.legal_moves] == ["11x2"]
    move = b.push("11x2")
    assert move.promotes and move.path == (10, 1) and move.captured == (6,)
    assert b.fen() == "B:WK2:B6"


def test_pop_on_an_empty_stack():
    with pytest.raises(IndexError):
        Board().pop()


def test_illegal_and_ambiguous_pushes_leave_the_board_alone():
    b = Board("english", "W:W26:B14,15,22,23")
    before = (b.position, list(b.move_stack))
    with pytest.raises(AmbiguousMoveError):
        b.push("26x10")
    with pytest.raises(IllegalMoveError):
        b.push("26-22")
    with pytest.raises(IllegalMoveError):
        b.push(Move(25, 21))
    with pytest.raises(IllegalMoveError):
        b.push(Move(25, 99))
    with pytest.raises(InvalidMoveError):
        b.push("nonsense")
    assert (b.position, b.move_stack) == before
    assert b.push_text("26x17x10").captured == (13, 21)


def test_push_accepts_a_move_along_another_route_as_the_merged_move():
    b = Board("english", "W:W26:B14,15,22,23")
    move = b.parse_move("26x17x10")
    again = Move(move.origin, move.destination, (move.origin, move.destination), move.captured)
    assert b.push(again) == move


def test_copy_is_independent():
    a = Board()
    a.push("32-28")
    b = a.copy()
    assert b == a and b is not a and b.move_stack == a.move_stack
    b.push("19-23")
    assert len(a.move_stack) == 1 and a.position != b.position
    a.pop()
    assert len(b.move_stack) == 2
    assert b.pop() and b.pop() and b.position == a.position
    c = a.copy(stack=False)
    assert c.move_stack == []


def test_legal_moves_are_lazy_and_computed_once_per_position(monkeypatch):
    calls = []
    real = _core.generate

    def counting(variant, position):
        calls.append(position)
        return real(variant, position)

    monkeypatch.setattr(_core, "generate", counting)
    b = Board()
    view = b.legal_moves
    assert calls == []
    assert len(view) == 9
    assert bool(view) and Move(31, 27) in view and "32-28" in view and "32-29" not in view
    assert len(list(view)) == 9
    assert len(calls) == 1
    b.push("32-28")
    assert len(calls) == 1  # nothing generated until asked
    assert len(view) == 9  # the view is live: Black's nine moves now
    assert all(b.position.black >> m.origin & 1 for m in view)
    assert len(calls) == 2
    b.pop()
    assert len(b.legal_moves) == 9 and len(calls) == 2  # the old list comes back with pop


def test_legal_moves_view_when_there_are_none():
    b = Board("international", "W:W46:B41,37")  # the man on 46 is blocked
    assert len(b.legal_moves) == 0
    assert not b.legal_moves and list(b.legal_moves) == []
    assert b.is_game_over()
    assert b.outcome() == Outcome("0-2", False, Termination.NO_MOVES)  # the Game's Outcome


def test_no_pieces_left_is_a_loss():
    b = Board("russian", "B:Wc3:B")
    assert b.is_game_over() and b.outcome().winner is True
    assert b.outcome() == Outcome("1-0", True, Termination.NO_PIECES)  # 8x8 scoring


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_start_position_is_not_over(variant):
    b = Board(variant)
    assert not b.is_game_over() and b.outcome() is None
    assert b.turn == b.white_to_move == variant.white_starts


def test_house_rule_board():
    forced = Board("russian", "W:Wc3:Bd4")
    free = Board("russian-nocapture", "W:Wc3:Bd4")
    assert [forced.pdn(m) for m in forced.legal_moves] == ["c3:e5"]
    assert sorted(free.pdn(m) for m in free.legal_moves) == ["c3-b4", "c3:e5"]
    assert free.variant == get_variant("russian", forced_capture=False)
    assert eval(repr(free), vars(engine)) == free


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_repr_pastes_back(variant):
    b = Board(variant)
    for move in list(b.legal_moves)[:1]:
        b.push(move)
        assert eval(repr(move), vars(engine)) == move
    again = eval(repr(b), vars(engine))
    assert again == b and again.fen() == b.fen()


def test_variant_names_and_bad_input():
    assert Board("10x10").variant is Board().variant
    assert Board("Checkers").variant is get_variant("english")
    assert Board(get_variant("czech")).variant.name == "czech"
    with pytest.raises(UnknownVariantError):
        Board("chess")
    with pytest.raises(InvalidFenError):
        Board("international", "W:W51")


def test_str_draws_the_board():
    text = str(Board())
    lines = text.splitlines()
    assert len(lines) == 10
    assert text.count("b") == 20 and text.count("w") == 20 and text.count(".") == 10
    assert lines[0].split() == ["b"] * 5 and lines[0].startswith(" ")  # square 1 is the 2nd column
    assert lines[9].startswith("w")  # square 46: bottom left
    # Italian: the near-right corner is dark, square 1 top left (a8)
    italian = str(Board("italian", "W:W32:B1")).splitlines()
    assert italian[0].startswith("b") and italian[7].endswith("w")
    kings = str(Board("russian", "W:WKa1:BKh8")).splitlines()
    assert kings[0].endswith("B") and kings[7].startswith("W")


def test_hub_position_of_the_board():
    b = Board()
    assert b.hub_position() == "W" + "b" * 20 + "e" * 10 + "w" * 20
    b.push("32-28")
    assert Board.from_hub("international", b.hub_position()).position == b.position
