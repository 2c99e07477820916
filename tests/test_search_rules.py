"""The search's pruning, reductions, extensions and quiescence rules (issue 31, docs/search.md):
none of them loses or lengthens a forced result, and the horizon's threat search is exactly a
ply of every move followed by the captures.

Each rule can be switched off in the core for measurement (bench/search_variant.py); the
tests compare the engine's own search with the one that has none of them.
"""

from __future__ import annotations

import contextlib
import random

import pytest

from engine import Board, _core, reference
from engine.fen import parse_fen
from engine.position import Position
from engine.search import MATE_THRESHOLD, Engine, Limits, Searcher, _search
from engine.variants import get_variant

from random_positions import random_games

RULES = _search.SEARCH_FEATURES


@contextlib.contextmanager
def rules_off(*names: str):
    """The core's search with the named rules switched off (all of them: ``"all"``)."""
    saved = _search._search_features()
    settings = dict(saved)
    for name in names:
        settings["features"] &= 0 if name == "all" else ~RULES[name]
    _search._set_search_features(**settings)
    try:
        yield
    finally:
        _search._set_search_features(**saved)


# (rule set, FEN, depth): forced wins of the other search tests (test_search.py, the README)
FORCED_WINS = [
    ("international", "W:WK46,14:BK5", 6),
    ("international", "W:W33,K46:B3,18,28", 6),
    ("english", "W:WK21,K26,K31:BK8", 10),
    ("russian", "W:WKa1,Kc1,Ke1:BKh8", 10),
    ("brazilian", "W:WKa1,Kc1,Ke1:BKh8", 10),
    ("spanish", "W:WK1-3:BK32", 10),
    ("italian", "W:WK24,K27,K30:BK5", 10),
    ("czech", "W:WKa1,Kc1,Ke1:BKh8", 10),
]


def _first_mate(variant: str, fen: str, depth: int) -> tuple[int, int | None]:
    """The least depth (up to ``depth``) at which the search proves a win, and its moves."""
    for d in range(1, depth + 1):
        result = Engine(variant, hash_mb=4).search(Board(variant, fen), Limits(depth=d))
        if result.score > MATE_THRESHOLD:
            return d, result.mate
    return depth + 1, None


@pytest.mark.parametrize("variant, fen, depth", FORCED_WINS,
                         ids=[f"{v}-{f}" for v, f, _ in FORCED_WINS])
def test_forced_wins_found_as_soon_and_as_short_with_every_rule(variant, fen, depth):
    with rules_off("all"):
        plain_depth, plain_mate = _first_mate(variant, fen, depth)
    assert plain_mate is not None, "the search without the rules proves the win"
    # found within the depth the other tests search (a reduced line may need a ply or two
    # more of nominal depth than the plain search: English 10 against 8, Italian 10 against 9)
    found_depth, mate = _first_mate(variant, fen, depth)
    assert found_depth <= depth
    assert mate == plain_mate  # the same number of moves: no rule lengthens a proven win
    for name in RULES:  # and with each rule alone missing (no pair of rules hides a loss)
        with rules_off(name):
            d, m = _first_mate(variant, fen, depth)
        assert d <= depth and m == plain_mate, name


def _under_threat(variant, rng: random.Random, count: int) -> list[Position]:
    """Quiet positions (no capture for the side to move) in which the opponent, were it its
    turn, would have one."""
    out = []
    for p in random_games(variant, rng, count * 100):
        if _core.generate(variant, p) and not any(m[2] for m in _core.generate(variant, p)):
            other = Position(p.white, p.black, p.kings, not p.white_to_move)
            if any(m[2] for m in _core.generate(variant, other)):
                out.append(p)
                if len(out) == count:
                    break
    return out


