"""Property tests (hypothesis) of the engine's parsers of outside input: FEN, Hub positions,
move text in every notation, and PDN games.

* Valid input round-trips exactly: positions and games are made by playing (engine.Board),
  written, read back and compared.
* Any input (random text, and valid input with random edits) is read or refused with one of the
  documented errors (engine.errors, PdnError), never another exception, never a hang (each
  example has a deadline: tests/property_strategies.py).
* A refused input changes nothing: Board.push of a bad move leaves the board as it was.
"""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine import Board
from engine.errors import (AmbiguousMoveError, DamkaError, IllegalMoveError, InvalidFenError,
                           InvalidMoveError)
from engine.fen import parse_fen, write_fen
from engine.game import Comment, Game, Line, LineMove, Notes, Termination
from engine.move import Move
from engine.notation import parse_hub_position, write_hub_position
from engine.pdn import PdnError, read_games, write_game
from engine.squares import square_name
from protocol.hub import pydraughts
from property_strategies import (ALL_VARIANTS, boards_with_moves, mutations, placements,
                                 played_boards, positions, profile, text_or_mutation, variants)

MOVE_ERRORS = (InvalidMoveError, IllegalMoveError, AmbiguousMoveError)
FEN_ALPHABET = "WBK:,-.0123456789abcdefghij \"[]FENwbk"
MOVE_ALPHABET = "0123456789abcdefghijABCDEFGH-xX:×!?*+# K.\t"


def _state(board: Board):
    return board.position, list(board.move_stack), board.fen(), len(board.legal_moves)


# -- FEN --------------------------------------------------------------------------------------


@profile(150)
@given(st.data(), variants, st.booleans())
def test_fen_round_trips_in_every_rule_set(data, variant, compact):
    position = data.draw(positions(variant))
    fen = write_fen(variant, position, compact=compact)
    assert parse_fen(variant, fen) == position
    # and the text itself is a fixed point (what Board writes is what it read)
    assert Board(variant, fen).fen(compact=compact) == fen
    assert parse_fen(variant, f'[FEN "{fen}"]') == position


@profile(150)
@given(st.data(), variants)
def test_any_fen_text_is_read_or_refused_with_invalid_fen_error(data, variant):
    valid = st.builds(lambda p, c: write_fen(variant, p, c), placements(variant), st.booleans())
    text = data.draw(text_or_mutation(valid, FEN_ALPHABET, 120))
    try:
        position = parse_fen(variant, text)
    except InvalidFenError:
        with pytest.raises(InvalidFenError):
            Board(variant, text)
        return
    # what was read writes a FEN that reads back the same
    assert parse_fen(variant, write_fen(variant, position)) == position


# -- Hub positions --------------------------------------------------------------------------


@profile(100)
@given(st.data(), variants)
def test_hub_position_round_trips(data, variant):
    position = data.draw(positions(variant))
    text = write_hub_position(variant, position)
    assert len(text) == variant.squares + 1
    assert parse_hub_position(variant, text) == position
    assert Board.from_hub(variant, text).position == position


@profile(150)
@given(st.data(), variants, st.booleans())
def test_any_hub_position_text_is_read_or_refused(data, variant, compat):
    valid = placements(variant).map(lambda p: write_hub_position(variant, p))
    text = data.draw(text_or_mutation(valid, "WBwbeWBx \t", 60))
    try:
        position = pydraughts.read_position(variant, text, compat)
    except InvalidFenError:
        return
    if not compat:
        assert parse_hub_position(variant, write_hub_position(variant, position)) == position


# -- moves in every notation ------------------------------------------------------------------


def _move_texts(board: Board, move: Move, rng: random.Random) -> list[str]:
    """Every form a program may write this move in: our PDN, the full path, the Hub form
    (English numbers in the algebraic sets) with its captured squares in any order, and the
    Hub form in the set's own square names; with annotation marks and the other separators."""
    v = board.variant
    texts = [board.pdn(move), move.pdn_long(v), move.hub(v), board.pdn(move) + "!?"]
    if move.is_capture:
        hub = move.hub(v).split("x")
        taken = hub[2:]
        rng.shuffle(taken)
        texts.append("x".join(hub[:2] + taken))
        texts.append("X".join(square_name(v, s) for s in move.path))
        texts.append(":".join(square_name(v, s) for s in move.path))
    return texts


