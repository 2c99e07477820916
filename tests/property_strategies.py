"""Hypothesis strategies and settings shared by the property tests (tests/test_properties_*.py).

Valid objects are made by playing: random legal games from the start position (engine.Board)
and random placements of men and kings, for every rule set including the "no forced capture"
house rule. Invalid input is random text or bytes, and valid input with a few random edits.

Every property test runs with ``derandomize=True`` (the same examples on every run, so CI is
reproducible), no example database, and a deadline per example: a parser that hangs fails
with DeadlineExceeded instead of stalling the run. ``max_examples`` is kept small enough that
all the property tests together take well under 60 seconds in the plain test run.

To hunt for faults for longer, scale the examples and draw new ones on each run:
``DAMKA_PROPERTY_SCALE=20 DAMKA_PROPERTY_RANDOM=1 pytest tests/test_properties_*.py``.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine import Board
from engine.position import Position
from engine.squares import row_col
from engine.variants import VARIANTS, Variant

#: generous per-example deadline: a loaded 2-core machine must not make it flaky, but a parser
#: that spells out a range of 10^8 squares (45 s) or loops forever still fails
DEADLINE = timedelta(seconds=3)


def profile(examples: int) -> settings:
    """The settings of one property test: ``examples`` examples, reproducible, with a deadline."""
    return settings(
        max_examples=examples * int(os.environ.get("DAMKA_PROPERTY_SCALE", "1")),
        derandomize=not os.environ.get("DAMKA_PROPERTY_RANDOM"),
        database=None,
        deadline=DEADLINE,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
        print_blob=False,
    )


#: every rule set, and the house rule for each 8x8 one
ALL_VARIANTS: tuple[Variant, ...] = tuple(VARIANTS) + tuple(
    v.with_forced_capture(False) for v in VARIANTS if v.size == 8
)

variants = st.sampled_from(ALL_VARIANTS)


@st.composite
def placements(draw, variant: Variant) -> Position:
    """Any legal-looking placement: men off their crowning rows, kings anywhere, either side
    to move (unreachable positions included: parsers must not care)."""
    n = variant.squares
    squares = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=min(n, 30)))
    white = black = kings = 0
    for s in squares:
        is_white = draw(st.booleans())
        row = row_col(variant.size, s)[0]
        crowning = row == (0 if is_white else variant.size - 1)
        if crowning or draw(st.booleans()):
            kings |= 1 << s
        if is_white:
            white |= 1 << s
        else:
            black |= 1 << s
    return Position(white, black, kings, draw(st.booleans()))


@st.composite
def played_boards(draw, variant: Variant, max_plies: int = 60) -> Board:
    """A board after a random legal game from the start position (its move stack kept)."""
    board = Board(variant)
    plies = draw(st.integers(0, max_plies))
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(moves[draw(st.integers(0, len(moves) - 1))])
    return board


@st.composite
def positions(draw, variant: Variant) -> Position:
    """A position reached in play or placed at random."""
    if draw(st.booleans()):
        return draw(played_boards(variant)).position
    return draw(placements(variant))


@st.composite
def boards_with_moves(draw, variant: Variant) -> Board:
    """A board with at least one legal move: a played position, or a placement that has one."""
    for _ in range(20):
        if draw(st.booleans()):
            board = draw(played_boards(variant))
        else:
            board = Board(variant, draw(placements(variant)))
        if board.legal_moves:
            return board
    return Board(variant)


@st.composite
def mutations(draw, text: str, alphabet: str) -> str:
    """``text`` with one to four random edits: a character inserted, deleted, replaced, or a
    slice repeated."""
    out = text
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("insert", "delete", "replace", "repeat")))
        at = draw(st.integers(0, len(out)))
        if kind == "insert":
            out = out[:at] + draw(st.sampled_from(alphabet)) + out[at:]
        elif kind == "delete" and out:
            at = min(at, len(out) - 1)
            out = out[:at] + out[at + 1:]
        elif kind == "replace" and out:
            at = min(at, len(out) - 1)
            out = out[:at] + draw(st.sampled_from(alphabet)) + out[at + 1:]
        elif kind == "repeat":
            end = draw(st.integers(at, min(len(out), at + 12)))
            out = out[:at] + out[at:end] * draw(st.integers(2, 5)) + out[end:]
    return out


def text_or_mutation(valid: st.SearchStrategy[str], alphabet: str, max_size: int = 80) -> st.SearchStrategy[str]:
    """Random text (from the input's own alphabet, or any), or a valid input mutated."""
    return st.one_of(
        st.text(alphabet=alphabet, max_size=max_size),
        st.text(max_size=max_size),
        valid.flatmap(lambda t: mutations(t, alphabet)),
    )