@pytest.mark.parametrize("name", ["international", "russian", "english"])
def test_threat_quiescence_is_a_ply_of_every_move_then_the_captures(name):
    """At the horizon a quiet position under a capture threat scores the best of its moves,
    each followed by the captures (the reference generator's moves, each scored by the plain
    capture quiescence); a position under no threat scores its static evaluation."""
    variant = get_variant(name)
    engine = Engine(variant, hash_mb=1)
    searcher: Searcher = engine._searcher
    rng = random.Random(31)
    threatened = _under_threat(variant, rng, 25)
    assert len(threatened) == 25
    for p in threatened:
        best = None
        for move in reference.legal_moves(variant, p):
            child = reference.play(variant, p, move)
            searcher.set_position(child.white, child.black, child.kings, child.white_to_move)
            score = -searcher.quiesce()
            if abs(score) > MATE_THRESHOLD:  # a win or loss seen a ply further from the root
                score -= 1 if score > 0 else -1
            best = score if best is None else max(best, score)
        searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        assert searcher.quiesce(threats=True) == best
    calm = [p for p in random_games(variant, rng, 400)
            if not any(m[2] for m in _core.generate(variant, p))
            and not any(m[2] for m in _core.generate(
                variant, Position(p.white, p.black, p.kings, not p.white_to_move)))
            and _core.generate(variant, p)][:25]
    assert calm
    for p in calm:
        searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        assert searcher.quiesce(threats=True) == searcher.evaluate()


@pytest.mark.parametrize("variant", ["international", "english"])
def test_the_pruning_gate_changes_the_search(variant):
    """Without the gate (every qualifying node verified, as before December 5) the same search
    takes another number of nodes and still plays a legal move."""
    board = Board(variant)
    ours = Engine(variant, hash_mb=8).search(board, Limits(depth=10))
    with rules_off("prune_gate"):
        plain = Engine(variant, hash_mb=8).search(board, Limits(depth=10))
    assert ours.nodes != plain.nodes
    assert plain.best_move in board.legal_moves


def test_the_engine_searches_with_every_rule():
    """The rules are on unless a bench switches them off, and the switch reaches the search:
    without them the same search takes another number of nodes."""
    assert _search._search_features()["features"] == sum(RULES.values())
    board = Board("international")
    ours = Engine("international", hash_mb=8).search(board, Limits(depth=9)).nodes
    with rules_off("all"):
        plain = Engine("international", hash_mb=8).search(board, Limits(depth=9)).nodes
    assert ours != plain


@contextlib.contextmanager
def core_settings(**changes: int):
    """The core's search with some of its settings changed (those off by default, such as
    bench/search_variant.py's --singular-depth and --qs-promote)."""
    saved = _search._search_features()
    _search._set_search_features(**{**saved, **changes})
    try:
        yield
    finally:
        _search._set_search_features(**saved)


def _crowning(variant, rng: random.Random, count: int) -> list[Position]:
    """Quiet positions under no capture threat in which a man of the side to move can crown."""
    out = []
    for p in random_games(variant, rng, count * 300):
        moves = reference.legal_moves(variant, p)
        other = Position(p.white, p.black, p.kings, not p.white_to_move)
        if (any(m.promotes for m in moves) and not any(m.captured for m in moves)
                and not any(m[2] for m in _core.generate(variant, other))):
            out.append(p)
            if len(out) == count:
                break
    return out


@pytest.mark.parametrize("name", ["international", "russian", "english"])
def test_crowning_quiescence_stands_pat_or_crowns(name):
    """With --qs-promote a quiet horizon position scores the better of its static evaluation
    and its crowning steps (the reference generator's), each followed by the quiescence of
    the position it leaves; off (the default) it scores the static evaluation."""
    variant = get_variant(name)
    searcher: Searcher = Engine(variant, hash_mb=1)._searcher
    positions = _crowning(variant, random.Random(7), 20)
    assert len(positions) == 20
    differs = 0
    for p in positions:
        searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        static = searcher.evaluate()
        assert searcher.quiesce() == static
        with core_settings(qs_promote=1):
            best = static
            for move in reference.legal_moves(variant, p):
                if not move.promotes:
                    continue
                child = reference.play(variant, p, move)
                searcher.set_position(child.white, child.black, child.kings,
                                      child.white_to_move)
                score = -searcher.quiesce()
                if abs(score) > MATE_THRESHOLD:
                    score -= 1 if score > 0 else -1
                best = max(best, score)
            searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
            assert searcher.quiesce() == best
        differs += best != static
    assert differs > 0  # the crowning steps matter somewhere


