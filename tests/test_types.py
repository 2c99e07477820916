"""The library's type hints hold: mypy checks ``engine`` (the public API and what it calls)
with the settings of pyproject.toml's ``[tool.mypy]``. ``engine/py.typed`` tells type checkers
of code that uses damka to read the hints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_engine_ships_its_type_hints():
    assert (REPO / "engine" / "py.typed").exists()


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_mypy_finds_no_error_in_the_library(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