@profile(120)
@given(st.data(), variants, st.randoms(use_true_random=False))
def test_every_legal_move_reads_back_from_every_notation(data, variant, rng):
    board = data.draw(boards_with_moves(variant))
    legal = list(board.legal_moves)
    for move in rng.sample(legal, min(len(legal), 6)):
        for text in _move_texts(board, move, rng):
            try:
                got = board.parse_move(text)
            except AmbiguousMoveError as exc:
                # only a short form may be ambiguous, and then the move is one candidate
                assert move in exc.moves and text.count("x") + text.count(":") <= 1, text
                continue
            assert got == move, (variant.name, board.fen(), text)
        # the Hub client's numbering (pydraughts' own for Russian/Brazilian 8x8) round-trips
        for compat in (False, True):
            written = pydraughts.write_move(variant, move, compat)
            assert board.parse_move(pydraughts.read_move(variant, written, compat)) == move


@profile(120)
@given(st.data(), variants)
def test_pdn_of_a_game_replays_move_by_move(data, variant):
    """What Board.pdn writes for each move of a random game reads back as that move."""
    board = data.draw(played_boards(variant, 80))
    replay = Board(variant)
    for move in board.move_stack:
        assert replay.push(replay.pdn(move)) == move
    assert replay.position == board.position


def _move_text_strategy(board: Board) -> st.SearchStrategy[str]:
    legal = list(board.legal_moves)
    v = board.variant
    forms = [board.pdn(m) for m in legal] + [m.hub(v) for m in legal] or ["1-2"]
    return text_or_mutation(st.sampled_from(forms), MOVE_ALPHABET, 40)


@profile(250)
@given(st.data(), variants)
def test_any_move_text_is_read_or_refused_and_a_refused_move_changes_nothing(data, variant):
    board = data.draw(boards_with_moves(variant))
    text = data.draw(_move_text_strategy(board))
    before = _state(board)
    try:
        move = board.push(text)
    except MOVE_ERRORS as exc:
        assert _state(board) == before
        assert isinstance(exc, DamkaError) and isinstance(exc, ValueError)
        assert text not in board.legal_moves
        return
    assert move in list(Board(variant, before[0]).legal_moves)
    assert board.move_stack[-1] == move
    board.pop()
    assert _state(board) == before


@profile(150)
@given(st.data(), variants)
def test_a_move_object_that_is_not_legal_changes_nothing(data, variant):
    board = data.draw(boards_with_moves(variant))
    n = variant.squares
    square = st.integers(0, n - 1)
    path = data.draw(st.lists(square, min_size=2, max_size=6))
    captured = data.draw(st.lists(square, max_size=4, unique=True))
    move = Move(path[0], path[-1], tuple(path), tuple(captured), data.draw(st.booleans()))
    before = _state(board)
    legal = list(board.legal_moves)
    equivalent = [m for m in legal if (m.origin, m.destination, m.captured, m.promotes)
                  == (move.origin, move.destination, move.captured, move.promotes)]
    if equivalent:
        assert board.push(move) == equivalent[0]
        return
    with pytest.raises(IllegalMoveError):
        board.push(move)
    assert _state(board) == before


# -- PDN -------------------------------------------------------------------------------------

TAG_NAMES = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True).filter(
    lambda name: name not in ("Result", "GameType", "FEN", "Termination"))
#: tag values: any text (the writer escapes \ and ")
TAG_VALUES = st.text(max_size=20)
#: comment text: anything but '}', which the writer must turn into ')' (a comment ends there)
COMMENTS = st.text(max_size=30).filter(lambda t: "}" not in t).map(Comment)
NAGS = st.tuples(st.sampled_from(["", "!", "?", "!!", "??", "!?", "?!"]),
                 st.lists(st.integers(0, 255).map(lambda n: f"${n}"), max_size=2)).map(
    lambda t: ([t[0]] if t[0] else []) + t[1])
LINE_RESULTS = st.sampled_from([None, None, "*", "2-0", "1-0", "1/2-1/2", "0-1"])