def test_root_reductions_only_for_late_quiet_moves():
    """With --root-lmr N the main thread's root scouts its quiet moves from the N-th on a ply
    shallower (as the helpers' roots and the PV nodes below do); never a capture or a
    crowning (the reference generator says which), never the first N-1 moves, never below
    depth 3, never when a side has kings only, and never while it is off."""
    variant = get_variant("international")
    searcher: Searcher = Engine(variant, hash_mb=1)._searcher
    seen = {"capture": 0, "promote": 0, "reduced": 0, "kings only": 0}
    kings_only = [parse_fen(variant, fen) for fen in
                  ("W:WK46,14,33:BK5", "W:W33,K46,38:B3,18,28", "W:WK10,K20,K30:B3,8,9")]
    for p in list(random_games(variant, random.Random(5), 400)) + kings_only:
        moves = searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        ref = {(m.origin, m.destination, m.captured): m
               for m in reference.legal_moves(variant, p)}
        assert len(moves) == len(ref)
        for index in range(len(moves)):
            assert all(searcher.root_reduction(index, moved, 9) == 0  # off by default
                       for moved in range(len(moves)))
        with core_settings(root_lmr=3):
            for index, move in enumerate(moves):
                quiet = ref[move[0], move[1], move[2]]
                captures, promotes = bool(quiet.captured), quiet.promotes
                men = (p.white & ~p.kings) and (p.black & ~p.kings)
                for moved in range(len(moves)):
                    want = int(moved >= 2 and not captures and not promotes and bool(men))
                    assert searcher.root_reduction(index, moved, 9) == want
                    assert searcher.root_reduction(index, moved, 2) == 0
                seen["capture"] += captures
                seen["promote"] += promotes and not captures
                seen["reduced"] += not captures and not promotes and bool(men)
                seen["kings only"] += not men
    assert all(seen.values()), seen


@pytest.mark.parametrize("variant, changes", [
    ("international", dict(singular_depth=4)),
    ("international", dict(root_lmr=4)),
    ("international", dict(history_mode=1)),
    ("english", dict(history_mode=1)),
    ("international", dict(extend_mode=2)),
    ("international", dict(extend_mode=5)),
    ("international", dict(eval_grain=23)),
    ("english", dict(eval_grain=23)),
], ids=lambda x: x if isinstance(x, str) else ",".join(f"{k}={v}" for k, v in x.items()))
def test_settings_off_by_default_change_the_search_when_on(variant, changes):
    """The bench's switch reaches the search: the same search takes another number of nodes,
    and still plays a legal move; afterwards the setting is off again, as by default."""
    board = Board(variant)
    ours = Engine(variant, hash_mb=8).search(board, Limits(depth=10))
    with core_settings(**changes):
        other = Engine(variant, hash_mb=8).search(board, Limits(depth=10))
    assert other.nodes != ours.nodes
    assert other.best_move in board.legal_moves
    defaults = _search._search_features()
    assert all(defaults[key] == 0 for key in changes)


#: the settings off by default (bench/search_variant.py), each as low as it goes so that the
#: short searches here use it
OFF_BY_DEFAULT = {
    "singular": dict(singular_depth=2),
    "crowning-quiescence": dict(qs_promote=1),
    "root-lmr": dict(root_lmr=2),  # every quiet move after the first
    "scan-history": dict(history_mode=1),
    "limited-extension": dict(extend_mode=7),
    "eval-grain": dict(eval_grain=23),
}


@pytest.mark.parametrize("setting", OFF_BY_DEFAULT)
@pytest.mark.parametrize("variant, fen, depth", FORCED_WINS,
                         ids=[f"{v}-{f}" for v, f, _ in FORCED_WINS])
