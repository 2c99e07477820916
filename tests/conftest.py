"""Shared test helpers: where the project's reference data lives (tests/data, in the repository)."""

from __future__ import annotations

import json
from pathlib import Path


#: oracle data kept in the repository (tests/data/README.md says where it comes from)
DATA = Path(__file__).resolve().parent / "data"
PERFT_JSON = DATA / "perft.json"
OUR_VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")


def perft_entries() -> list[dict]:
    """The published / independently agreed perft numbers for our seven rule sets."""
    with open(PERFT_JSON, encoding="utf-8") as f:
        return [e for e in json.load(f) if e["variant"] in OUR_VARIANTS]

