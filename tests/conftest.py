"""Shared test helpers: where the project's reference data lives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: ../shared beside the repository (the same on a developer's machine and in CI)
SHARED = Path(__file__).resolve().parents[2] / "shared"
OUR_VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")


def perft_entries() -> list[dict]:
    """The published / independently agreed perft numbers for our seven rule sets."""
    with open(SHARED / "data" / "perft.json", encoding="utf-8") as f:
        return [e for e in json.load(f) if e["variant"] in OUR_VARIANTS]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED
