"""PDN: round trips that keep tags, comments and variations; GameType decides the rule set;
captures written in full only where needed; errors name the game and the line; a corpus
written by pydraughts' own PDN writer reads back to pydraughts' own final positions."""

from __future__ import annotations

import random
import time

import pytest

from engine.board import Board
from engine.fen import parse_fen
from engine.game import Comment, Game, Termination
from engine.pdn import PdnError, append_game, read_game, read_games, write_game
from protocol.match.openings import OpeningsError, read_openings


def same_game(a: Game, b: Game) -> None:
    assert a.variant == b.variant
    assert a.start == b.start
    assert a.moves == b.moves
    assert a.outcome() == b.outcome()
    assert a.intro == b.intro
    assert a.notes == b.notes
    for name in set(a.tags) | set(b.tags):
        if name not in ("Result", "GameType", "FEN", "Termination"):
            assert a.tags.get(name) == b.tags.get(name), name


def round_trip(game: Game) -> Game:
    text = write_game(game)
    again = read_game(text, game.variant)
    same_game(game, again)
    assert write_game(again) == text  # writing is a fixed point
    return again


ANNOTATED = """\
[Event "Annotated \\"test\\""]
[Site "Utrecht"]
[Date "2024.05.01"]
[Round "3"]
[White "Alpha"]
[Black "Beta"]
[Result "*"]
[Annotator "someone"]

{An opening comment} 1. 32-28 {a comment
over two lines} (1. 33-28 18-23 {inner} (1... 17-21 2. 39-33) 2. 39-33 $2 {after}) 17-22!?
2. 28x17 11x22 $1 3. 37-32 ; a line comment
3... 22-27 (3... 6-11 {a side line} 4. 31-26 *) 4. 31x22 ! {end} *
"""


def test_round_trip_keeps_tags_comments_and_nested_variations():
    game = read_game(ANNOTATED)
    assert game.tags["Event"] == 'Annotated "test"' and game.tags["Annotator"] == "someone"
    assert game.ply == 7 and game.result == "*"
    assert game.intro == [Comment("An opening comment")]
    first = game.notes[0]
    assert first.comments == ["a comment\nover two lines"]
    (variation,) = first.variations
    assert [m.text for m in variation.moves] == ["33-28", "18-23", "39-33"]
    assert variation.moves[1].notes.comments == ["inner"]
    (nested,) = variation.moves[1].notes.variations
    assert [m.text for m in nested.moves] == ["17-21", "39-33"]
    assert variation.moves[2].notes.nags == ["$2"]
    assert game.notes[1].nags == ["!?"] and game.notes[3].nags == ["$1"]
    assert game.notes[4].comments == [" a line comment"]
    assert game.notes[5].variations[0].result == "*"
    assert game.notes[6].nags == ["!"] and game.notes[6].comments == ["end"]
    again = round_trip(game)
    text = " ".join(write_game(again).split())
    assert "(1. 33-28 18-23 {inner} (1... 17-21 2. 39-33) 2. 39-33 $2 {after})" in text
    assert "1... 17-22!?" in text
    assert text.index("[Event") < text.index("[Site") < text.index("[Result") < text.index(
        "[GameType") < text.index("[Annotator")


def test_move_numbers_are_optional_and_any_form_is_read():
    plain = read_game("32-28 17-22 28x17 11x22 *")
    numbered = read_game("1.32-28 17-22 2.28x17 1... 11x22 *")
    dotted = read_game("1. 32-28 1. ... 17-22 2.28x17 2...11x22 *")
    assert plain.moves == numbered.moves == dotted.moves
    hub_form = read_game("1. 32-28 17-22 2. 28x17x22 11x22x17 *")
    assert hub_form.moves == plain.moves


