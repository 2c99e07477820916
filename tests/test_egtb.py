"""Endgame databases: small builds (up to 3 pieces, kings-only 4-piece endings) checked
against an independent fixpoint, a search over the reference generator, the storage round
trip, corrupt files, known endings of the rule books and the command line."""

from __future__ import annotations

import random
import shutil
import time
import tracemalloc
import zlib
from functools import lru_cache

import numpy as np
import pytest

from engine import _core, reference
from engine.board import Board
from engine.egtb import DRAW, LOSS, WIN, EgtbError, Material, TableFile, Tablebase, build
from engine.egtb.builder import load_into, solver
from engine.egtb.verify import verify
from engine.egtb.storage import _CRC, _HEAD, BLOCK, KIND_DTC, MAGIC, VERSION, write_table
from engine.position import Position
from engine.squares import row_col
from engine.variants import VARIANTS, get_variant
from protocol.cli import main

ALL = [v.name for v in VARIANTS]


@pytest.fixture(scope="module")
def db3(tmp_path_factory):
    """Every rule set's databases up to 3 pieces, in one directory."""
    root = tmp_path_factory.mktemp("egtb3")
    for name in ALL:
        build(get_variant(name), 3, root, workers=2)
    return root


def _kings_only_3v1(m: Material) -> bool:
    return m.men == 0 and not (m.wk >= 2 and m.bk >= 2)


@pytest.fixture(scope="module")
def db_kings(tmp_path_factory):
    """Russian three kings against one (and what they lead to)."""
    root = tmp_path_factory.mktemp("egtbk")
    build(get_variant("russian"), 4, root, workers=2, only=_kings_only_3v1)
    return root


def _quiet(variant, position: Position) -> bool:
    """Neither side has a capture (tactics aside, the textbook rules speak of these)."""
    for wtm in (True, False):
        p = Position(position.white, position.black, position.kings, wtm)
        if any(m[2] for m in _core.generate(variant, p)):
            return False
    return True


def _slice_positions(variant, m: Material):
    s = solver(variant)
    for idx in range(s.slice_size(*m)):
        masks = s.position(tuple(m), idx)
        if masks is not None:
            yield idx, Position(*masks, True)


def _long_diagonal(variant) -> set[int]:
    return {q for q in range(variant.squares) if sum(row_col(variant.size, q)) == variant.size - 1}


# -- correctness of the solver -------------------------------------------------------------


def _fixpoint(variant, tb: Tablebase, pair: tuple[Material, Material]) -> dict:
    """Win/draw/loss of a slice pair by plain value iteration over the generator's moves,
    with everything outside the pair taken from the databases (a second, simpler solver)."""
    s = solver(variant)
    nodes, succ = [], []
    key = {}
    for m in pair:
        for idx, p in _slice_positions(variant, m):
            key[(m, idx)] = len(nodes)
            nodes.append((m, idx, p))
    for m, idx, p in nodes:
        out = []
        for move in _core.generate(variant, p):
            child = reference.play(variant, p, reference.RefMove(*move))
            sig, cidx = s.index(child.white, child.black, child.kings, child.white_to_move)
            if sig is None:
                out.append((False, LOSS))
            elif Material(*sig) in pair:
                out.append((True, key[(Material(*sig), cidx)]))
            else:
                out.append((False, tb.probe(child).result))
        succ.append(out)
    result: list[int | None] = [None] * len(nodes)
    changed = True
    while changed:
        changed = False
        for n, out in enumerate(succ):
            if result[n] is not None:
                continue
            values = [result[r] if inside else r for inside, r in out]
            if not out or all(v == WIN for v in values):
                result[n] = LOSS
            elif any(v == LOSS for v in values):
                result[n] = WIN
            else:
                continue
            changed = True
    return {(m, idx): (r if r is not None else DRAW) for (m, idx, _), r in zip(nodes, result)}


