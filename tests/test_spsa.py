"""``damka spsa``: the knobs a layout gives, the gain schedule, SPSA finding a planted optimum
from noisy pair results, an engine taking weights in memory, and the command's run directory
(resumed where it stopped, refused with other settings, its tuned file the knobs' values)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.board import Board
from engine.evaluation import (default_weights_path, layout, params_bytes, read_weights,
                               write_weights)
from engine.search import Engine, Limits
from protocol.cli import main
from protocol.training import spsa_main
from protocol.training.spsa import (PER_WEIGHT_MAX, WEIGHT_LIMIT, Schedule, SpsaState,
                                    apply_knobs, families, knobs_for, perturbation, run_spsa,
                                    spsa_update)

REPO = Path(__file__).resolve().parents[1]


def shipped(variant: str) -> np.ndarray:
    return read_weights(default_weights_path(variant), variant)


# -- knobs -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["international", "russian", "english"])
def test_small_families_are_tuned_weight_by_weight_and_tables_by_two_factors(variant):
    lay = layout(variant)
    base = shipped(variant)
    knobs = knobs_for(lay, base, families(lay))
    by_name = {knob.name: knob for knob in knobs}
    men = by_name["material.men.mg"]
    assert not men.factor and men.start == base[0] and list(men.params) == [0]
    pattern_mg, pattern_eg = by_name["pattern.mg"], by_name["pattern.eg"]
    assert pattern_mg.factor and pattern_mg.start == 1.0
    patterns = np.concatenate([np.arange(o, o + n) for g, o, n in lay.groups
                               if g.startswith("pattern:")])
    nonzero = patterns[base[patterns] != 0]
    # the two factors cover every non-zero pattern weight once, split by phase
    assert sorted(np.concatenate([pattern_mg.params, pattern_eg.params])) == sorted(nonzero)
    assert all(lay.param_name(int(i)).endswith(".mg") for i in pattern_mg.params[:50])
    assert all(lay.param_name(int(i)).endswith(".eg") for i in pattern_eg.params[:50])
    for group, offset, size in lay.groups:
        family = group.split(":")[0]
        if sum(n for g, _, n in lay.groups if g.split(":")[0] == family) <= PER_WEIGHT_MAX:
            for i in range(offset, offset + size):
                assert (lay.param_name(i) in by_name) == (base[i] != 0)
    # a family whose weights are all zero (the wide tables of a shipped file) gives no knob
    assert not any(name.startswith("wide") for name in by_name)


def test_an_unknown_family_is_named_with_the_known_ones():
    lay = layout("russian")
    with pytest.raises(ValueError, match=r"no evaluation terms called nosuch.*material"):
        knobs_for(lay, shipped("russian"), ["material", "nosuch"])


def test_apply_knobs_sets_weights_scales_tables_and_clips():
    lay = layout("russian")
    base = shipped("russian")
    knobs = knobs_for(lay, base, ["material", "pattern"])
    values = np.array([knob.start for knob in knobs])
    assert np.array_equal(apply_knobs(base, knobs, values), base)
    values[0] = 150.0  # material.men.mg
    values[-2] = 0.5  # pattern.mg
    values[1] = 1e6  # material.men.eg, beyond a file's range
    w = apply_knobs(base, knobs, values)
    assert w[0] == 150.0 and w[1] == WEIGHT_LIMIT
    mg = knobs[-2].params
    assert np.allclose(w[mg], base[mg] * 0.5)
    eg = knobs[-1].params
    assert np.array_equal(w[eg], base[eg])
    assert base[0] != 150.0  # the base is left alone


# -- the algorithm -----------------------------------------------------------------------


def test_the_schedule_ends_at_the_steps_and_shrinks_toward_them():
    steps = np.array([0.1, 5.0])
    schedule = Schedule(1000, steps, 0.002)
    assert np.allclose(schedule.c(999), steps)
    assert np.allclose(schedule.a(999), 0.002 * steps ** 2)
    assert np.all(schedule.c(0) > schedule.c(500)) and np.all(schedule.a(0) > schedule.a(500))
    # at the last iteration a game won moves a knob by r_end steps
    delta = np.array([1.0, -1.0])
    moved = spsa_update(np.zeros(2), schedule, 999, delta, 1.0)
    assert np.allclose(moved, 0.002 * steps * delta)


def test_perturbations_are_signs_and_depend_only_on_the_seed_and_iteration():
    a = perturbation(7, 12, 40)
    assert set(np.unique(a)) == {-1.0, 1.0}
    assert np.array_equal(a, perturbation(7, 12, 40))
    assert not np.array_equal(a, perturbation(7, 13, 40))
    assert not np.array_equal(a, perturbation(8, 12, 40))


OPTIMUM = np.array([1.1, 0.7, 70.0])  # 1, -3 and 6 steps away: no one sign vector leads there
STEPS = np.array([0.1, 0.1, 5.0])


def noisy_games(seed: int):
    """Pairs decided by a planted quadratic strength (in steps) with 60% draws: the plus
    side wins a decisive game more often the nearer it is to OPTIMUM."""
    rng = np.random.default_rng(seed)

    def strength(theta):
        return -np.sum(((theta - OPTIMUM) / STEPS) ** 2)

    def play(pairs):
        for k, plus, minus in pairs:
            edge = 0.1 * (strength(plus) - strength(minus))
            p_win = 1 / (1 + np.exp(-edge))
            points = []
            for _ in range(2):
                if rng.random() < 0.6:
                    points.append(0.5)
                else:
                    points.append(1.0 if rng.random() < p_win else 0.0)
            yield k, points
    return play


def test_spsa_moves_toward_a_planted_optimum_from_noisy_games():
    start = np.array([1.0, 1.0, 40.0])
    state = run_spsa(SpsaState(list(start)), Schedule(6000, STEPS, 0.002), 3, 2,
                     noisy_games(1))
    before = np.abs((start - OPTIMUM) / STEPS)
    after = np.abs((np.array(state.theta) - OPTIMUM) / STEPS)
    assert np.all(after < 0.4 * before), (before, after)
    assert state.iteration == 6000 and state.wins + state.draws + state.losses == 12000


def test_a_run_cut_short_and_resumed_ends_where_one_run_does():
    def play(pairs):  # deterministic in k, as fixed-node games are
        for k, plus, minus in pairs:
            yield k, [1.0 if (plus[0] - minus[0]) * np.sin(k) > 0 else 0.5, 0.0]

    schedule = Schedule(40, STEPS, 0.01)
    whole = run_spsa(SpsaState([1.0, 1.0, 40.0]), schedule, 5, 1, play)

    class Stop(Exception):
        pass

    def stop_at_17(state):
        if state.iteration == 17:
            raise Stop

    part = SpsaState([1.0, 1.0, 40.0])
    with pytest.raises(Stop):
        run_spsa(part, schedule, 5, 1, play, stop_at_17)
    resumed = run_spsa(SpsaState(**json.loads(json.dumps(part.__dict__))), schedule, 5, 1,
                       play)
    assert resumed.theta == whole.theta and resumed.wins == whole.wins


# -- weights in memory -------------------------------------------------------------------


def test_an_engine_takes_weights_as_bytes_as_it_takes_them_from_a_file(tmp_path):
    variant = "russian"
    base = shipped(variant)
    changed = base.copy()
    changed[0] *= 1.3  # a man worth more
    changed[140:] *= 0.5
    path = tmp_path / "changed.dkw"
    write_weights(path, variant, changed)
    board = Board(variant)
    from_file = Engine(variant, hash_mb=1, weights=path).search(board, Limits(nodes=3000))
    engine = Engine(variant, hash_mb=1)
    engine.search(board, Limits(nodes=3000))
    engine.set_weights(params_bytes(variant, changed))
    in_memory = engine.search(board, Limits(nodes=3000))
    assert (in_memory.score, in_memory.best_move, in_memory.nodes) == \
        (from_file.score, from_file.best_move, from_file.nodes)
    assert engine._man == Engine(variant, hash_mb=1, weights=path)._man != \
        Engine(variant, hash_mb=1)._man
    engine.set_weights(None)  # back to the shipped file
    again = engine.search(board, Limits(nodes=3000))
    first = Engine(variant, hash_mb=1).search(board, Limits(nodes=3000))
    assert (again.score, again.nodes) == (first.score, first.nodes)


def test_params_bytes_take_the_leading_weights_and_the_rest_are_zero():
    variant = "international"
    lay = layout(variant)
    base = shipped(variant)
    stored = int(np.flatnonzero(base)[-1]) + 1  # the wide tables' zeros left out
    assert stored < lay.n_params
    short = params_bytes(variant, base[:stored])
    assert params_bytes(variant, base) == short + bytes(2 * (lay.n_params - stored))
    searched = []
    for raw in (short, params_bytes(variant, base)):
        engine = Engine(variant, hash_mb=1)
        engine.set_weights(raw)
        found = engine.search(Board(variant), Limits(nodes=2000))
        searched.append((found.score, found.best_move, found.nodes))
    assert searched[0] == searched[1]
    with pytest.raises(ValueError, match="needs"):
        params_bytes(variant, np.zeros(lay.n_params + 1))


def test_the_classic_evaluation_takes_no_weights():
    engine = Engine("russian", hash_mb=1, evaluation="classic")
    with pytest.raises(ValueError, match="classic"):
        engine.set_weights(params_bytes("russian", shipped("russian")))


# -- the command -------------------------------------------------------------------------


def spsa_args(out: Path, iterations: int = 3, *more: str) -> list[str]:
    return ["spsa", "--out", str(out), "--iterations", str(iterations), "--variant", "russian",
            "--nodes", "300", "--workers", "1", "--tune", "material,pattern", "--quiet", *more]


def test_a_run_writes_its_state_log_and_tuned_file(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(spsa_args(out, 4)) == 0
    printed = capsys.readouterr().out
    assert "4 pairs (8 games)" in printed and "material.men.mg" in printed
    data = json.loads((out / "state.json").read_text())
    state = data["state"]
    assert state["iteration"] == 4 and state["wins"] + state["draws"] + state["losses"] == 8
    log = (out / "log.csv").read_text().splitlines()
    assert log[0].startswith("iteration,wins,draws,losses,material.men.mg")
    assert [line.split(",")[0] for line in log[1:]] == ["0", "4"]
    tuned = read_weights(out / "tuned.dkw", "russian")
    base = shipped("russian")
    assert tuned[0] == pytest.approx(state["theta"][0], abs=1 / 32) != base[0]
    lay = layout("russian")
    knobs = knobs_for(lay, base, ["material", "pattern"])
    expected = apply_knobs(base, knobs, np.array(state["theta"]))
    assert np.allclose(tuned, expected, atol=1 / 32)
    Engine("russian", hash_mb=1, weights=out / "tuned.dkw")  # an engine plays with it
    assert main(spsa_args(out, 4)) == 0  # done already: says so, changes nothing
    assert "has played all 4 iterations" in capsys.readouterr().out
    assert json.loads((out / "state.json").read_text())["state"] == state


def test_an_interrupted_run_goes_on_to_the_same_end(tmp_path, monkeypatch, capsys):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(spsa_args(whole, 5)) == 0
    play = spsa_main._play_pair

    def interrupted_at_3(settings, openings, worker, pair):
        if pair[0] == 3:
            raise KeyboardInterrupt
        return play(settings, openings, worker, pair)

    monkeypatch.setattr(spsa_main, "_play_pair", interrupted_at_3)
    assert main(spsa_args(cut, 5)) == 130
    assert "rerun the same command" in capsys.readouterr().err
    assert json.loads((cut / "state.json").read_text())["state"]["iteration"] == 3
    monkeypatch.setattr(spsa_main, "_play_pair", play)
    assert main(spsa_args(cut, 5)) == 0
    assert json.loads((cut / "state.json").read_text())["state"] == \
        json.loads((whole / "state.json").read_text())["state"]


def one_line_error(capsys, *words: str) -> None:
    err = capsys.readouterr().err.strip()
    assert err.startswith("damka: error:") and "\n" not in err, err
    for word in words:
        assert word in err, err


def test_bad_input_is_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(spsa_args(out, 2)) == 0
    capsys.readouterr()
    assert main(spsa_args(out, 3)) == 2  # another schedule
    one_line_error(capsys, "other settings", "iterations: 2 there, 3 now")
    assert main(spsa_args(out, 2, "--nodes", "400")) == 2
    one_line_error(capsys, "nodes: 300 there, 400 now")
    assert main(["spsa", "--out", str(tmp_path / "x"), "--iterations", "2", "--variant",
                 "russian", "--tune", "material,nosuch", "--quiet"]) == 2
    one_line_error(capsys, "nosuch", "pattern")
    foreign = tmp_path / "international.dkw"
    write_weights(foreign, "international", np.zeros(layout("international").n_params))
    assert main(spsa_args(tmp_path / "y", 2, "--weights", str(foreign))) == 2
    one_line_error(capsys, str(foreign))
    zeros = tmp_path / "zeros.dkw"
    write_weights(zeros, "russian", np.zeros(layout("russian").n_params))
    assert main(spsa_args(tmp_path / "z", 2, "--weights", str(zeros))) == 2
    one_line_error(capsys, "nothing to tune")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "state.json").write_text("{}")
    assert main(spsa_args(tmp_path / "w", 2)) == 2
    one_line_error(capsys, "not a damka spsa run")
    data = json.loads((out / "state.json").read_text())
    del data["state"]["theta"]
    (out / "state.json").write_text(json.dumps(data))
    assert main(spsa_args(out, 2)) == 2
    one_line_error(capsys, "incomplete", "theta")


def test_the_plus_side_is_scored_in_both_colours():
    """A minus side that wants to lose its men loses both games of a pair, with White and
    with Black: the points are the plus side's in each game."""
    from protocol.training.games import SelfPlaySettings

    base = shipped("russian")
    knobs = knobs_for(layout("russian"), base, ["material"])
    settings = SelfPlaySettings(rules=Board("russian").variant, nodes=300, depth=None,
                                random_plies=6, seed=1, max_plies=300, hash_mb=1,
                                weights=None)
    worker = spsa_main._worker(settings, base, knobs)
    plus = np.array([knob.start for knob in knobs])
    minus = plus.copy()
    minus[:2] = -100.0  # a man is worth minus one: give them away
    for k in range(3):
        assert spsa_main._play_pair(settings, [], worker, (k, plus, minus)) == (k, [1.0, 1.0])
        assert spsa_main._play_pair(settings, [], worker, (k, minus, plus)) == (k, [0.0, 0.0])


def test_the_log_gets_a_line_each_time_a_multiple_of_log_every_is_passed(tmp_path, monkeypatch):
    monkeypatch.setattr(spsa_main, "LOG_EVERY", 2)
    out = tmp_path / "run"
    assert main(spsa_args(out, 5)) == 0
    log = (out / "log.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in log[1:]] == ["0", "2", "4", "5"]


def test_off_a_terminal_the_progress_is_a_plain_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(spsa_main, "LOG_EVERY_SECONDS", 0.0)  # a line every round
    args = [a for a in spsa_args(tmp_path / "run", 2) if a != "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "spsa: 1/2 pairs, " in err and "spsa: 2/2 pairs, " in err, err
    assert "pairs/s, the plus sides +" in err, err