@pytest.mark.parametrize(
    "gametype, variant, first",
    [
        ("20,W,10,10,N2,0", "international", "32-28"),
        ("21,B,8,8,N1,0", "english", "11-15"),
        ("22,W,8,8,N2,1", "italian", "21-17"),
        ("24,W,8,8,N1,1", "spanish", "9-13"),
        ("25,W,8,8,A0,0", "russian", "c3-d4"),
        ("26,W,8,8,A0,0", "brazilian", "c3-d4"),
        ("29,W,8,8,A0,0", "czech", "c3-d4"),
        ("25", "russian", "c3-d4"),
    ],
)
def test_gametype_decides_the_rule_set(gametype, variant, first):
    game = read_game(f'[GameType "{gametype}"]\n\n1. {first} *', variant="international")
    assert game.variant.name == variant
    assert Board(game.variant).pdn(game.moves[0]) == first
    again = round_trip(game)
    assert again.tags["GameType"] == gametype


def test_variant_argument_is_the_fallback_and_keeps_a_house_rule():
    game = read_game("1. c3-d4 *", variant="russian")
    assert game.variant.name == "russian"
    tagged = read_game('[GameType "25,W,8,8,A0,0"]\n1. c3-d4 *', variant="russian-nocapture")
    assert tagged.variant.name == "russian" and not tagged.variant.forced_capture
    assert 'GameType "20,W,10,10,N2,0"' in write_game(read_game("1. 32-28 *"))


def test_fen_tag_and_black_to_move_numbering():
    text = '[FEN "B:W31-50:B1-20"]\n\n1... 17-22 2. 32-28 22-27 *'
    game = read_game(text)
    assert not game.start.white_to_move
    out = write_game(game)
    assert "1... 17-22 2. 32-28 22-27 *" in out
    assert 'FEN "B:W31,32' in out
    round_trip(game)


def test_english_numbering_starts_with_black():
    game = read_game('[GameType "21"]\n1. 11-15 23-19 2. 8-11 22-17 *', "international")
    assert "1. 11-15 23-19 2. 8-11 22-17 *" in write_game(game)


def test_ambiguous_captures_are_written_in_full():
    game = Game("english", "W:W26:B14,15,22,23")
    game.push("26x19x10")
    text = write_game(game)
    assert "1... 26x19x10" in text
    assert read_game(text).moves == game.moves
    short = Game("international")
    for text in ("32-28", "17-22", "28x17"):
        short.push(text)
    assert "2. 28x17" in write_game(short)  # unambiguous: short form


@pytest.mark.parametrize(
    "token, result",
    [("2-0", "2-0"), ("1-0", "2-0"), ("0-2", "0-2"), ("0-1", "0-2"), ("1-1", "1-1"),
     ("1/2-1/2", "1-1"), ("*", "*")],
)
def test_results_are_read_in_any_scoring(token, result):
    game = read_game(f"1. 32-28 17-22 {token}")
    assert game.result == result
    assert write_game(game).rstrip().endswith(result)


def test_result_tag_without_a_token_and_termination_tag():
    game = read_game('[Result "0-2"]\n[Termination "time forfeit"]\n\n1. 32-28 17-22')
    assert game.outcome().winner is False
    assert game.outcome().termination is Termination.TIME_FORFEIT
    text = write_game(game)
    assert '[Termination "time forfeit"]' in text
    round_trip(game)


def test_a_game_ended_by_the_rules_needs_no_termination_tag():
    game = Game("english", "W:W18:B14")
    game.push("18x9")
    text = write_game(game)
    assert '[Result "1-0"]' in text and "Termination" not in text
    assert read_game(text).outcome().termination is Termination.NO_PIECES


def test_external_ends_are_written_as_termination():
    game = Game("international", tags={"White": "a", "Black": "b"})
    game.push("32-28")
    game.end(False, Termination.CRASH)
    text = write_game(game)
    assert '[Termination "engine crash"]' in text and text.rstrip().endswith("0-2")
    assert round_trip(game).termination is Termination.CRASH