@pytest.mark.parametrize("name,pair", [
    ("english", (Material(0, 2, 0, 1), Material(0, 1, 0, 2))),
    ("russian", (Material(0, 2, 0, 1), Material(0, 1, 0, 2))),
    ("italian", (Material(1, 1, 0, 1), Material(0, 1, 1, 1))),
    ("czech", (Material(2, 0, 1, 0), Material(1, 0, 2, 0))),
])
def test_values_equal_an_independent_fixpoint(db3, name, pair):
    variant = get_variant(name)
    tb = Tablebase(variant, db3)
    expected = _fixpoint(variant, tb, pair)
    s = solver(variant)
    wrong = [(m, idx) for (m, idx), r in expected.items()
             if tb.probe(Position(*s.position(tuple(m), idx), True)).result != r]
    assert not wrong, f"{len(wrong)} of {len(expected)} differ, e.g. {wrong[:3]}"
    assert {WIN, LOSS} <= set(expected.values())


def _search(variant, position: Position, depth: int, memo: dict) -> int | None:
    """Exact result if the game ends within ``depth`` plies whatever the loser does, else
    None: full-width minimax over the reference generator (independent of the core)."""
    k = (position, depth)
    if k in memo:
        return memo[k]
    moves = reference.legal_moves(variant, position)
    if not moves:
        out: int | None = LOSS
    elif depth == 0:
        out = None
    else:
        children = [_search(variant, reference.play(variant, position, m), depth - 1, memo)
                    for m in moves]
        if any(c == LOSS for c in children):
            out = WIN
        elif all(c == WIN for c in children):
            out = LOSS
        else:
            out = None
    memo[k] = out
    return out


def _random_three(variant, rng: random.Random) -> Position:
    """A random 3-piece position, half of them with Black to move (turned and recoloured)."""
    s = solver(variant)
    materials = [m for m in _materials(3) if m.pieces == 3]
    n = variant.squares
    while True:
        m = rng.choice(materials)
        masks = s.position(tuple(m), rng.randrange(s.slice_size(*m)))
        if masks is None:
            continue
        if rng.random() < 0.5:
            return Position(*masks, True)
        turned = [sum(1 << (n - 1 - q) for q in range(n) if mask >> q & 1) for mask in masks]
        return Position(turned[1], turned[0], turned[2], False)


@lru_cache(maxsize=None)
def _materials(n: int) -> tuple[Material, ...]:
    from engine.egtb import signatures

    return tuple(signatures(n))


@pytest.mark.parametrize("name", [  # three sets in the plain run, the rest in the slow tier
    n if n in ("international", "english", "russian") else pytest.param(n, marks=pytest.mark.slow)
    for n in ALL])
def test_values_agree_with_a_search_over_the_reference_generator(db3, name):
    variant = get_variant(name)
    tb = Tablebase(variant, db3)
    rng = random.Random(f"egtb-{name}")
    memo: dict = {}
    compared = 0
    for _ in range(20 if variant.size == 10 else 40):
        p = _random_three(variant, rng)
        stored = tb.probe(p)
        proven = _search(variant, p, 5, memo)
        if proven is not None:
            compared += 1
            assert stored.result == proven, (Board(variant, p).fen(), stored, proven)
    assert compared >= 5, f"only {compared} positions were decided by the search"


@pytest.mark.parametrize("name", ALL)
def test_values_agree_with_successors_from_the_reference_generator(db3, name):
    """One ply with the reference generator's moves: each stored value is the best of its
    successors' (captures and crownings reset the distance)."""
    variant = get_variant(name)
    tb = Tablebase(variant, db3)
    rng = random.Random(f"succ-{name}")
    for _ in range(150):
        p = _random_three(variant, rng)
        stored = tb.probe(p)
        best = None
        for move in reference.legal_moves(variant, p):
            v = tb.probe(reference.play(variant, p, move))
            result = -v.result
            plies = 1 + (0 if (move.captured or move.promotes) else v.plies)
            # a win is better the sooner it converts, a loss the later
            key = (result, -plies if result == WIN else plies if result == LOSS else 0)
            if best is None or key > best[0]:
                best = (key, (result, plies if result != DRAW else 0))
        expected = (LOSS, 0) if best is None else best[1]
        assert (stored.result, stored.plies) == expected, Board(variant, p).fen()


