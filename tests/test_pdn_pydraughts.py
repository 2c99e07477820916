"""Our PDN (engine.pdn.write_game) read by pydraughts' reader (draughts.PDN.PDNReader, 0.6.7).

pydraughts drops comments and variations with regular expressions and then numbers the moves
again; a move number written twice (``12.`` and, after a comment, ``12...``) makes it lose its
way: it merges or drops moves, or raises. So a file for pydraughts is written either without
comments (``comments=False``, or a game that has none) or without the ``N...`` numbers after
comments (``renumber=False``); the README's "Games and PDN" says so. Both are read exactly
by our own reader too. pydraughts also misreads any game whose first move is the second
player's (it repeats that move), whatever we write; these tests start from positions where
the first player moves.
"""

from __future__ import annotations

import io
import random

import pytest

from engine.game import Game, Line, LineMove
from engine.pdn import read_game, write_game

draughts_pdn = pytest.importorskip("draughts.PDN", reason="pydraughts is not installed")

#: our rule set -> pydraughts' name of it (from the GameType number)
THEIR_NAMES = {"international": "standard", "english": "english", "russian": "russian",
               "brazilian": "brazilian", "spanish": "spanish", "italian": "italian",
               "czech": "czech"}
#: comments as damka match writes them, and others that pydraughts' expressions survive
COMMENTS = ["+0.25/12 0.81s", "-1.00/9 0.10s", "book", "a (sharp) line", "#3/5 0.02s"]


def _game(variant: str, seed: int, plies: int = 50, comments: float = 0.0,
          variations: bool = False) -> tuple[Game, list[str]]:
    """A random legal game with some tags; a comment after a share of its moves."""
    rng = random.Random(seed)
    game = Game(variant, None, {"Event": f"test {seed}", "White": "damka", "Black": "other"})
    texts = []
    for _ in range(plies):
        legal = list(game.board.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        texts.append(game.board.pdn(move))
        game.push(move)
        if rng.random() < comments:
            game.add_comment(rng.choice(COMMENTS))
        if variations and rng.random() < 0.2:
            game.notes[-1].after.append(Line([LineMove(texts[-1]), LineMove(texts[-1])]))
    return game, texts


def _pydraughts_read(text: str):
    (their,) = draughts_pdn.PDNReader(pdn_text=text).games
    return their


@pytest.mark.parametrize("variant", sorted(THEIR_NAMES))
def test_pydraughts_reads_a_game_without_comments(variant):
    game, texts = _game(variant, seed=len(variant))
    text = write_game(game)
    their = _pydraughts_read(text)
    assert their.moves == texts
    assert their.variant == THEIR_NAMES[variant]
    assert their.tags["Event"] == game.tags["Event"] and their.tags["White"] == "damka"
    assert their.game_ending == game.result


@pytest.mark.parametrize("variant", ["international", "english", "russian", "italian"])
@pytest.mark.parametrize("seed", range(3))
def test_pydraughts_reads_comments_written_without_repeated_numbers(variant, seed):
    game, texts = _game(variant, seed, comments=0.5, variations=True)
    text = write_game(game, renumber=False)
    assert _pydraughts_read(text).moves == texts
    # and our reader reads it back exactly: comments, variations and all
    again = read_game(io.StringIO(text), variant)
    assert again.moves == game.moves and again.notes == game.notes
    assert write_game(again, renumber=False) == text


@pytest.mark.parametrize("variant", ["international", "english", "russian", "italian"])
@pytest.mark.parametrize("seed", range(3))
def test_pydraughts_reads_a_game_written_without_its_comments(variant, seed):
    game, texts = _game(variant, seed, comments=0.5, variations=True)
    text = write_game(game, comments=False)
    assert "{" not in text and "(" not in text
    assert _pydraughts_read(text).moves == texts
    again = read_game(io.StringIO(text), variant)
    assert again.moves == game.moves
    assert [n.nags for n in again.notes] == [n.nags for n in game.notes]


def test_pydraughts_misreads_our_default_numbers_after_comments():
    """Why the options exist: with ``12...`` after each comment pydraughts loses moves (or
    raises). If a later pydraughts reads this, the README's advice can be relaxed."""
    game, texts = _game("international", seed=1, comments=0.5)
    text = write_game(game)
    assert "..." in text
    try:
        moves = _pydraughts_read(text).moves
    except ValueError:
        return
    assert moves != texts


def test_pydraughts_replays_what_it_read_as_legal_moves():
    """The international moves pydraughts reads from our file are legal on its own board and
    lead to the position we reach."""
    import draughts

    game, texts = _game("international", seed=7, plies=24, comments=0.4)
    their = _pydraughts_read(write_game(game, renumber=False))
    board = draughts.Board("standard")
    for text in their.moves:
        board.push(draughts.Move(board, pdn_move=text))
    ours = game.board.position
    theirs = Game("international", board.fen).board.position
    assert theirs == ours
