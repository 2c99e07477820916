"""The reference generator against the published perft numbers of tests/data/perft.json.

The expected counts come only from that file (publications and agreeing independent
programs), never from our own generators.
"""

from __future__ import annotations

import json

import pytest

from engine.fen import parse_fen
from engine.reference import perft
from engine.variants import get_variant
from conftest import PERFT_JSON


#: the seven rule sets damka plays
VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")

#: keep the pure-Python run short: larger counts are for the fast generator
MAX_NODES = 30_000


def _entries() -> list[dict]:
    with PERFT_JSON.open(encoding="utf-8") as f:
        entries = json.load(f)
    return [e for e in entries if e["variant"] in VARIANTS and e["nodes"] <= MAX_NODES]


ENTRIES = _entries()


@pytest.mark.parametrize(
    "entry", ENTRIES, ids=[f"{e['variant']}-{e['name']}-{e['depth']}" for e in ENTRIES]
)
def test_reference_perft(entry: dict) -> None:
    variant = get_variant(entry["variant"])
    position = parse_fen(variant, entry["fen"])
    assert perft(variant, position, entry["depth"]) == entry["nodes"]


def test_every_rule_set_is_covered() -> None:
    assert {e["variant"] for e in ENTRIES} == set(VARIANTS)
