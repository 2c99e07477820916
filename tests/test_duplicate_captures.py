"""Duplicate captures within one or two plies: perft counts worked out by hand from the rules.

The convention (tests/data/README.md, "drop"): captures with the same origin, destination and
captured set are one move, however the piece went round (in Russian they must also end as the
same kind of piece). From the start positions the 8x8 sets with short kings meet a duplicate
capture only from depth 12, past what the plain test run computes, so these small positions
make the plain run check the merging in every 8x8 rule set, on both generators: the reference
(engine.reference) and the fast core (engine._core).

Squares below are named on the engine's own board (a1 bottom left and dark, White moving up,
as Russian names them). The Spanish and Italian FENs name the same squares in those sets'
numbering: their boards are the mirror image of this one, and a mirror image keeps every rule,
so the counting is the same. Black men move down (towards rank 1); a captured piece stays on
the board until the capture ends and cannot be jumped twice; the origin square is empty
during the capture; a capture that can go on must go on.

Position DIAMOND: a white king on d2, black men on c3, e3, c5, e5 (a diamond round the empty
d4) and h8. White must capture; only the king can.

* Flying king (Russian, Brazilian, Czech, Spanish). From d2 the king can jump c3 (towards a5)
  or e3 (towards h6); c1 and e1 lead nowhere.
  - Over c3 it may land on b4 or a5. From a5 nothing can be taken (a5-d8 is empty, and b4-c3
    leads back over c3), from b4 c5 can: a capture that can go on must, so b4. Over c5 it may
    land on d6, e7, f8; only from d6 can it go on (over e5): d6. Over e5 it may land on f4, g3,
    h2; only from f4 can it go on (over e3): f4. Over e3 it lands on d2 (its empty origin) or
    c1; from neither can it take more (c3 and e3 are taken already, and the rest is empty),
    so both end the move: d2xd2 and d2xc1, each taking c3 c5 e5 e3.
  - Over e3 the other way round, by the same reasoning: f4 (not g5, h6), d6 (not c7, b8), b4
    (not a3), and over c3 it lands on d2 or e1: d2xd2 and d2xe1, taking the same four men.
  - d2xd2 appears twice with the same origin, destination and captured set: one move. Depth 1:
    d2xd2, d2xc1, d2xe1 = **3** (4 without merging). In Brazilian and Spanish every capture
    takes four, so the quantity and quality rules keep all of them; in Czech only the king can
    capture anyway.
  - Depth 2: Black has only the man on h8, which can only step to g7 (nothing to capture):
    3 x 1 = **3**.
* Short king (English, Italian). From d2 the king jumps c3 to b4 or e3 to f4 (one square
  beyond, no choice of landing). Round the diamond: b4 over c5 to d6, over e5 to f4, over e3
  to d2, where nothing is left to take; or f4, d6, b4 and over c3 back to d2. Both ways are
  d2xd2 taking all four: **1** move (2 without merging), then h8-g7: depth 2 = **1**.

Position LOOP: a white king on a7; black men on b6, d6, f6, d4, f4, b4 (a ring round the empty
e5 with a man on either side of c5) and h8. Short kings (English, Italian):

* From a7 the only jump is over b6 to c5 (b8 is empty). From c5 three jumps are open:
  - over b4 to a3; from a3 nothing (b4 taken, b2 empty): a7xa3 taking b6 b4;
  - over d6 to e7, then f6 (to g5), f4 (to e3), d4 (back to c5, which the king left empty),
    b4 (to a3): a7xa3 taking all six; at e7, g5 and e3 that jump is the only one open;
  - over d4 to e3, then f4 (g5), f6 (e7), d6 (c5), b4 (a3): the same six, the other way round.
  The last two are one move. English (free choice of capture): a7xa3 with two men and a7xa3
  with six = **2** moves (3 without merging).
  Depth 2, English: after the six-man capture Black has h8-g7 only (1); after the two-man one,
  Black's men d6, f6, d4, f4 each have two forward steps (c5 e5, e5 g5, c3 e3, e3 g3) and h8
  one, with nothing to capture (a white king on a3 cannot be jumped from b4 or b2 to off the
  board): 8 + 1 = 9. Depth 2 = 9 + 1 = **10** (11 without merging).
* Italian: a capture must take the most pieces, so only the six-man capture is legal, the two
  ways round being one move: **1**, then h8-g7: depth 2 = **1** (2 and 2 without merging).

Position LOOP with flying kings gives other numbers (the king can stop past the ring), which
are not worked out here.
"""

from __future__ import annotations

import pytest

from engine import _core, reference
from engine.fen import parse_fen
from engine.variants import get_variant

#: (rule set, FEN in its own notation, position, perft by depth: from the docstring's reasoning)
CASES = [
    ("russian", "W:WKd2:Bc3,e3,c5,e5,h8", "DIAMOND", {1: 3, 2: 3}),
    ("brazilian", "W:WKd2:Bc3,e3,c5,e5,h8", "DIAMOND", {1: 3, 2: 3}),
    ("czech", "W:WKd2:Bc3,e3,c5,e5,h8", "DIAMOND", {1: 3, 2: 3}),
    ("spanish", "W:WK6:B10,11,18,19,32", "DIAMOND", {1: 3, 2: 3}),
    ("english", "W:WK26:B4,14,15,22,23", "DIAMOND", {1: 1, 2: 1}),
    ("italian", "W:WK27:B1,14,15,22,23", "DIAMOND", {1: 1, 2: 1}),
    ("english", "W:WK5:B4,9,10,11,17,18,19", "LOOP", {1: 2, 2: 10}),
    ("italian", "W:WK8:B1,10,11,12,18,19,20", "LOOP", {1: 1, 2: 1}),
]

#: the moves at depth 1, as (origin, destination, number of men taken), on the engine's board
FIRST_MOVES = {
    ("DIAMOND", True): {("d2", "d2", 4), ("d2", "c1", 4), ("d2", "e1", 4)},
    ("DIAMOND", False): {("d2", "d2", 4)},
    ("LOOP", "english"): {("a7", "a3", 2), ("a7", "a3", 6)},
    ("LOOP", "italian"): {("a7", "a3", 6)},
}


def _algebraic(s: int) -> str:
    """The engine's internal 8x8 square as a1..h8 (Russian names)."""
    from engine.squares import square_name

    return square_name(get_variant("russian"), s)


def _ids(case) -> str:
    return f"{case[0]}-{case[2].lower()}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("generator", ["reference", "fast"])
def test_duplicate_capture_perft_matches_the_hand_count(case, generator):
    name, fen, _, counts = case
    variant = get_variant(name)
    position = parse_fen(variant, fen)
    perft = reference.perft if generator == "reference" else _core.perft
    assert {d: perft(variant, position, d) for d in counts} == counts


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("generator", ["reference", "fast"])
def test_duplicate_capture_is_listed_once(case, generator):
    """The legal moves themselves: each (origin, destination, captured set) once, and the ones
    the docstring lists."""
    name, fen, shape, _ = case
    variant = get_variant(name)
    position = parse_fen(variant, fen)
    moves = (reference.legal_moves(variant, position) if generator == "reference"
             else _core.generate(variant, position))
    keys = [(m[0], m[1], m[2]) for m in moves]
    assert len(keys) == len(set(keys))
    got = {(_algebraic(o), _algebraic(d), bin(mask).count("1")) for o, d, mask in keys}
    if shape == "DIAMOND":
        expected = FIRST_MOVES["DIAMOND", variant.flying_kings]
    else:
        expected = FIRST_MOVES["LOOP", name]
    assert got == expected