def test_verify_finds_every_stored_value_consistent(db3):
    for name in ALL:
        checks = verify(get_variant(name), db3)
        assert checks and all(c.bad == 0 for c in checks)


def test_verify_reports_a_wrong_value(db3, tmp_path):
    variant = get_variant("english")
    shutil.copytree(db3 / "english", tmp_path / "english")
    m = Material(0, 2, 0, 1)
    f = TableFile(tmp_path / "english" / f"{m.name}.egtb", "english")
    table = f.table()
    f.close()
    idx = int(np.flatnonzero((table >= 1) & (table <= 127))[0])
    table[idx] = 0
    write_table(tmp_path / "english" / f"{m.name}.egtb", "english", m, table)
    bad = {c.material: c for c in verify(variant, tmp_path)}[m]
    assert bad.bad >= 1 and bad.first_bad == idx
    # slices checked side by side find the same, and report in the same order
    one = [c[:4] for c in verify(variant, tmp_path)]
    assert [c[:4] for c in verify(variant, tmp_path, workers=3)] == one
    assert main(["egtb", "verify", "--variant", "english", "--dir", str(tmp_path),
                 "--workers", "2"]) == 1


# -- storage -----------------------------------------------------------------------------


def _three_piece_slice(variant, tmp_path, m: Material) -> tuple:
    """A solver holding the built 2-piece tables of ``variant`` and empty tables for the
    3-piece slice ``m`` and its partner: (solver, a, b)."""
    build(variant, 2, tmp_path)
    s = solver(variant)
    for two in _materials(2):
        s.add(tuple(two), TableFile(tmp_path / variant.name / f"{two.name}.egtb",
                                    variant.name).table())
    a = np.zeros(s.slice_size(*m), dtype=np.uint8)
    b = np.zeros(s.slice_size(*m.partner), dtype=np.uint8)
    return s, a, b


def test_round_trip_build_compress_probe_equals_the_table(tmp_path):
    variant = get_variant("brazilian")
    m = Material(1, 0, 0, 1)
    s, a, b = _three_piece_slice(variant, tmp_path, m)
    s.solve(tuple(m), a, b, np.zeros(2, dtype=np.uint64), 0)
    path = tmp_path / "brazilian" / f"{m.name}.egtb"
    write_table(path, "brazilian", m, a)
    f = TableFile(path, "brazilian", m, len(a))
    assert np.array_equal(f.table(), a)
    assert all(f.value(i) == a[i] for i in range(0, len(a), 7))
    write_table(tmp_path / "brazilian" / f"{m.partner.name}.egtb", "brazilian", m.partner, b)
    tb = Tablebase(variant, tmp_path)
    for idx, p in _slice_positions(variant, m):
        v = tb.probe(p)
        assert v.result == (DRAW if a[idx] == 0 else WIN if a[idx] < 128 else LOSS)
    assert f.size < len(a)


def _a_file(db3, tmp_path, name="russian") -> tuple:
    shutil.copytree(db3 / name, tmp_path / name)
    m = Material(0, 2, 0, 1)
    return tmp_path / name / f"{m.name}.egtb", m


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "empty"])
def test_corrupt_files_are_refused(db3, tmp_path, damage):
    path, m = _a_file(db3, tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-5] ^= 0x40
    elif damage == "truncate":
        data = data[:-10]
    elif damage == "header":
        data[30] ^= 1
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with pytest.raises(EgtbError):
        TableFile(path, "russian", m)
    with pytest.raises(EgtbError):
        Tablebase(get_variant("russian"), tmp_path)


