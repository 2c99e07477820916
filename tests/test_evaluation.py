"""The learned evaluation: the core agrees with its feature rows and with a plain-Python model
of the layout, mirrored positions score the same for the side to move, and bad weights files
are refused.

The model below reads the board square by square (rows, columns, trits) the way the layout is
described in _fast/learned.pyx, without the core's bit tricks, and computes the exact score.
"""

from __future__ import annotations

import random
import time
import tracemalloc
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from engine import Board, get_variant
from engine.evaluation import (
    WeightsError,
    default_weights_path,
    eval_core,
    feature_rows,
    layout,
    read_weights,
    static_eval,
    static_evals,
    write_weights,
)
from engine.position import Position
from engine.search import Engine
from engine.squares import row_col, square_at
from engine.weights_file import WeightsHeader, write_params
from engine.weights_upgrade import upgrade_file
from random_positions import random_games, random_setups

VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")


# --- positions --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def game_positions(name: str) -> tuple[Position, ...]:
    """Positions of seeded random games and random placements with kings, plus lone-king
    endings for the drawish scaling."""
    rng = random.Random(f"eval:{name}")
    variant = get_variant(name)
    n, size = variant.squares, variant.size
    out = random_games(variant, rng, 150) + random_setups(variant, rng, 60)
    for i in range(16):  # a lone king against a king and up to two more pieces
        squares = rng.sample(range(n), 2 + i % 3)
        lone, others = squares[0], squares[1:]
        kings = 1 << lone | 1 << others[0]
        for s in others[1:]:
            row, _ = row_col(size, s)
            if row in (0, size - 1) or rng.random() < 0.5:
                kings |= 1 << s
        white, black = 1 << lone, sum(1 << s for s in others)
        if i % 2:
            white, black = black, white
        out.append(Position(white, black, kings, rng.random() < 0.5))
    return tuple(out)


def mirror(size: int, p: Position) -> Position:
    """The board turned 180 degrees with the colours swapped and the other side to move."""
    n = size * size // 2

    def turn(mask: int) -> int:
        return sum(1 << (n - 1 - s) for s in range(n) if mask >> s & 1)

    return Position(turn(p.black), turn(p.white), turn(p.kings), not p.white_to_move)


def random_weights(name: str, seed: int = 1) -> np.ndarray:
    """Non-zero weights of every parameter (multiples of 1/16: stored exactly)."""
    rng = np.random.default_rng(seed)
    n = layout(name).n_params
    w = np.round(rng.normal(0.0, 40.0, n) * 16) / 16
    w[w == 0] = 0.5
    return w


def scorer(name: str, w: np.ndarray):
    """static_eval with these weights, the core built once (a layout has millions of
    parameters: static_eval converts them on every call)."""
    core = eval_core(name, w)
    return lambda p: core.evaluate(p.white, p.black, p.kings, p.white_to_move)


# --- a plain-Python model of the layout -------------------------------------------------

def windows(size: int) -> list[tuple[list[int], list[int]]]:
    """Per pattern table: its window (rows 2p..2p+3, columns 2k..2k+3, read row by row from
    the top, left to right) and the window turned 180 degrees, for the windows on White's half
    of the board (and of the middle band one of each pair of mutually turned windows)."""
    half = size // 2
    bands = size // 2 - 1

    def squares(p: int, k: int) -> list[int]:
        out = []
        for row in range(2 * p, 2 * p + 4):
            out += sorted(s for col in range(2 * k, 2 * k + 4)
                          if (s := square_at(size, row, col)) is not None)
        return out

    tables = []
    for p in reversed(range(bands)):
        for k in range(half - 1):
            tp, tk = bands - 1 - p, half - 2 - k  # the turned window's band and offset
            if p > tp or (p == tp and k <= tk):
                tables.append((squares(p, k), squares(tp, tk)))
    return tables