def test_settings_off_by_default_keep_forced_wins(setting, variant, fen, depth):
    """Each finds the forced wins as soon (in nominal depth) and as short as the engine's own
    search."""
    plain_depth, plain_mate = _first_mate(variant, fen, depth)
    with core_settings(**OFF_BY_DEFAULT[setting]):
        found_depth, mate = _first_mate(variant, fen, depth)
    assert found_depth <= plain_depth and mate == plain_mate


def _rounded(score: int, grain: int) -> int:
    """``score`` to the nearest multiple of ``grain``, halves away from zero."""
    sign = 1 if score >= 0 else -1
    return sign * ((abs(score) + grain // 2) // grain * grain)


@pytest.mark.parametrize("variant", ["international", "english", "russian"])
def test_eval_grain_rounds_the_static_score(variant):
    """--eval-grain N: the search's static score is the learned one rounded to the nearest
    multiple of N thousandths of a man (in the file's units), halves away from zero, so that
    the rounding favours neither colour; off again afterwards."""
    v = get_variant(variant)
    engine = Engine(v, hash_mb=1)
    searcher: Searcher = engine._searcher
    grain = (23 * round(engine._man) + 500) // 1000
    assert grain >= 4
    signs = set()
    changed = 0
    for p in random_games(v, random.Random(11), 150):
        searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        plain = searcher.evaluate()
        with core_settings(eval_grain=23):
            coarse = searcher.evaluate()
        assert coarse == _rounded(plain, grain)
        assert searcher.evaluate() == plain
        signs.add((plain > 0) - (plain < 0))
        changed += coarse != plain
    assert signs >= {-1, 1} and changed > 50


@pytest.mark.parametrize("name", ["international", "english"])
def test_evaluation_cache_never_outlives_the_weights(name):
    """The search keeps its recent static scores in a small cache: weights set again on the
    same evaluation between two searches are the ones the second search scores with (as a
    Searcher given those weights from the start scores)."""
    from array import array

    from engine.learned import core_with_params, default_weights_path, read_layout_params

    variant = get_variant(name)
    raw = read_layout_params(variant, default_weights_path(variant))
    params = array("h")
    params.frombytes(raw)
    halved = array("h", (w // 2 for w in params))
    core = core_with_params(variant, raw)
    fresh = Engine(variant, hash_mb=1)._searcher
    fresh.set_evaluation(core_with_params(variant, halved.tobytes()))
    searcher: Searcher = Engine(variant, hash_mb=1)._searcher
    searcher.set_evaluation(core)
    changed = 0
    for p in random_games(variant, random.Random(11), 40):
        core.set_weights(params)
        searcher.set_position(p.white, p.black, p.kings, p.white_to_move)
        before = searcher.quiesce(threats=True)
        core.set_weights(halved)
        after = searcher.quiesce(threats=True)
        fresh.set_position(p.white, p.black, p.kings, p.white_to_move)
        assert after == fresh.quiesce(threats=True)
        changed += after != before
    assert changed > 20  # the weights matter: a stale score would have shown


def test_a_move_that_ends_a_draw_count_and_leaves_no_move_wins():
    """The game rules the loss of the side without a legal move before any count's draw
    (engine.game); the search had scored such a move 0, its draw test coming before its
    move generation. Russian: e1-f2 is the 80th ply without a capture or a crowning, and
    Black's h4 man has no move after it."""
    from engine.draws import DrawCounters, next_counters
    from engine.game import Termination, draw_termination

    board = Board("russian", "W:We1,g3:Bh4")
    counters = DrawCounters(no_progress=79)
    result = Engine("russian", hash_mb=4).search(board, Limits(depth=4), counters=counters)
    assert result.score >= MATE_THRESHOLD, result
    before = board.position
    board.push(result.best_move)
    after = next_counters(counters, before, result.best_move, board.position, False)
    # both rules apply after the move: the count's draw, and the loss that comes first
    assert draw_termination(board.variant, board.position, after, [before]) == \
        Termination.NO_PROGRESS
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is True