def _file_of_blocks(path, variant_name: str, m: Material, entries: int, blocks: list) -> None:
    """A database file with these compressed blocks, its header and checksums right: only
    decoding a block can find it bad."""
    offsets = np.zeros(len(blocks) + 1, dtype="<u8")
    np.cumsum([len(b) for b in blocks], out=offsets[1:])
    payload = offsets.tobytes() + b"".join(blocks)
    head = _HEAD.pack(MAGIC, VERSION, variant_name.encode(), *m, KIND_DTC, 0, BLOCK, entries,
                      len(blocks), zlib.crc32(payload))
    path.write_bytes(head + _CRC.pack(zlib.crc32(head)) + payload)


def zeros_compressed(size: int) -> bytes:
    """``size`` zero bytes zlib-compressed, a megabyte at a time: a zip bomb (200 MB are 0.2 MB)
    made without holding it whole."""
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    return b"".join(z.compress(chunk) for _ in range(size >> 20)) + z.flush()


def test_block_that_expands_far_beyond_its_size_is_refused_without_inflating_it(tmp_path):
    """A small file whose first block expands to 200 MB instead of 4096 entries: refused, and
    never inflated whole."""
    path, m = tmp_path / "bomb.egtb", Material(0, 2, 0, 1)
    _file_of_blocks(path, "russian", m, BLOCK + 10,
                    [zeros_compressed(200 << 20), zlib.compress(bytes(10))])
    assert path.stat().st_size < 1 << 20
    f = TableFile(path, "russian", m)
    assert f.value(BLOCK) == 0  # the second block is sound
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(EgtbError, match=r"block 0 has the wrong length \(more than") as info:
            f.value(0)
        with pytest.raises(EgtbError, match="block 0"):
            f.table()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 2 and peak < 20 << 20
    assert str(path) in str(info.value)


#: blocks that are valid zlib but not a block's size, by what they hold
OTHER_BLOCKS = {
    "one-entry-too-many": (zlib.compress(bytes(BLOCK + 1)), "more than 4096 entries"),
    "one-entry-too-few": (zlib.compress(bytes(BLOCK - 1)), "4095 of 4096 entries"),
    "bytes-after-the-stream": (zlib.compress(bytes(BLOCK)) + b"junk", "bytes after"),
    "end-of-stream-cut": (zlib.compress(bytes(BLOCK))[:-4], "does not end"),
}


@pytest.mark.parametrize("block, match", OTHER_BLOCKS.values(), ids=OTHER_BLOCKS)
def test_block_of_another_size_than_the_header_says_is_refused(tmp_path, block, match):
    path, m = tmp_path / "bad.egtb", Material(0, 2, 0, 1)
    _file_of_blocks(path, "russian", m, 2 * BLOCK, [zlib.compress(bytes(BLOCK)), block])
    f = TableFile(path, "russian", m)
    assert f.value(0) == 0
    with pytest.raises(EgtbError, match=f"{path.name}: block 1 has the wrong length.*{match}"):
        f.value(BLOCK)


def test_mismatched_files_are_refused(db3, tmp_path):
    path, m = _a_file(db3, tmp_path)
    with pytest.raises(EgtbError, match="rule set"):
        TableFile(path, "czech", m)
    other = path.with_name(f"{Material(0, 1, 0, 2).name}.egtb.x")
    with pytest.raises(EgtbError, match="material"):
        TableFile(path, "russian", Material(0, 1, 0, 2))
    # a russian file put among the czech ones
    shutil.copytree(db3 / "czech", tmp_path / "czech")
    shutil.copy(path, tmp_path / "czech" / path.name)
    with pytest.raises(EgtbError, match="russian"):
        Tablebase(get_variant("czech"), tmp_path)
    assert not other.exists()


