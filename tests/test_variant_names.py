"""Rule-set names are resolved once, where they come in (issue 33, item 7).

A front end turns the user's name into the ``Variant`` record with ``engine.variants.get_variant``
and passes the record on; inside the library functions take the record, and the public entry
points that also accept a name (``Board("russian")``, ``Game``, ``Engine``, ``read_games``,
``read_openings``, ``MatchConfig``, ``HubClient``) look a name up only when they are given one
(``engine.variants.as_variant``). These tests count the lookups on real paths, in-process, and
list the modules allowed to look a name up at all.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import engine.variants as variants

REPO = Path(__file__).resolve().parent.parent

#: the modules that turn a name into a record, and where their names come from; a lookup
#: anywhere else is a name passed around inside the library instead of its record
LOOKS_UP_NAMES = {
    "engine.variants": "get_variant itself, and as_variant for the entry points given a name",
    "engine.pdn": "a PDN file's GameType tags",
    "engine.benchmark": "the bench table's rule-set names",
    "protocol.args": "--variant (read_variant)",
    "protocol.match.main": "damka match --variant",
    "protocol.egtb_command": "damka egtb --variant",
    "protocol.hub.server": "the Hub set-param variant",
    "protocol.play.session": "a browser's new-game request",
    "protocol.play.rules_pages": "rules pages named in URLs, and the pages' own prose",
    "protocol.training.dataset": "the rule set a self-play directory's meta.json names",
}


def _lookups(path: Path) -> int:
    """Calls of ``get_variant`` (by name or as an attribute) in one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "get_variant")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "get_variant")))


def test_only_the_front_ends_look_names_up() -> None:
    found = {".".join(path.relative_to(REPO).with_suffix("").parts)
             for layer in ("engine", "protocol") for path in (REPO / layer).rglob("*.py")
             if _lookups(path)}
    assert "protocol.match.main" in found  # the scan sees a real lookup
    assert sorted(found - set(LOOKS_UP_NAMES)) == []


def _count_calls(monkeypatch) -> list:
    """Wrap get_variant wherever the project's loaded modules bound it; returns the list
    that every call's first argument is appended to."""
    calls: list = []
    original = variants.get_variant

    def counting(name, *args, **kwargs):
        calls.append(name)
        return original(name, *args, **kwargs)

    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] in ("engine", "protocol") and \
                getattr(module, "get_variant", None) is original:
            monkeypatch.setattr(module, "get_variant", counting)
    return calls


@pytest.mark.parametrize("openings", [
    # PDN (the reader, Game and Board on the way) without GameType tags: the rule set is the
    # command line's
    '[Event "a"]\n\n1. c3-d4 f6-e5 *\n\n[Event "b"]\n\n1. e3-f4 *\n',
    # lines of moves (Board)
    "c3-d4 f6-e5\ne3-f4\n",
])
def test_damka_match_looks_its_variant_up_once(tmp_path, monkeypatch, openings):
    """``damka match``: from the parsed command line through the config, the openings file,
    the runner and the first game to its PDN, ``--variant`` is looked up exactly once."""
    from protocol.cli import build_parser
    # everything on the path is imported before counting (a module imported while the
    # wrapper is in place would keep it)
    import engine.pdn
    import protocol.match.engines  # noqa: F401
    from protocol.match.games import new_game
    from protocol.match.main import config_from_args
    from protocol.match.runner import Match

    path = tmp_path / "openings.txt"
    path.write_text(openings, encoding="utf-8")
    args = build_parser().parse_args([
        "match", "--engine", "damka level=easy", "--engine", "damka name=b level=easy",
        "--variant", "Russian", "--depth", "1", "--openings", str(path)])

    calls = _count_calls(monkeypatch)
    config = config_from_args(args)
    match = Match(config)
    game = new_game(config, match.variant, match.names, "2024.01.01", match.schedule[0])
    text = engine.pdn.write_game(game)

    assert calls == ["Russian"]
    assert config.variant.name == "russian" and len(config.openings) == 2
    assert match.variant is config.variant and game.variant is config.variant
    assert game.board.variant is config.variant
    assert '[Round "1"]' in text and game.ply == 2


def test_a_gametype_tag_is_a_name_of_its_own(tmp_path, monkeypatch):
    """A PDN openings file's GameType tags are names too: each is looked up where it is read,
    and nothing else is."""
    from protocol.match.openings import read_openings

    path = tmp_path / "openings.pdn"
    path.write_text('[GameType "25"]\n\n1. c3-d4 *\n\n[GameType "25"]\n\n1. e3-f4 *\n',
                    encoding="utf-8")
    russian = variants.get_variant("russian")
    calls = _count_calls(monkeypatch)
    assert len(read_openings(path, russian)) == 2
    assert calls == ["25", "25"]


def test_the_library_given_a_record_looks_nothing_up(monkeypatch):
    """Board, Game, PDN, FEN, the search facade: handed the record, none looks a name up;
    handed a name (the public convenience), Board looks it up once."""
    from engine import Board, parse_fen, write_fen
    from engine.game import Game
    from engine.pdn import read_games, write_game
    from engine.search import Engine

    english = variants.get_variant("english")
    calls = _count_calls(monkeypatch)
    game = Game(english)
    game.push("11-15")
    again = next(read_games("1. 11-15 23-19 *", english))  # no GameType tag: no name in it
    assert '[GameType "21,' in write_game(again) and again.ply == 2
    board = Board(english, parse_fen(english, write_fen(english, again.board.position)))
    assert Board.from_hub(english, board.hub_position()).position == board.position
    engine = Engine(english, hash_mb=1, prefault=False)
    assert engine.variant is english and again.variant is english
    assert calls == []

    assert Board("English").variant is english
    assert calls == ["English"]