def test_an_end_given_later_replaces_a_termination_tag_it_cannot_read():
    game = Game("brazilian", tags={"Termination": "weird reason"})
    assert "weird reason" in write_game(game)  # kept while the game says nothing of its end
    game.end(True, Termination.RESIGNATION)
    text = write_game(game)
    assert '[Termination "resignation"]' in text and "weird reason" not in text
    assert read_game(text).termination is Termination.RESIGNATION


def test_long_games_wrap_and_read_back():
    rng = random.Random(5)
    game = Game("international", tags={"Event": "wrap"})
    while game.outcome() is None and game.ply < 120:
        game.push(rng.choice(list(game.board.legal_moves)))
    text = write_game(game)
    assert max(len(line) for line in text.splitlines()) <= 79
    round_trip(game)


# -- errors -------------------------------------------------------------------------------------


BAD_FILE = """\
[Event "One"]
[White "A"]
[Black "B"]

1. 32-28 17-22 2-0

[Event "Two"]
[White "C"]
[Black "D"]
[Round "2"]

1. 32-28 17-22
2. 28-23 11-17 *

[Event "Three"]

1. 32-28 *
"""


def test_errors_name_the_game_and_the_line_after_the_good_games():
    games = read_games(BAD_FILE)
    first = next(games)
    assert first.tags["Event"] == "One" and first.result == "2-0"
    with pytest.raises(PdnError) as info:
        next(games)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.game == 2 and error.line == 13 and error.tags["White"] == "C"
    message = str(error)
    assert "game 2" in message and 'Event "Two"' in message and "line 13" in message
    assert "28-23" in message and "2." in message


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("[Event \"x\"]\n1. 32-28 {never closed\n17-22 *", 2, "not closed"),
        ("[Event \"x\"]\n1. 32-28 (1. 33-28\n17-22 *", 2, "variation is not closed"),
        ("1. 32-28 17-22 ) *", 1, "')'"),
        ('[GameType "30,W,8,8,A0,0"]\n1. a3-b4 *', 1, "GameType"),
        ('[FEN "W:W51:B1"]\n1. 32-28 *', 1, "FEN"),
        ("1. 32-28 17-22\n2. hello *", 2, "hello"),
        ("1. 32-28 17-22\n2. 26x17 *", 2, "26x17"),
    ],
)
def test_error_kinds(text, line, words):
    with pytest.raises(PdnError) as info:
        list(read_games(text))
    assert info.value.game == 1 and info.value.line == line
    assert words in str(info.value)


def test_ambiguous_move_in_a_file_is_an_error():
    with pytest.raises(PdnError, match="26x17x10"):
        read_game('[GameType "21"]\n[FEN "W:W26:B14,15,22,23"]\n1... 26x10 *')


