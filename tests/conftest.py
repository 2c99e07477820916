"""Shared test helpers: where the project's reference data lives (tests/data, in the repository)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


#: oracle data kept in the repository (tests/data/README.md says where it comes from)
DATA = Path(__file__).resolve().parent / "data"
PERFT_JSON = DATA / "perft.json"
OUR_VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")


def perft_entries() -> list[dict]:
    """The published / independently agreed perft numbers for our seven rule sets."""
    with open(PERFT_JSON, encoding="utf-8") as f:
        return [e for e in json.load(f) if e["variant"] in OUR_VARIANTS]


def _no_skips() -> bool:
    return os.environ.get("DAMKA_NO_SKIPS") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With DAMKA_NO_SKIPS=1 (set by .ci/run) a skipped test fails: CI installs every test
    dependency, so a skip there means something is missing that should not be."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _no_skips():
        _fail_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped while it is collected (importorskip)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _no_skips():
        _fail_skip(report)


def _fail_skip(report) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = f"skipped in CI, where every test dependency is installed: {reason}"