def edge_windows(size: int) -> list[tuple[list[int], list[int]]]:
    """Per edge table: the strip of 3 files x 6 rows at the left and at the right edge of
    White's half (the bottom six rows), read row by row from the top, left to right, and the
    strip turned 180 degrees (digit i reads the square opposite the window's digit i)."""
    n = size * size // 2
    tables = []
    for files in (range(0, 3), range(size - 3, size)):
        window = [s for row in range(size - 6, size) for col in files
                  if (s := square_at(size, row, col)) is not None]
        tables.append((window, [n - 1 - s for s in window]))
    return tables


def wide_windows(size: int) -> list[tuple[list[int], list[int]]]:
    """Per wide table: the window of 4 files x 6 rows at columns 2k..2k+3 of White's six rows
    (the bottom six), read row by row from the top, left to right, and the window turned 180
    degrees (digit i reads the square opposite the window's digit i)."""
    n = size * size // 2
    tables = []
    for k in range(size // 2 - 1):
        window = [s for row in range(size - 6, size) for col in range(2 * k, 2 * k + 4)
                  if (s := square_at(size, row, col)) is not None]
        tables.append((window, [n - 1 - s for s in window]))
    return tables


def trit(p: Position, s: int) -> int:
    """2 a White man, 0 a Black man, 1 empty or a king."""
    if p.kings >> s & 1:
        return 1
    if p.white >> s & 1:
        return 2
    if p.black >> s & 1:
        return 0
    return 1


def model(name: str, p: Position) -> tuple[list[tuple[int, int]], int, int]:
    """(feature entries (feature, coefficient) from White's view, phase, draw divisor)."""
    variant = get_variant(name)
    size, n = variant.size, variant.squares
    lay = layout(name)
    first = {g: off // 2 for g, off, _size in lay.groups}
    men = {True: [], False: []}
    kings = {True: [], False: []}
    for s in range(n):
        for colour in (True, False):
            if p.pieces(colour) >> s & 1:
                (kings if p.kings >> s & 1 else men)[colour].append(s)
    entries: list[tuple[int, int]] = []

    def add(group: str, i: int, c: int) -> None:
        if c:
            entries.append((first[group] + i, c))

    def sign(colour: bool) -> int:
        return 1 if colour else -1

    for group, tables in (("pattern", windows(size)), ("edge", edge_windows(size)),
                          ("wide", wide_windows(size))):
        for t, (window, _turned) in enumerate(tables):
            u = sum(trit(p, s) * 3 ** i for i, s in enumerate(window))
            # the turned window: digit i reads the square opposite window[i], colours swapped
            u_turned = sum((2 - trit(p, n - 1 - s)) * 3 ** i for i, s in enumerate(window))
            add(f"{group}:{t}", u, 1)
            add(f"{group}:{t}", u_turned, -1)

    nk = {c: len(kings[c]) for c in (True, False)}
    add("material", 0, len(men[True]) - len(men[False]))
    add("material", 1, (nk[True] >= 1) - (nk[False] >= 1))
    add("material", 2, (nk[True] >= 2) - (nk[False] >= 2))
    add("material", 3, max(nk[True] - 2, 0) - max(nk[False] - 2, 0))
    ahead = (len(men[True]) - len(men[False])) + 3 * (nk[True] - nk[False])
    ahead = (ahead > 0) - (ahead < 0)
    start = Board(variant).position
    gone = bin(start.white | start.black).count("1") - bin(p.white | p.black).count("1")
    add("trade", 0, ahead)
    add("trade", 1, ahead * gone)

    def to_go(colour: bool, s: int) -> int:  # rows to the crowning row
        row, _ = row_col(size, s)
        return row if colour else size - 1 - row

    phase = sum(to_go(c, s) for c in (True, False) for s in men[c])
    advanced = {c: sum(size - 1 - to_go(c, s) for s in men[c]) for c in (True, False)}
    add("tempo", 0, advanced[True] - advanced[False])
    add("side_to_move", 0, 1 if p.white_to_move else -1)

    def columns(colour: bool) -> list[int]:
        return [row_col(size, s)[1] for s in men[colour]]

    wing = {c: abs(sum(1 if col < size // 2 else -1 for col in columns(c))) for c in (True, False)}
    skew = {c: abs(sum(2 * col - (size - 1) for col in columns(c))) for c in (True, False)}
    add("balance", 0, wing[True] - wing[False])
    add("balance", 1, skew[True] - skew[False])

    def occupant(row: int, col: int) -> str:
        s = square_at(size, row, col)
        if s is None:
            return "edge"
        if p.white >> s & 1:
            return "white"
        if p.black >> s & 1:
            return "black"
        return "empty"

    blocked = {True: 0, False: 0}
    held = {True: 0, False: 0}
    for colour in (True, False):
        forward = -1 if colour else 1
        enemy = "black" if colour else "white"
        for s in men[colour]:
            row, col = row_col(size, s)
            ahead_squares = [occupant(row + forward, col + d) for d in (-1, 1)]
            if "empty" not in ahead_squares:
                blocked[colour] += 1
                held[colour] += enemy in ahead_squares
    add("formation", 0, blocked[True] - blocked[False])
    add("formation", 1, held[True] - held[False])

    for colour in (True, False):
        enemy = p.pieces(not colour)
        for s in men[colour]:
            togo = to_go(colour, s)
            if not 1 <= togo <= 3:
                continue
            row, col = row_col(size, s)
            stopper = False
            for e in range(n):
                if enemy >> e & 1:
                    erow, ecol = row_col(size, e)
                    dist = (row - erow) if colour else (erow - row)
                    stopper |= dist >= 1 and abs(ecol - col) <= dist + 1
            if not stopper:
                add("runaway", togo - 1 + (3 if kings[not colour] else 0), sign(colour))

    empty = [not ((p.white | p.black) >> s & 1) for s in range(n)]

    def denied(colour: bool, row: int, col: int) -> bool:
        """Could a man of the other colour capture a king of ``colour`` on (row, col)?"""
        if not variant.men_capture_kings:
            return False
        for dr, dc in ((-1, -1), (-1, 1), (1, -1), (1, 1)):  # from the man to the square
            man = square_at(size, row - dr, col - dc)
            beyond = square_at(size, row + dr, col + dc)
            if man is None or beyond is None or not empty[beyond] or man not in men[not colour]:
                continue
            forward = dr == (1 if colour else -1)  # Black's men move down the board
            if forward or variant.men_capture_backwards:
                return True
        return False

    for colour in (True, False):
        reach = refused = 0
        for s in kings[colour]:
            row, col = row_col(size, s)
            for dr, dc in ((-1, -1), (-1, 1), (1, -1), (1, 1)):
                r, c = row + dr, col + dc
                while (t := square_at(size, r, c)) is not None and empty[t]:
                    reach += 1
                    refused += denied(colour, r, c)
                    if not variant.flying_kings:
                        break
                    r, c = r + dr, c + dc
            add("king_square", s if colour else n - 1 - s, sign(colour))
        add("king_mobility", 0, sign(colour) * reach)
        add("king_mobility", 1, sign(colour) * refused)

    # drawish material: a lone king of either colour
    count = {True: bin(p.white).count("1"), False: bin(p.black).count("1")}
    has_king = {c: bool(kings[c]) for c in (True, False)}
    divisor = 1
    for colour in (True, False):
        n_other = count[not colour]
        if count[colour] != 1 or not has_king[colour]:
            continue
        if n_other == 1 and has_king[not colour]:
            divisor = 16
        elif size == 10 and has_king[not colour] and n_other <= 3:
            row, col = row_col(size, kings[colour][0])
            divisor = 32 if row + col == size - 1 or n_other <= 2 else 2
        elif size == 8 and variant.flying_kings and n_other <= 2:
            divisor = 16
    if size == 10 and divisor == 1:
        # the side ahead in material (a king three men), or both when level, against a king
        worth = {c: len(men[c]) + 3 * nk[c] for c in (True, False)}
        for colour in (True, False):
            if worth[colour] < worth[not colour] or not has_king[not colour]:
                continue
            if count[colour] <= 3:
                divisor = 8
            elif nk[True] == nk[False] and abs(len(men[True]) - len(men[False])) <= 1:
                divisor = max(divisor, 2)
    return entries, phase, divisor


def model_score(name: str, p: Position, w: np.ndarray) -> int:
    """The exact score of the model, side to move's view, rounded half away from zero."""
    entries, phase, divisor = model(name, p)
    total = layout(name).phase_total
    def units(i: int) -> int:
        return int(np.rint(w[i] * 16))

    x = sum(c * (units(2 * f) * phase + units(2 * f + 1) * (total - phase))
            for f, c in entries)
    den = total * 16 * divisor
    score = (abs(x) * 2 + den) // (2 * den) * (1 if x >= 0 else -1)
    return score if p.white_to_move else -score


# --- tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", VARIANTS)
def test_windows_are_those_of_the_model(name):
    size = get_variant(name).size
    lay = layout(name)
    assert [list(w) for w in lay.windows] == [w for w, _ in windows(size)]
    assert [list(w) for w in lay.rotated_windows] == [t for _, t in windows(size)]
    n = get_variant(name).squares
    for window, turned in windows(size):
        assert sorted(turned) == sorted(n - 1 - s for s in window)
    covered = {s for window, turned in windows(size) for s in window + turned}
    assert covered == set(range(get_variant(name).squares))
    assert [list(w) for w in lay.edge_windows] == [w for w, _ in edge_windows(size)]
    assert [list(w) for w in lay.rotated_edge_windows] == [t for _, t in edge_windows(size)]
    files = {row_col(size, s)[1] for window, turned in edge_windows(size) for s in window + turned}
    assert files == {0, 1, 2, size - 3, size - 2, size - 1}
    assert all(len(w) == 9 and len(t) == 9 for w, t in edge_windows(size))
    assert [list(w) for w in lay.wide_windows] == [w for w, _ in wide_windows(size)]
    assert [list(w) for w in lay.rotated_wide_windows] == [t for _, t in wide_windows(size)]
    assert all(len(w) == 12 and len(t) == 12 for w, t in wide_windows(size))
    assert len(wide_windows(size)) == (4 if size == 10 else 3)
    # the windows and their turned reads cover the whole board
    covered = {s for window, turned in wide_windows(size) for s in window + turned}
    assert covered == set(range(n))


@pytest.mark.parametrize("name", VARIANTS)
def test_core_score_is_the_models(name):
    w = random_weights(name)
    positions = game_positions(name)
    assert any(p.kings for p in positions) and any(not p.kings for p in positions)
    assert {model(name, p)[2] for p in positions} > {1}  # drawish material is covered
    if get_variant(name).size == 10:  # and each rule of it
        assert {model(name, p)[2] for p in positions} >= {1, 2, 8, 16, 32}
    denied = layout(name).group_slice("king_mobility").start // 2 + 1
    assert any(f == denied for p in positions for f, _c in model(name, p)[0]) \
        == get_variant(name).men_capture_kings
    score = scorer(name, w)
    assert static_eval(name, positions[0], w) == score(positions[0])  # the public entry
    for p in positions:
        assert score(p) == model_score(name, p, w), p


@pytest.mark.parametrize("name", VARIANTS)
def test_feature_rows_are_the_core_score(name):
    w = random_weights(name, seed=2)
    positions = game_positions(name)
    indptr, indices, values = feature_rows(
        name, [p.white for p in positions], [p.black for p in positions],
        [p.kings for p in positions], [p.white_to_move for p in positions])
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
    assert len(indptr) == len(positions) + 1
    dots = np.add.reduceat(w[indices] * values, indptr[:-1])
    score = scorer(name, w)
    scores = np.array([score(p) for p in positions])
    assert np.all(np.abs(dots - scores) <= 1), np.abs(dots - scores).max()
    assert np.array_equal(static_evals(
        name, [p.white for p in positions], [p.black for p in positions],
        [p.kings for p in positions], [p.white_to_move for p in positions], w), scores)
    assert np.all(np.abs(dots - scores) <= 0.5 + 1e-9)
    # float32 values give the same rows
    _, indices32, values32 = feature_rows(
        name, [p.white for p in positions], [p.black for p in positions],
        [p.kings for p in positions], [p.white_to_move for p in positions], dtype=np.float32)
    assert values32.dtype == np.float32 and np.array_equal(indices32, indices)
    assert np.allclose(values32, values, rtol=1e-6)


@pytest.mark.parametrize("name", VARIANTS)
def test_feature_rows_hold_the_model_features(name):
    """Each row lists the model's features (middlegame and endgame parameter of each), with
    the phase blend, draw divisor and side to move folded into the values."""
    positions = game_positions(name)[:40]
    indptr, indices, values = feature_rows(
        name, np.array([p.white for p in positions], np.uint64),
        np.array([p.black for p in positions], np.uint64),
        np.array([p.kings for p in positions], np.uint64),
        np.array([p.white_to_move for p in positions]))
    total = layout(name).phase_total
    for i, p in enumerate(positions):
        entries, phase, divisor = model(name, p)
        side = 1 if p.white_to_move else -1
        expected = {}
        for f, c in entries:
            for param, part in ((2 * f, phase), (2 * f + 1, total - phase)):
                if part:
                    expected[param] = expected.get(param, 0.0) + side * c * part / (total * divisor)
        got = {}
        for j in range(indptr[i], indptr[i + 1]):
            got[int(indices[j])] = got.get(int(indices[j]), 0.0) + float(values[j])
        assert {k for k, v in got.items() if abs(v) > 1e-12} == \
            {k for k, v in expected.items() if abs(v) > 1e-12}
        assert all(abs(got.get(k, 0.0) - v) < 1e-9 for k, v in expected.items())


@pytest.mark.parametrize("name", VARIANTS)
def test_mirrored_position_scores_the_same_for_the_side_to_move(name):
    w = random_weights(name, seed=3)
    size = get_variant(name).size
    checked = 0
    score = scorer(name, w)
    for p in game_positions(name):
        m = mirror(size, p)
        assert score(m) == score(p), p
        checked += score(p) != 0
    assert checked > 10


def test_mirror_check_is_not_trivially_true():
    """Swapping the colours without turning the board is no symmetry of draughts: with the
    same weights those positions score differently, so the check above can tell."""
    name = "international"
    score = scorer(name, random_weights(name, seed=3))
    differ = 0
    for p in game_positions(name)[:40]:
        swapped = Position(p.black, p.white, p.kings, not p.white_to_move)
        differ += score(swapped) != score(p)
    assert differ > 20


@pytest.mark.parametrize("name", VARIANTS)
def test_search_uses_the_same_score(name, tmp_path):
    w = random_weights(name, seed=5)
    write_weights(tmp_path / "w.dkw", name, w)
    engine = Engine(name, hash_mb=1, weights=tmp_path / "w.dkw")
    score = scorer(name, w)
    for p in game_positions(name)[:10]:
        engine._searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        expected = max(-20000, min(20000, score(p)))
        assert engine._searcher.evaluate() == expected


def test_feature_rows_reject_a_non_position():
    with pytest.raises(ValueError, match="row 1"):
        feature_rows("english", [1, 3], [2, 2], [0, 0], [True, False])
    with pytest.raises(ValueError, match="row 0"):
        feature_rows("english", [1 << 32], [2], [0], [True])
    with pytest.raises(ValueError, match="row 1"):
        static_evals("english", [1, 1], [2, 2], [0, 4], [True, False])
    with pytest.raises(ValueError, match="length"):
        feature_rows("english", [1, 1], [2], [0], [True])


# --- weights files ----------------------------------------------------------------------

@pytest.mark.parametrize("name", VARIANTS)
def test_shipped_weights_load_and_the_house_rule_shares_them(name):
    path = default_weights_path(name)
    w = read_weights(path, name)
    assert w.shape == (layout(name).n_params,) and np.any(w != 0)
    if get_variant(name).size == 8:
        house = get_variant(name, forced_capture=False)
        assert default_weights_path(house) == path
        assert Engine(house, hash_mb=1, evaluation="learned").evaluation == "learned"


def test_round_trip(tmp_path):
    w = random_weights("russian") + 1 / 64  # not a multiple of 1/16: stored rounded
    path = tmp_path / "w.dkw"
    write_weights(path, "russian", w)
    assert np.array_equal(read_weights(path, "russian"), np.rint(w * 16) / 16)
    with pytest.raises(ValueError, match="does not fit"):
        write_weights(path, "russian", np.full(layout("russian").n_params, 5000.0))
    with pytest.raises(ValueError, match="needs"):
        write_weights(path, "russian", w[:-1])


@pytest.fixture
def good_file(tmp_path) -> Path:
    path = tmp_path / "good.dkw"
    write_weights(path, "italian", random_weights("italian"))
    return path


def _rejects(path: Path, variant: str, match: str) -> None:
    with pytest.raises(WeightsError, match=match) as info:
        read_weights(path, variant)
    message = str(info.value)
    assert str(path) in message and layout(variant).fingerprint in message
    with pytest.raises(WeightsError):
        Engine(variant, hash_mb=1, weights=path)


def test_missing_file_is_refused(tmp_path):
    _rejects(tmp_path / "nothing.dkw", "italian", "no such file")


@pytest.mark.parametrize("keep", [0, 10, 55, 56, 300, -1])
def test_truncated_file_is_refused(good_file, keep):
    data = good_file.read_bytes()
    good_file.write_bytes(data[:keep] if keep >= 0 else data[:-1])
    _rejects(good_file, "italian", "truncated")


@pytest.mark.parametrize("where", ["payload", "checksum", "magic", "trailing"])
def test_corrupt_file_is_refused(good_file, where):
    data = bytearray(good_file.read_bytes())
    if where == "payload":
        data[200] ^= 0x55
        match = "corrupt"
    elif where == "checksum":
        data[52] ^= 0x01
        match = "checksum"
    elif where == "magic":
        data[0:8] = b"NOTDAMKA"
        match = "bad magic"
    else:
        data += b"\0"
        match = "corrupt"
    good_file.write_bytes(bytes(data))
    _rejects(good_file, "italian", match)


def test_payload_that_decompresses_to_other_values_is_refused(good_file):
    """A payload replaced by valid zlib data of the right size but other values: the
    checksum of the parameters catches it."""
    data = good_file.read_bytes()
    n = layout("italian").n_params
    payload = zlib.compress(np.zeros(n, "<i2").tobytes())
    header = bytearray(data[:56])
    header[48:52] = len(payload).to_bytes(4, "little")
    good_file.write_bytes(bytes(header) + payload)
    _rejects(good_file, "italian", "checksum")


def _with_payload(path: Path, payload: bytes) -> None:
    """The file at ``path`` with its payload replaced (and the header's payload length)."""
    header = bytearray(path.read_bytes()[:56])
    header[48:52] = len(payload).to_bytes(4, "little")
    path.write_bytes(bytes(header) + payload)


def zeros_compressed(size: int) -> bytes:
    """``size`` zero bytes zlib-compressed, a megabyte at a time: a zip bomb (200 MB are 0.2 MB)
    made without holding it whole."""
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    return b"".join(z.compress(chunk) for _ in range(size >> 20)) + z.flush()


def test_payload_that_expands_far_beyond_the_header_is_refused_without_inflating_it(good_file):
    """A small file whose payload expands to 200 MB: refused, and never inflated whole."""
    _with_payload(good_file, zeros_compressed(200 << 20))
    assert good_file.stat().st_size < 1 << 20
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(WeightsError, match="more than") as info:
            read_weights(good_file, "italian")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 2 and peak < 20 << 20
    assert str(good_file) in str(info.value)
    _rejects(good_file, "italian", "more than")


#: payloads that are valid zlib but not the header's size, by what they make of the parameters
OTHER_SIZES = {
    "one-too-many": (lambda raw: zlib.compress(raw + bytes(2)), "more than"),
    "half-a-parameter-short": (lambda raw: zlib.compress(raw[:-1]), "bytes for"),
    "bytes-after-the-stream": (lambda raw: zlib.compress(raw) + b"junk", "after the compressed"),
    "end-of-stream-cut": (lambda raw: zlib.compress(raw)[:-4], "incomplete"),
}


@pytest.mark.parametrize("make, match", OTHER_SIZES.values(), ids=OTHER_SIZES)
def test_payload_of_another_size_than_the_header_says_is_refused(good_file, make, match):
    _with_payload(good_file, make(np.zeros(layout("italian").n_params, "<i2").tobytes()))
    _rejects(good_file, "italian", match)


def _version_1_file(path: Path, name: str, params: np.ndarray) -> None:
    """A file of format version 1, made by hand: every parameter in the payload."""
    raw = params.astype("<i2").tobytes()
    payload = zlib.compress(raw)
    path.write_bytes(b"DAMKAEVW" + (1).to_bytes(2, "little") + (16).to_bytes(2, "little")
                     + name.encode().ljust(16, b"\0") + layout(name).fingerprint.encode()
                     + (len(params)).to_bytes(4, "little") + len(payload).to_bytes(4, "little")
                     + zlib.crc32(raw).to_bytes(4, "little") + payload)


def test_trailing_zeros_are_left_out_of_the_file_and_read_back_as_zeros(tmp_path):
    """Format version 2 stores the parameters up to the last non-zero one; a version 1 file
    of the same weights, which stores them all, reads the same."""
    w = random_weights("italian")
    w[len(w) // 3:] = 0
    w[len(w) // 3 - 1] = 1 / 16  # the last non-zero parameter: 1, whose high byte is zero
    new, old = tmp_path / "v2.dkw", tmp_path / "v1.dkw"
    write_weights(new, "italian", w)
    _version_1_file(old, "italian", np.rint(w * 16))
    data = new.read_bytes()
    assert int.from_bytes(data[8:10], "little") == 2
    assert len(zlib.decompress(data[56:])) == 2 * (len(w) // 3)
    assert np.array_equal(read_weights(new, "italian"), w)
    assert np.array_equal(read_weights(old, "italian"), w)
    assert new.stat().st_size < old.stat().st_size
    assert Engine("italian", hash_mb=1, weights=new).evaluation == "learned"


def test_a_version_1_file_must_hold_every_parameter(tmp_path):
    """Only version 2 leaves trailing zeros out: a version 1 payload one parameter short is
    refused, as is a format version this engine does not know."""
    path = tmp_path / "v1.dkw"
    _version_1_file(path, "italian", np.ones(layout("italian").n_params - 1))
    data = bytearray(path.read_bytes())
    data[44:48] = (layout("italian").n_params).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    _rejects(path, "italian", "bytes for")
    data[8:10] = (3).to_bytes(2, "little")
    path.write_bytes(bytes(data))
    _rejects(path, "italian", "format version 3, this engine reads 1 and 2")


def test_wrong_variant_is_refused(good_file):
    # English has the same layout as Italian: only the rule set name differs
    assert layout("english").fingerprint == layout("italian").fingerprint
    _rejects(good_file, "english", "for 'italian'")


def test_wrong_layout_is_refused(good_file, tmp_path):
    data = bytearray(good_file.read_bytes())
    data[28:44] = b"0123456789abcdef"
    good_file.write_bytes(bytes(data))
    _rejects(good_file, "italian", "its layout is 0123456789abcdef")
    # a file of the other board size
    other = tmp_path / "ten.dkw"
    write_weights(other, "international", random_weights("international"))
    data = bytearray(other.read_bytes())
    data[12:28] = b"italian".ljust(16, b"\0")
    other.write_bytes(bytes(data))
    _rejects(other, "italian", "its layout is")


def test_engine_evaluation_choice(good_file):
    assert Engine("italian", hash_mb=1, evaluation="classic").evaluation == "classic"
    assert Engine("italian", hash_mb=1, weights=good_file).evaluation == "learned"
    with pytest.raises(ValueError, match="classic evaluation takes no weights"):
        Engine("italian", hash_mb=1, evaluation="classic", weights=good_file)
    with pytest.raises(ValueError, match="evaluation must be"):
        Engine("italian", hash_mb=1, evaluation="neural")


# --- files of layouts 1 and 2 (before the edge tables and the denied king squares; before
# the wide tables) -----------------------------------------------------------------------

#: the layout fingerprints of the weights files shipped before layout 2 (commit a2e3999) and
#: before layout 3 (the files of the data run of issue 32 and of the commits before it)
LAYOUT_FINGERPRINTS = {1: {10: "7bb98012ee68d501", 8: "d58aba91b72ca21e"},
                       2: {10: "e00b5e90e88d3a4c", 8: "61cd81d3c1810252"}}


def _wide_params(name: str) -> int:
    return 2 * (get_variant(name).size // 2 - 1) * 3 ** 12


def _old_params(name: str, version: int) -> int:
    """Layout 2 had no wide tables; layout 1 had neither edge table (2 x 3^9 features) nor
    the denied king squares."""
    n = layout(name).n_params - _wide_params(name)
    return n - 2 * (2 * 3 ** 9 + 1) if version == 1 else n


def _old_file(path: Path, name: str, version: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    params = rng.integers(-3000, 3000, _old_params(name, version)).astype("<i2")
    header = WeightsHeader(name, LAYOUT_FINGERPRINTS[version][get_variant(name).size],
                           len(params))
    write_params(path, header, params.tobytes())
    return params


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("name", ["international", "russian"])
def test_a_file_of_an_old_layout_is_refused_saying_how_to_upgrade_it(name, version, tmp_path):
    path = tmp_path / "old.dkw"
    _old_file(path, name, version)
    for load in (lambda: read_weights(path, name), lambda: Engine(name, hash_mb=1, weights=path)):
        with pytest.raises(WeightsError) as info:
            load()
        message = str(info.value)
        assert str(path) in message and f"layout {version}" in message
        assert f"damka tune --upgrade {path}" in message


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("name", ["international", "english"])
def test_upgrade_keeps_every_parameter_of_an_old_layout_under_its_name(name, version, tmp_path):
    old = _old_file(tmp_path / "old.dkw", name, version)
    assert upgrade_file(name, tmp_path / "old.dkw", tmp_path / "new.dkw") == version
    new = np.rint(read_weights(tmp_path / "new.dkw", name) * 16).astype(np.int64)
    lay = layout(name)
    added = ("wide:",) if version == 2 else ("edge:", "wide:")
    at = 0
    for group, offset, size in lay.groups:
        if group.startswith(added):
            assert not new[offset:offset + size].any()  # the new tables start at zero
            continue
        # (layout 1's king mobility had "squares" as its only feature)
        kept = 2 if group == "king_mobility" and version == 1 else size
        assert np.array_equal(new[offset:offset + kept], old[at:at + kept]), group
        assert not new[offset + kept:offset + size].any()
        at += kept
    assert at == len(old)
    with pytest.raises(WeightsError, match="already of the current layout"):
        upgrade_file(name, tmp_path / "new.dkw", tmp_path / "again.dkw")


@pytest.mark.parametrize("kind", ["edge", "wide"])
@pytest.mark.parametrize("name", ["international", "czech"])
def test_optional_tables_are_skipped_only_when_all_their_weights_are_zero(name, kind):
    lay = layout(name)
    names = [g for g, _offset, _size in lay.groups if g.startswith(kind + ":")]
    tables = slice(lay.group_slice(names[0]).start, lay.group_slice(names[-1]).stop)
    reads = {"edge": lambda core: core.reads_edges, "wide": lambda core: core.reads_wide}[kind]
    w = random_weights(name, seed=11)
    w[tables] = 0.0
    assert not reads(eval_core(name, w))
    positions = game_positions(name)[:60]
    score = scorer(name, w)
    for p in positions:
        assert score(p) == model_score(name, p, w), p
    # one non-zero entry: the middlegame weight of a feature of these tables the first
    # position reads
    feature = next(f for f, _c in model(name, positions[0])[0]
                   if tables.start <= 2 * f < tables.stop)
    w[2 * feature] = 500.0
    assert reads(eval_core(name, w))
    outside = (np.arange(lay.n_params) < tables.start) | (np.arange(lay.n_params) >= tables.stop)
    moved = 0
    score = scorer(name, w)
    for p in positions:
        assert score(p) == model_score(name, p, w), p
        moved += model_score(name, p, w) != model_score(name, p, np.where(outside, w, 0.0))
    assert moved > 0
