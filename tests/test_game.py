"""Game records: every draw rule fires exactly at its threshold (one ply before: play goes on),
repetition counts only the same side to move, losses, results per rule set, external ends."""

from __future__ import annotations

import random

import pytest

from engine.board import Board
from engine.game import Game, GameOverError, Outcome, Termination, parse_result, result_text
from engine.variants import get_variant


def walk(game: Game, plies: int, allowed, seed: int = 1, final=None) -> Game:
    """Extend ``game`` by ``plies`` moves that ``allowed(game, move)`` accepts, never repeating a
    position and ending where the side to move has a move that ``final`` accepts (default any
    move): a depth-first search."""
    rng = random.Random(seed)
    seen = set(game.positions)

    def search(n: int) -> bool:
        if n == 0:
            return any((final or allowed)(game, m) for m in game.board.legal_moves)
        moves = list(game.board.legal_moves)
        rng.shuffle(moves)
        for move in moves:
            if not allowed(game, move):
                continue
            game.push(move)
            position = game.board.position
            if position not in seen:
                seen.add(position)
                if search(n - 1):
                    return True
                seen.discard(position)
            game.pop()
        return False

    assert search(plies), "no such line from this position"
    return game


def king_move(game: Game, move) -> bool:
    return not move.captured and bool(game.board.position.kings >> move.origin & 1)


def no_capture(game: Game, move) -> bool:
    return not move.captured


def quiet(game: Game, move) -> bool:
    return not move.captured and not move.promotes


def assert_fires_at(game: Game, plies: int, termination: Termination) -> None:
    """The rule ends the game after exactly ``plies`` moves from the start, not one before."""
    assert game.ply == plies
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is termination
    assert outcome.winner is None and outcome.result == result_text(game.variant, None)
    game.pop()
    for ply in range(plies - 1, -1, -1):
        assert game.outcome() is None, f"ended early, after {ply} plies"
        if ply:
            game.pop()


# -- the draw rules at their thresholds ---------------------------------------------------------


def test_25_move_king_rule_fires_at_the_50th_ply():
    game = walk(Game("international", "W:WK46,K50,48,49:BK1,K5,2,3"), 50, king_move)
    assert game.counters.reversible == 50
    assert_fires_at(game, 50, Termination.KING_MOVES)


def test_a_man_move_restarts_the_king_count():
    def man_move(game, move):
        return not move.captured and not game.board.position.kings >> move.origin & 1

    game = walk(Game("international", "W:WK46,K50,48,49:BK1,K5,2,3"), 48, king_move,
                final=man_move)
    assert game.counters.reversible == 48
    game.push(next(m for m in game.board.legal_moves if man_move(game, m)))
    assert game.counters.reversible == 0
    walk(game, 2, king_move)
    assert game.ply == 51 and game.counters.reversible == 2
    assert game.outcome() is None


def test_16_move_endgame_rule_three_pieces_with_a_king_against_a_lone_king():
    game = walk(Game("international", "W:WK46,36,37:BK5"), 32, no_capture)
    assert_fires_at(game, 32, Termination.ENDGAME_16)


def test_16_move_rule_with_three_kings():
    game = walk(Game("international", "W:WK46,K47,K48:BK3"), 32, no_capture, seed=2)
    assert_fires_at(game, 32, Termination.ENDGAME_16)


@pytest.mark.parametrize("fen", ["W:WK47,K49:BK3", "W:WK47,36:BK3", "B:WK47:BK3"])
def test_5_move_endgame_rule(fen):
    game = walk(Game("international", fen), 10, no_capture)
    assert_fires_at(game, 10, Termination.ENDGAME_5)


def test_the_endgame_count_restarts_when_the_material_changes():
    # lone black king takes one of three white pieces: the 5-move rule starts from there
    game = Game("international", "B:WK50,10,45:BK5")
    assert game.board.parse_move("5x23").captured
    game.push("5x23")
    assert game.counters.endgame == 0
    walk(game, 10, no_capture)
    assert game.ply == 11
    assert game.outcome().termination is Termination.ENDGAME_5
    game.pop()
    assert game.outcome() is None


def test_three_men_without_a_king_do_not_start_the_endgame_rules():
    game = walk(Game("international", "W:W36,37,38:BK5"), 40, no_capture)
    assert game.outcome() is None


@pytest.mark.parametrize(
    "variant, fen",
    [
        ("english", "B:WK29,K30,25,26:BK1,K2,9,10"),
        ("russian", "W:WKa1,Kc1,e3,g3:BKb8,Kh8,b6,d6"),
        ("italian", "W:WK29,K30,25,26:BK1,K2,9,10"),
    ],
)
def test_8x8_40_move_rule_fires_at_the_80th_ply(variant, fen):
    game = walk(Game(variant, fen), 80, quiet)
    assert game.counters.no_progress == 80
    assert_fires_at(game, 80, Termination.NO_PROGRESS)