#: malformed files of one long run each: the tag expression once backtracked over them (``[A``
#: and 20,000 spaces took minutes, growing about as n^2.6)
N = 20_000
LONG_RUNS = {
    "tag-and-spaces": ("[A" + " " * N, "tag '[A' not closed by ']'"),
    "open-value-and-spaces": ('[A "' + " " * N, "its value is not closed"),
    "brackets": ("[" * N, "not followed by a tag name"),
    "quotes": ('"' * N, "unexpected"),
    "open-comment-and-spaces": ("{" + " " * N, "comment '{' is not closed"),
    "open-comments": ("{" * N, "comment '{' is not closed"),
    "tag-starts": ("[A" * (N // 2), "not closed by ']'"),
    "bare-values": ("[A x" * (N // 4), "not closed by ']'"),
    "quoted-values": ('[A "[' * (N // 5), "not closed by ']' after its value"),
}
GOOD_GAME = '[Event "good"]\n1. 32-28 *\n\n'  # two lines, then the bad one on line 4


@pytest.mark.parametrize("text, words", LONG_RUNS.values(), ids=LONG_RUNS)
def test_long_runs_are_refused_quickly_naming_the_line(text, words):
    for source, line in ((text, 1), (GOOD_GAME + text, 4)):
        start = time.monotonic()
        with pytest.raises(PdnError) as info:
            list(read_games(source))
        assert time.monotonic() - start < 2
        assert info.value.line == line and f"line {line}" in str(info.value)
        assert words in str(info.value) and len(str(info.value)) < 200


@pytest.mark.parametrize("text", [t for t, _ in LONG_RUNS.values()], ids=LONG_RUNS)
def test_long_runs_in_an_openings_file_are_refused_quickly(text, tmp_path):
    """Through the match's openings reader too: PDN (the file starts with a tag) or lines."""
    path = tmp_path / "openings.txt"
    for body, line in ((text, 1), (GOOD_GAME + text, 4)):
        path.write_text(body, encoding="utf-8")
        start = time.monotonic()
        with pytest.raises(OpeningsError) as info:
            read_openings(path, "international")
        assert time.monotonic() - start < 2
        assert str(path) in str(info.value) and f"line {line}" in str(info.value)


def test_every_tag_form_reads():
    """The tag scan takes every form the one regular expression did."""
    text = ('[Event"tight"]\n[ Site  bare value  ]\n[Round\n"2"]\n[Annotator "a \\"b\\" c\\\\"]\n'
            '[Black ""]\n[White]\n1. 32-28 *')
    game = read_game(text)
    assert game.tags == {"Event": "tight", "Site": "bare value", "Round": "2",
                         "Annotator": 'a "b" c\\', "Black": "", "White": ""}
    with pytest.raises(PdnError, match="line 2.*tag '\\[Site \"x\"' not closed by"):
        read_game('[Event "x"]\n[Site "x" y]\n1. 32-28 *')


# -- files ----------------------------------------------------------------------------------------


def test_append_game_writes_whole_games(tmp_path):
    path = tmp_path / "match.pdn"
    games = []
    for i, variant in enumerate(("international", "russian", "english")):
        game = Game(variant, tags={"Event": "m", "Round": str(i + 1)})
        game.push(next(iter(game.board.legal_moves)))
        game.end(True, Termination.RESIGNATION)
        append_game(path, game)
        games.append(game)
    back = list(read_games(path))
    assert len(back) == 3
    for a, b in zip(games, back):
        same_game(a, b)
    # a file whose last line lacks its newline still gets a separate game
    path.write_text(path.read_text().rstrip("\n"))
    append_game(path, games[0])
    assert len(list(read_games(str(path)))) == 4


def test_missing_file_and_file_objects(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(read_games(str(tmp_path / "none.pdn")))
    path = tmp_path / "latin.pdn"
    path.write_bytes('[Event "Café"]\n1. 32-28 *\n'.encode("latin-1"))
    assert read_game(path).tags["Event"] == "Café"
    with open(path, encoding="latin-1") as f:
        assert read_game(f).ply == 1


# -- a corpus written by another program -----------------------------------------------------------


#: (pydraughts' rule-set name, ours, start FEN or None, most plies): pydraughts needs about
#: 20 ms per international move list, so the corpus is kept to a few hundred plies
CORPUS = (
    ("standard", "international", None, 24),
    ("standard", "international", None, 40),
    ("standard", "international", "W:W31-40:B11-20", 300),
    ("standard", "international", "B:WK46,31-35:B16-20", 300),
    ("russian", "russian", None, 300),
    ("russian", "russian", None, 20),
    ("english", "english", None, 300),
)


def _pydraughts_corpus(tmp_path):
    """Random legal games played and written by pydraughts; returns the file and the boards."""
    draughts = pytest.importorskip("draughts")
    from draughts import BLACK, WHITE
    from draughts.PDN import PDNWriter

    path = tmp_path / "pydraughts.pdn"
    played = []
    rng = random.Random(2024)
    for n, (theirs, ours, fen, limit) in enumerate(CORPUS):
        board = draughts.Board(theirs, fen) if fen else draughts.Board(theirs)
        while len(board.move_stack) < limit:
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        winner = board.winner() if len(board.move_stack) < limit else None
        ending = {WHITE: "1-0", BLACK: "0-1", 0: "1/2-1/2"}.get(winner, "*")
        if ours == "international" and ending != "*":
            ending = {"1-0": "2-0", "0-1": "0-2", "1/2-1/2": "1-1"}[ending]
        tags = {"Event": f"pydraughts {theirs}", "Round": str(n + 1), "White": "random",
                "Black": "random"}
        if theirs == "standard":
            # its own move texts: its writer's replay (which turns the 8x8 moves into PDN
            # squares) would double the time, and international moves need no turning
            PDNWriter(str(path), moves=[m.pdn_move for m in board.move_stack], variant=theirs,
                      starting_fen=board.initial_fen, tags=tags, game_ending=ending)
        else:
            PDNWriter(str(path), board=board, tags=tags, game_ending=ending)
        played.append((ours, board, ending))
    return path, played


def test_reads_a_corpus_written_by_pydraughts(tmp_path):
    path, played = _pydraughts_corpus(tmp_path)
    games = list(read_games(path))
    assert len(games) == len(played)
    for game, (variant, board, ending) in zip(games, played):
        assert game.variant.name == variant
        assert game.ply == len(board.move_stack)
        # move by move: each of our positions equals pydraughts' after the same moves
        replay = board.copy()
        fens = [replay.fen]
        while replay.move_stack:
            replay.pop()
            fens.append(replay.fen)
        fens.reverse()
        for position, fen in zip(game.positions, fens):
            assert position == parse_fen(game.variant, fen)
        if ending != "*":
            assert game.result == ending
        round_trip(game)


@pytest.mark.parametrize("name", ["My Tag", "Événement", "", "a]", 'x"'])
def test_a_tag_name_pdn_cannot_hold_is_refused_when_written_not_read(name, tmp_path):
    """It was written as given; the reader then refused the file from that game on, so one
    such game appended by a runner hid every game after it."""
    from engine.errors import DamkaError

    game = Game("international")
    game.push("32-28")
    game.tags[name] = "x"
    with pytest.raises(DamkaError, match="cannot be written in PDN"):
        write_game(game)
    path = tmp_path / "games.pdn"
    with pytest.raises(DamkaError):
        append_game(path, game)
    assert not path.exists() or path.read_text() == ""


def test_an_annotation_pdn_cannot_hold_is_refused_and_the_marks_round_trip():
    from engine.errors import DamkaError

    game = Game("international")
    game.push("32-28")
    game.notes[-1].nags.append("zz")
    with pytest.raises(DamkaError, match="annotation 'zz' after 32-28"):
        write_game(game)
    game.notes[-1].nags[:] = ["!?", "$3"]
    assert read_game(write_game(game)).notes[-1].nags == ["!?", "$3"]


def test_the_house_rule_is_written_in_a_tag_and_read_back_without_being_asked():
    """GameType has no number for "no forced capture": the file read back as the plain rules
    failed on the first move that ignores a capture."""
    game = Game("russian-nocapture", "W:Wc3:Bd4,h8")
    move = next(m for m in game.board.legal_moves if not m.captured)  # a capture is there
    game.push(move)
    text = write_game(game)
    assert '[ForcedCapture "no"]' in text
    back = read_game(text)  # no variant given
    assert not back.variant.forced_capture and back.moves == game.moves
    assert write_game(back) == text
    assert "ForcedCapture" not in write_game(Game("russian"))
    # and a game that says captures are forced is read so, whatever the default
    forced = read_game('[GameType "21"]\n[ForcedCapture "yes"]\n\n1. 11-15 *', "english-nocapture")
    assert forced.variant.forced_capture and forced.variant.name == "english"