@st.composite
def variations(draw, board: Board, depth: int = 0) -> Line:
    """A variation from ``board``'s position (moves kept as written: played at random)."""
    walk = board.copy(stack=False)
    line = Line(before=draw(st.lists(COMMENTS, max_size=1)), result=draw(LINE_RESULTS))
    for _ in range(draw(st.integers(1, 4))):
        legal = list(walk.legal_moves)
        if not legal:
            break
        move = legal[draw(st.integers(0, len(legal) - 1))]
        notes = Notes(nags=draw(NAGS))
        for _ in range(draw(st.integers(0, 2))):
            if depth < 2 and draw(st.booleans()):
                notes.after.append(draw(variations(walk, depth + 1)))
            else:
                notes.after.append(draw(COMMENTS))
        line.moves.append(LineMove(walk.pdn(move), notes))
        walk.push(move)
    if not line.moves:
        line.result = None  # a variation needs a move for its result to be its own
    return line


@st.composite
def games(draw, variant) -> Game:
    """A game of random moves with tags, comments, NAGs, variations and maybe an outcome."""
    start = draw(played_boards(variant, 20)).position if draw(st.booleans()) else None
    tags = draw(st.dictionaries(TAG_NAMES, TAG_VALUES, max_size=5))
    game = Game(variant, start, tags)
    game.intro.extend(draw(st.lists(COMMENTS, max_size=2)))
    for _ in range(draw(st.integers(0, 30))):
        legal = list(game.board.legal_moves)
        if not legal:
            break
        before = game.board.copy(stack=False)
        game.push(legal[draw(st.integers(0, len(legal) - 1))])
        notes = game.notes[-1]
        notes.nags.extend(draw(NAGS))
        for _ in range(draw(st.integers(0, 2))):
            if draw(st.booleans()):
                notes.after.append(draw(variations(before)))
            else:
                notes.after.append(draw(COMMENTS))
    if game.rules_outcome() is None and draw(st.booleans()):
        termination = draw(st.sampled_from(
            [None] + [t for t in Termination if not t.by_rules]))
        game.end(draw(st.sampled_from([True, False, None])), termination)
    return game


def _same_game(read: Game, game: Game) -> None:
    assert read.variant == game.variant
    assert read.start == game.start
    assert read.moves == game.moves
    assert {k: v for k, v in read.tags.items() if k not in ("Result", "GameType", "FEN",
                                                            "Termination")} == game.tags
    assert read.intro == game.intro
    assert read.notes == game.notes
    assert read.outcome() == game.outcome()


@profile(40)
@given(st.data(), variants, st.integers(1, 100), st.booleans())
def test_pdn_game_round_trips_exactly(data, variant, width, renumber):
    game = data.draw(games(variant))
    text = write_game(game, width=width, renumber=renumber)
    (read,) = list(read_games(io.StringIO(text), variant))
    _same_game(read, game)
    assert write_game(read, width=width, renumber=renumber) == text
    # without its comments and variations: the same game bar those
    (bare,) = list(read_games(io.StringIO(write_game(game, comments=False)), variant))
    assert bare.moves == game.moves and bare.outcome() == game.outcome()
    assert [n.nags for n in bare.notes] == [n.nags for n in game.notes]
    assert bare.intro == [] and not any(n.after for n in bare.notes)


@profile(10)
@given(st.data(), st.lists(variants, min_size=2, max_size=4))
def test_pdn_file_of_several_games_reads_every_game_in_order(data, chosen):
    # one rule set per file where the house rule is in play (GameType cannot say it)
    default = chosen[0]
    chosen = [v if v.forced_capture else default for v in chosen]
    if not default.forced_capture:
        chosen = [default] * len(chosen)
    played = [data.draw(games(v)) for v in chosen]
    text = "\n".join(write_game(g) for g in played)
    read = list(read_games(io.StringIO(text), default))
    assert len(read) == len(played)
    for r, g in zip(read, played):
        _same_game(r, g)


PDN_ALPHABET = '0123456789-x:. {}()[]"\\;%$!?*/½\nabcdefghWBK\t'


@profile(40)
@given(st.data(), variants)
def test_any_pdn_text_is_read_or_refused_with_pdn_error(data, variant):
    valid = games(variant).map(write_game)
    text = data.draw(text_or_mutation(valid, PDN_ALPHABET, 300))
    try:
        read = list(read_games(io.StringIO(text), variant))
    except PdnError as exc:
        assert exc.game is None or exc.game >= 1
        return
    for game in read:
        # what was read writes PDN that reads back the same
        (again,) = list(read_games(io.StringIO(write_game(game)), game.variant))
        assert again.moves == game.moves and again.outcome() == game.outcome()
