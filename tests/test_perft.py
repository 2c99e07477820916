"""The fast generator against every perft number of tests/data/perft.json.

The numbers are published or agreed by independent programs, never produced by damka.
Entries up to PLAIN_LIMIT nodes run in the plain test run (a few seconds in all); the deeper
ones (24 billion leaves) carry the ``long`` marker: run them by hand with ``pytest -m long``.
"""

from __future__ import annotations

import pytest

from conftest import perft_entries
from engine import Board, _core, divide, perft
from engine.fen import parse_fen
from engine.variants import get_variant

PLAIN_LIMIT = 25_000_000


def _params():
    for e in perft_entries():
        marks = [pytest.mark.long] if e["nodes"] > PLAIN_LIMIT else []
        yield pytest.param(e, id=f"{e['variant']}-{e['name']}-d{e['depth']}", marks=marks)


@pytest.mark.parametrize("entry", list(_params()))
def test_perft_matches_published_count(entry):
    variant = get_variant(entry["variant"])
    position = parse_fen(variant, entry["fen"])
    nodes = _core.perft(variant, position, entry["depth"])
    if nodes != entry["nodes"] and entry["depth"] > 1:
        split = {m[:3]: n for m, n in _core.divide(variant, position, entry["depth"])}
        pytest.fail(f"perft {nodes} != {entry['nodes']} ({entry['source']}); divide: {split}")
    assert nodes == entry["nodes"]


@pytest.mark.parametrize("entry", [e for e in perft_entries() if e["depth"] == 2 and e["nodes"] < 5000],
                         ids=lambda e: f"{e['variant']}-{e['name']}")
def test_divide_adds_up_to_perft(entry):
    variant = get_variant(entry["variant"])
    position = parse_fen(variant, entry["fen"])
    split = _core.divide(variant, position, 2)
    assert sum(n for _, n in split) == entry["nodes"]
    assert len(split) == _core.perft(variant, position, 1)


@pytest.mark.parametrize("entry", [e for e in perft_entries() if e["nodes"] < 200_000],
                         ids=lambda e: f"{e['variant']}-{e['name']}-d{e['depth']}")
def test_the_public_perft_and_divide_of_a_board(entry):
    """engine.perft and engine.divide: the published count from a Board, and the divide's
    moves are the board's legal moves."""
    board = Board(entry["variant"], entry["fen"])
    assert perft(board, entry["depth"]) == entry["nodes"]
    split = divide(board, entry["depth"], threads=2)
    moves = [m for m, _ in split]
    assert len(moves) == len(board.legal_moves) and set(moves) == set(board.legal_moves)
    assert sum(n for _, n in split) == entry["nodes"]
