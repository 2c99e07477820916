"""``damka play``: play draughts against the computer, or a friend, in the browser.

A thin translator, as every front end is (docs/architecture.md): ``session`` holds the games
(an engine.game.Game each) and turns them into plain JSON; ``app`` maps HTTP requests onto it;
``server`` runs it on localhost and opens the browser; ``rules_pages`` writes the rules pages
from the rules records of engine.variants; ``static/`` is the page itself (plain HTML, CSS and
JavaScript, no build step, no external network). ``command`` is the command's arguments and
``run``, ``defaults`` where it serves when not told: the ``damka`` parser loads these two and
nothing else of the package; nothing here is imported by ``engine`` or ``damka hub``, and the
web code loads only when the ``play`` command runs.
"""

from __future__ import annotations

__all__ = ["STATIC_DIR"]

from pathlib import Path

#: the page, its script and style, and the rules pages' template, prose and style (package data)
STATIC_DIR = Path(__file__).resolve().parent / "static"