def test_cli_reports_a_corrupt_file_in_one_line(db3, tmp_path, capsys):
    path, _ = _a_file(db3, tmp_path)
    path.write_bytes(path.read_bytes()[:-3])
    code = main(["egtb", "probe", "--variant", "russian", "--fen", "W:WKa1,Kc3:BKh8",
                 "--dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("damka: error:") and "checksum" in err
    assert len(err.strip().splitlines()) == 1


# -- known endings -------------------------------------------------------------------------


def test_english_two_kings_beat_one_king(db3):
    """Two kings win, except where the lone king hems them into a corner (at most four
    moves left to them): a handful of positions in twelve thousand."""
    variant = get_variant("english")
    tb = Tablebase(variant, db3)
    quiet = [p for _, p in _slice_positions(variant, Material(0, 2, 0, 1)) if _quiet(variant, p)]
    draws = [p for p in quiet if tb.probe(p).result != WIN]
    assert len(draws) < 0.002 * len(quiet)
    assert all(len(_core.generate(variant, p)) <= 4 for p in draws)
    assert tb.probe(Board(variant, "W:WK1,K2:BK30").position).result == WIN


def test_russian_three_kings_win_unless_the_lone_king_holds_the_long_diagonal(db_kings):
    """Petrov's triangle: three kings beat one king that is off the long diagonal (a1-h8);
    a lone king on it, with no stronger king there, holds the draw (tactics aside)."""
    variant = get_variant("russian")
    tb = Tablebase(variant, db_kings)
    diagonal = _long_diagonal(variant)
    off, on = [], []
    for _, p in _slice_positions(variant, Material(0, 3, 0, 1)):
        if not _quiet(variant, p):
            continue
        lone = p.black.bit_length() - 1
        result = tb.probe(p).result
        if lone not in diagonal:
            off.append(result)
        elif not p.white & sum(1 << q for q in diagonal):
            on.append(result)
    assert set(off) == {WIN}
    assert on.count(DRAW) > 0.9 * len(on)
    assert tb.probe(Board(variant, "W:WKc1,Ke1,Kg1:BKh8").position).result == DRAW
    assert tb.probe(Board(variant, "W:WKa1,Kc1,Ke1:BKh2").position).result == WIN


@pytest.mark.long
def test_international_lone_king_on_the_long_diagonal_draws_against_three_kings(tmp_path):
    """About a minute of building on two loaded cores: run by hand with -m long."""
    variant = get_variant("international")
    build(variant, 4, tmp_path, workers=2, only=_kings_only_3v1)
    tb = Tablebase(variant, tmp_path)
    diagonal = _long_diagonal(variant)
    on = []
    for _, p in _slice_positions(variant, Material(0, 3, 0, 1)):
        lone = p.black.bit_length() - 1
        if lone in diagonal and not p.white & sum(1 << q for q in diagonal) and _quiet(variant, p):
            on.append(tb.probe(p).result)
    assert on.count(DRAW) > 0.9 * len(on)
    assert tb.probe(Board(variant, "W:WK1,K2,K3:BK46").position).result == DRAW


def test_a_won_position_is_converted(db_kings):
    """Playing the database's moves (winner fastest, loser slowest) converts within the
    stored distance each time, and the game ends in the win: progress, not shuffling."""
    variant = get_variant("russian")
    tb = Tablebase(variant, db_kings)
    board = Board(variant, "W:WKa1,Kc1,Ke1:BKh2")
    value = tb.probe(board.position)
    assert value.result == WIN
    budget, since = value.plies, 0
    for _ply in range(200):
        moves = tb.best_moves(board)
        if not moves:
            break
        move = moves[0][0]
        board.push(move)
        since += 1
        if move.captured or move.promotes:
            assert since <= budget
            after = tb.probe(board.position)
            budget, since = (after.plies if after else 0), 0
        else:
            assert since < budget or budget == 0
    assert board.outcome() is not None and board.outcome().winner is True


# -- command line --------------------------------------------------------------------------


def test_cli_build_probe_verify(tmp_path, capsys):
    d = str(tmp_path)
    assert main(["egtb", "build", "--variant", "spanish", "--pieces", "2", "--dir", d]) == 0
    out = capsys.readouterr().out
    assert "positions examined" in out and "/s" in out
    # a king in the corner shares the long diagonal with the other: every move is taken
    assert main(["egtb", "probe", "--variant", "spanish", "--fen", "W:WK1:BK32", "--dir", d]) == 0
    assert "loss (2 plies" in capsys.readouterr().out
    assert main(["egtb", "probe", "--variant", "spanish", "--fen", "W:WK6:BK32", "--dir", d]) == 0
    assert "draw" in capsys.readouterr().out
    assert main(["egtb", "verify", "--dir", d]) == 0
    assert "all values agree" in capsys.readouterr().out
    # resumable: a second run finds everything built
    assert main(["egtb", "build", "--variant", "spanish", "--pieces", "2", "--dir", d]) == 0
    assert "already built" in capsys.readouterr().out
    code = main(["egtb", "probe", "--variant", "spanish", "--fen", "W:W1,2,3:B30", "--dir", d])
    assert code == 2 and "not in the databases" in capsys.readouterr().err
    code = main(["egtb", "build", "--variant", "spanish", "--pieces", "9", "--dir", d])
    assert code == 2


# -- use in play -----------------------------------------------------------------------------


def test_engine_with_databases_converts_a_win(db_kings):
    from engine.search import Engine, Limits

    variant = get_variant("russian")
    engine = Engine(variant, egtb=db_kings)
    board = Board(variant, "W:WKa1,Kc1,Ke1:BKh2")
    result = engine.search(board, Limits(depth=3))
    assert result.egtb is not None and result.egtb.result == WIN
    keep = [m for m, _ in Tablebase(variant, db_kings).best_moves(board)]
    assert result.best_move in keep
    for _ in range(80):
        if board.outcome() is not None:
            break
        board.push(engine.search(board, Limits(depth=3)).best_move)
    assert board.outcome() is not None and board.outcome().winner is True


def test_a_win_the_counting_rule_cuts_short_is_a_draw(db_kings):
    from engine.draws import DrawCounters
    from engine.egtb.root import root_moves

    variant = get_variant("russian")
    tb = Tablebase(variant, db_kings)
    board = Board(variant, "W:WKa1,Kc1,Ke1:BKh2")
    plies = tb.probe(board.position).plies
    value, moves = root_moves(tb, board, DrawCounters(no_progress=80 - plies))
    assert value.result == WIN and value.plies == plies and moves
    value, moves = root_moves(tb, board, DrawCounters(no_progress=80 - plies + 1))
    assert value.result == DRAW and len(moves) == len(board.legal_moves)


def test_engine_refuses_a_directory_without_databases(tmp_path):
    from engine.search import Engine

    with pytest.raises(ValueError, match="no endgame databases"):
        Engine("english", egtb=tmp_path)


def test_match_spec_and_analyse_take_databases(db_kings, capsys):
    from protocol.match.engines import EngineSpecError, parse_engine

    assert parse_engine(f"damka egtb={db_kings}").egtb == str(db_kings)
    with pytest.raises(EngineSpecError):
        parse_engine("damka egtb=/no/such/dir")
    code = main(["analyse", "--variant", "russian", "--fen", "W:WKa1,Kc1,Ke1:BKh2",
                 "--depth", "2", "--egtb", str(db_kings)])
    assert code == 0 and "egtb win" in capsys.readouterr().out


def test_loading_the_tables_reports_its_progress(db3):
    """memory_solver reports the entries decompressed after every file, up to the entries
    of all files, and only while it loads (a second call finds them in memory)."""
    tb = Tablebase(get_variant("english"), db3)
    calls = []
    tb.memory_solver(on_progress=lambda done, total: calls.append((done, total)))
    assert len(calls) == len(tb) > 1
    assert [t for _, t in calls] == [tb.entries] * len(calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[0] > 0 and done[-1] == tb.entries
    tb.memory_solver(on_progress=lambda done, total: calls.append(None))
    assert len(calls) == len(tb)


@pytest.mark.long
def test_international_four_kings_beat_one_king(tmp_path):
    """Four kings win against a lone king wherever it stands, the long diagonal included
    (some minutes of building, 24 on a loaded machine: run by hand with -m long)."""
    variant = get_variant("international")
    build(variant, 5, tmp_path, workers=2, only=lambda m: m.men == 0 and min(m.wk, m.bk) == 1)
    tb = Tablebase(variant, tmp_path)
    quiet = [p for _, p in _slice_positions(variant, Material(0, 4, 0, 1)) if _quiet(variant, p)]
    results = [tb.probe(p).result for p in quiet]
    assert results.count(WIN) > 0.995 * len(results)
    assert tb.probe(Board(variant, "W:WK1,K2,K3,K4:BK46").position).result == WIN


@pytest.mark.parametrize("variant_name, m", [("english", Material(0, 2, 0, 1)),
                                               ("russian", Material(0, 1, 0, 2)),
                                               ("international", Material(0, 2, 0, 1))])
def test_a_pass_split_over_threads_gives_the_same_tables(tmp_path, variant_name, m):
    """The parts of a pass run at once on a pool: the same values as one part, and every
    part counts its positions in its own slot."""
    from concurrent.futures import ThreadPoolExecutor

    s, a, b = _three_piece_slice(get_variant(variant_name), tmp_path, m)
    one = np.zeros(2, dtype=np.uint64)
    passes = s.solve(tuple(m), a, b, one, 0)
    a1, b1 = a.copy(), b.copy()
    a[:] = 0
    b[:] = 0
    three = np.zeros(4, dtype=np.uint64)
    with ThreadPoolExecutor(3) as pool:
        assert s.solve(tuple(m), a, b, three, 0, 3, pool, 1) == passes
    assert np.array_equal(a, a1) and np.array_equal(b, b1)
    assert np.count_nonzero(a1 != 0) > 0
    assert all(three[:3] > 0) and three[3] == 0
    assert three[:3].sum() == one[0]


@pytest.mark.parametrize("name", [n if n == "international" else
                                  pytest.param(n, marks=pytest.mark.slow) for n in ALL])
def test_marking_predecessors_gives_the_tables_of_looking_at_everything(tmp_path, name):
    """After its first pass the solver looks only at positions with a successor resolved in
    the pass before, found by taking moves back: the same tables as a solver that looks at
    every unresolved position in every pass: the 4-piece kings-only pair, and for 8x8 also
    a pair with a man (kept to kings for international, to keep the test short)."""
    variant = get_variant(name)
    men = 0 if variant.size == 10 else 1
    build(variant, 4, tmp_path, workers=2, only=lambda m: m.men <= men)
    s = solver(variant)
    for m in _materials(4):
        if m.men <= men:
            load_into(s, tmp_path / name, variant, m)
    pairs = [Material(0, 2, 0, 2)]
    if men:
        pairs.append(Material(1, 1, 0, 2))
    for m in pairs:
        stored = [TableFile(tmp_path / name / f"{x.name}.egtb", name).table()
                  for x in (m, m.partner)]
        a = np.zeros(s.slice_size(*m), dtype=np.uint8)
        b = a if m.partner == m else np.zeros(s.slice_size(*m.partner), dtype=np.uint8)
        s.solve(tuple(m), a, b, np.zeros(2, dtype=np.uint64), 0, look_all=True)
        for solved, table in zip((a, b), stored):
            valid = solved != 255
            assert np.array_equal(solved[valid], table[valid]), (name, m)
        assert np.count_nonzero((a != 0) & (a != 255)) > 0


def test_a_stopped_slice_raises_and_leaves_no_table(tmp_path):
    """Ctrl-C during a build sets the stop entry: the running slice gives up at once."""
    m = Material(0, 2, 0, 1)
    s, a, b = _three_piece_slice(get_variant("english"), tmp_path, m)
    with pytest.raises(InterruptedError):
        s.solve(tuple(m), a, b, np.array([0, 1], dtype=np.uint64), 0)
    with pytest.raises(ValueError):
        s.solve(tuple(m), a, b, np.zeros(1, dtype=np.uint64), 0)


def test_hub_parameter_egtb_path(tmp_path):
    from hub_process import HubProcess
    from protocol.hub.text import parse_line

    variant = get_variant("english")
    build(variant, 3, tmp_path, workers=2)
    board = Board(variant, "W:WK1,K2:BK30")
    keep = [m for m, _ in Tablebase(variant, tmp_path).best_moves(board)]
    hub = HubProcess()
    try:
        hub.handshake()
        hub.send(f"set-param name=egtb-path value={tmp_path / 'nowhere'}")
        assert hub.recv().startswith("error")
        hub.send("set-param name=variant value=english")
        hub.send(f"set-param name=egtb-path value={tmp_path}")
        hub.send(f"pos pos={board.hub_position()}")
        hub.send("level depth=3")
        hub.send("go think")
        line, _ = hub.expect("done", 30.0)
        assert board.parse_move(parse_line(line)[1]["move"]) in keep
    finally:
        hub.close()


def _a_won_choice(variant, tb: Tablebase) -> tuple[Board, list]:
    """A quiet 3-piece position, White to move and winning, in which some legal moves give
    the win away: an engine that plays one of ``keep`` there follows the databases."""
    for m in _materials(3):
        if m.pieces != 3:
            continue
        for _, position in _slice_positions(variant, m):
            if not _quiet(variant, position):
                continue
            value = tb.probe(position)
            if value is None or value.result != WIN:
                continue
            board = Board(variant, position)
            keep = [move for move, _ in tb.best_moves(board)]
            if 0 < len(keep) < len(board.legal_moves):
                return board, keep
    raise AssertionError("no 3-piece win with a losing alternative")


def test_dxp_follower_plays_from_the_databases(db3):
    """``damka dxp --egtb DIR``: from a won database position it plays a move that keeps the
    win, where some of its moves would not."""
    from dxp_peers import CEILING, DamkaDxp, RawPeer
    from protocol.dxp.codec import AcceptCode, DxpMove, GameAccept, GameRequest
    from protocol.dxp.convert import find_move, position_to_dxp

    variant = get_variant("international")
    board, keep = _a_won_choice(variant, Tablebase(variant, db3))
    server = DamkaDxp("--egtb", str(db3), "--move-time", "0.2")
    peer = RawPeer(server.port)
    try:
        # the follower (damka) plays White, who is to move in the requested position
        peer.send(GameRequest("Tester", True, 0, 0, position_to_dxp(board.position)))
        messages = [peer.recv(CEILING)]
        while not isinstance(messages[-1], DxpMove):
            messages.append(peer.recv(CEILING))
        accept = next(m for m in messages if isinstance(m, GameAccept))
        assert accept.code == AcceptCode.ACCEPTED
        assert find_move(board, messages[-1]) in keep
    finally:
        peer.close()
        server.close()


def test_play_page_uses_the_databases_in_the_default_directory(db3, monkeypatch):
    """The play page's computer probes the databases of the per-user directory ($DAMKA_EGTB
    here) when they are there, at every level: from a won position it keeps the win."""
    pytest.importorskip("starlette", reason="the play extra is not installed")
    from starlette.testclient import TestClient

    from protocol.play.app import create_app

    variant = get_variant("english")
    board, keep = _a_won_choice(variant, Tablebase(variant, db3))
    monkeypatch.setenv("DAMKA_EGTB", str(db3))
    client = TestClient(create_app(), raise_server_exceptions=True)
    human = "black" if board.white_to_move else "white"
    r = client.post("/api/games", json={"variant": "english", "fen": board.fen(),
                                        "human": human, "level": "easy", "seed": 3})
    assert r.status_code == 201, r.text
    game = r.json()
    assert game["computer_to_move"]
    s = client.post(f"/api/games/{game['id']}/engine").json()
    played = board.parse_move(s["moves"][-1])
    assert played in keep