def test_8x8_rule_counts_man_moves_but_not_captures():
    game = Game("english")
    for text in ("11-15", "22-18"):
        game.push(text)
    assert game.counters.no_progress == 2
    game.push("15x22")
    assert game.counters.no_progress == 0


def test_international_has_no_40_move_rule():
    game = walk(Game("international", "W:WK46,K50,48,49:BK1,K5,2,3"), 49, king_move)
    assert get_variant("international").draws.no_progress is None
    assert game.outcome() is None


def shuffle(game: Game, texts: list[str], times: int) -> None:
    for _ in range(times):
        for text in texts:
            game.push(text)


def test_threefold_repetition_at_the_third_occurrence():
    game = Game("international", "W:WK46,48,49:BK1,2,3")
    shuffle(game, ["46-41", "1-6", "41-46", "6-1"], 2)
    assert_fires_at(game, 8, Termination.REPETITION)


def test_repetition_needs_the_same_side_to_move():
    # White's king goes round 46-41-37-46 in three moves, Black's shuttles in two: after 12
    # plies the pieces stood three times as at the start, once with Black to move
    game = Game("international", "W:WK46,48,49:BK1,2,3")
    white, black = ["46-41", "41-37", "37-46"], ["1-6", "6-1"]
    for i in range(24):
        game.push(white[(i // 2) % 3] if i % 2 == 0 else black[(i // 2) % 2])
        if i + 1 == 12:
            placements = [p[:3] for p in game.positions]
            assert placements.count(game.board.position[:3]) == 3
            assert game.positions.count(game.board.position) == 2
    assert_fires_at(game, 24, Termination.REPETITION)


def test_repetition_is_counted_only_since_the_last_irreversible_move():
    game = Game("international", "W:WK46,48,49:BK1,2,3")
    shuffle(game, ["46-41", "1-6", "41-46", "6-1"], 1)
    game.push("48-43")
    game.push("2-7")
    shuffle(game, ["46-41", "1-6", "41-46", "6-1"], 1)
    assert game.outcome() is None


# -- losses and results -------------------------------------------------------------------------------


def test_no_legal_move_loses():
    # the white man on 46 is blocked by the black man on 41 and the black king on 37
    game = Game("international", "W:W46:B41,K37,K5")
    assert not game.board.legal_moves
    assert game.outcome() == Outcome("0-2", False, Termination.NO_MOVES)


def test_no_pieces_loses_and_8x8_scoring():
    game = Game("english", "W:W18:B14")
    game.push("18x9")
    assert game.outcome() == Outcome("1-0", True, Termination.NO_PIECES)
    assert game.result == "1-0"


@pytest.mark.parametrize(
    "variant, win, draw, loss",
    [("international", "2-0", "1-1", "0-2")]
    + [(v, "1-0", "1/2-1/2", "0-1") for v in ("english", "russian", "brazilian", "spanish",
                                                 "italian", "czech")],
)
def test_results_per_rule_set(variant, win, draw, loss):
    v = get_variant(variant)
    assert (result_text(v, True), result_text(v, None), result_text(v, False)) == (win, draw, loss)
    assert parse_result(win) is True and parse_result(draw) is None and parse_result(loss) is False


def test_end_records_external_reasons_and_normalises_the_result():
    game = Game("international")
    game.push("32-28")
    outcome = game.end("1-0", Termination.TIME_FORFEIT)
    assert outcome == Outcome("2-0", True, Termination.TIME_FORFEIT)
    assert game.outcome() == outcome and game.result == "2-0"
    assert not Termination.TIME_FORFEIT.by_rules and Termination.REPETITION.by_rules
    with pytest.raises(GameOverError):
        game.push("17-22")
    game.pop()  # taking the move back takes the end back too
    assert game.outcome() is None
    game.end(None, Termination.AGREED_DRAW)
    assert game.result == "1-1"
    game2 = Game("english")
    assert game2.end(False, Termination.CRASH).result == "0-1"
    with pytest.raises(ValueError):
        game2.end("3-0", Termination.ADJUDICATION)


def test_termination_parse_and_text():
    assert Termination.parse("time forfeit") is Termination.TIME_FORFEIT
    assert Termination.parse("ENDGAME_16") is Termination.ENDGAME_16
    assert Termination.parse("normal") is None
    assert str(Termination.MOVE_LIMIT) == "move limit"


def test_from_board_replays_the_move_stack():
    board = Board("russian")
    for text in ("c3-d4", "f6-g5", "g3-f4"):
        board.push(text)
    game = Game.from_board(board, {"Event": "x"})
    assert game.moves == board.move_stack and game.board == board
    assert game.start_fen == Board("russian").fen()
    assert game.counters.no_progress == 3


def test_comments_are_attached_to_moves():
    game = Game("international")
    game.add_comment("before")
    game.push("32-28")
    game.add_comment("after")
    assert game.intro[0].text == "before" and game.notes[0].comments == ["after"]


def test_bad_arguments_are_refused_where_they_are_given():
    """They were accepted and failed later (write_game's AttributeError: the game could not
    be saved), or came out as Python's own IndexError and KeyError."""
    game = Game("international")
    with pytest.raises(TypeError, match="termination is a Termination or None"):
        game.end("2-0", "time forfeit")
    with pytest.raises(TypeError, match="result is PDN text"):
        game.end(5, None)
    with pytest.raises(TypeError, match="a comment is text"):
        game.add_comment(None)
    with pytest.raises(IndexError, match="no move 5 to comment on"):
        game.add_comment("x", 5)
    with pytest.raises(IndexError, match="no move to take back"):
        game.pop()
    with pytest.raises(IndexError, match="no move played yet"):
        Board().peek()
    with pytest.raises(TypeError, match="takes a Move, not str"):
        Board().pdn("32-28")
    assert game.ply == 0 and game.outcome() is None  # nothing was recorded


def test_errors_of_the_api_are_all_damka_errors_and_functions_take_names():
    from engine import DamkaError, parse_fen, parse_hub_position, write_fen, write_hub_position
    from engine.pdn import PdnError, read_game
    from engine.variants import UnknownVariantError

    for error in (GameOverError, PdnError, UnknownVariantError):
        assert issubclass(error, DamkaError)
    with pytest.raises(DamkaError):
        get_variant("no such rules")
    with pytest.raises(DamkaError):
        read_game("1. 32-28 32-28 *")
    position = parse_fen("russian", "W:Wc3:Bd6")
    assert position == parse_fen(get_variant("russian"), "W:Wc3:Bd6")
    assert write_fen("russian", position) == "W:Wc3:Bd6"
    assert parse_hub_position("russian", write_hub_position("russian", position)) == position


def test_a_capture_by_the_lone_king_keeps_the_16_moves_end():
    """FMJD 6.3: when a piece is taken during the 16 moves, their maximum remains valid. The
    count began again as the 5-move rule's, so the game went on up to 5 moves past it."""
    game = walk(Game("international", "W:WK46,K50,28:BK5"), 27, no_capture,
                final=_capture_leaving_quiet_moves)
    assert game.counters.endgame == 27
    game.push(next(m for m in game.board.legal_moves if _capture_leaving_quiet_moves(game, m)))
    walk(game, 4, no_capture)  # 3 against 1 is now 2 against 1
    assert_fires_at(game, 32, Termination.ENDGAME_5)  # the 16 moves' end, not ply 38
    # early in the 16 moves, the capture leaves the full 5 moves of the 5-move rule
    early = walk(Game("international", "W:WK46,K50,28:BK5"), 3, no_capture,
                 final=_capture_leaving_quiet_moves)
    early.push(next(m for m in early.board.legal_moves
                    if _capture_leaving_quiet_moves(early, m)))
    assert early.counters.endgame == 0
    walk(early, 10, no_capture)
    assert_fires_at(early, 14, Termination.ENDGAME_5)


def _capture_leaving_quiet_moves(game: Game, move) -> bool:
    """A capture after which the game goes on for a while: no capture forced in reply, no
    end."""
    if not move.captured:
        return False
    game.push(move)
    try:
        return game.outcome() is None and not any(m.captured for m in game.board.legal_moves)
    finally:
        game.pop()


def test_the_search_sees_the_16_moves_end_after_the_lone_kings_capture():
    """The search's own counters follow the same rule. Black's only move, 39x30, leaves its
    king to be taken: a loss early in the 16 moves, but with one ply of them left the game
    is drawn by the capture (the count began again before, and the search saw the loss)."""
    from engine.draws import DrawCounters
    from engine.search import MATE_THRESHOLD, Engine, Limits

    board = Board("international", "B:WK34,K25,42:BK39")
    assert [board.pdn(m) for m in board.legal_moves] == ["39x30"]
    engine = Engine("international", hash_mb=4)
    early = engine.search(board, Limits(depth=4), counters=DrawCounters(endgame=4))
    assert early.score <= -MATE_THRESHOLD
    engine.clear()
    late = engine.search(board, Limits(depth=4), counters=DrawCounters(endgame=31))
    assert late.score == 0
