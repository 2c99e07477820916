"""``damka tune``: the fit recovers weights planted in synthetic data (sparse designs, and the
evaluation's own features of random positions), the loss goes down, the split keeps games
whole, and data of another rule set, format or layout is refused with one clear line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from engine import get_variant
from engine.evaluation import feature_rows, layout, read_weights, write_weights
from protocol.cli import main
from protocol.training.data import GameRecord, Meta, write_chunk, write_meta
from protocol.training.dataset import split_by_game
from protocol.training.design_store import DesignStore, column_stats
from protocol.training.logistic import fit_k, fit_weights

REPO = Path(__file__).resolve().parents[1]


def planted_design(rng, rows: int, params: int, per_row: int) -> sparse.csr_matrix:
    indices = rng.integers(0, params, size=(rows, per_row))
    values = rng.choice([-1.0, 1.0, 2.0], size=(rows, per_row))
    return sparse.csr_matrix((values.ravel(), indices.ravel(),
                              np.arange(0, rows * per_row + 1, per_row)), shape=(rows, params))


def test_fit_recovers_planted_weights_and_the_loss_decreases():
    rng = np.random.default_rng(5)
    x = planted_design(rng, 30_000, 400, 12)
    planted = rng.normal(0.0, 40.0, 400)
    k = 150.0
    won = (rng.random(x.shape[0]) < expit(x @ planted / k)).astype(np.float64)
    fit = fit_weights(x[:27_000], won[:27_000], x[27_000:], won[27_000:], k, l2=1.0,
                      iterations=200)
    assert np.corrcoef(fit.weights, planted)[0, 1] > 0.97
    assert fit.train_loss[fit.best_iteration] < fit.train_loss[0] - 0.05
    assert fit.validation_loss[fit.best_iteration] < fit.validation_loss[0] - 0.05
    assert fit.validation_loss[fit.best_iteration] == min(fit.validation_loss)


def test_fit_stops_when_validation_stops_improving():
    """Pure noise: the training loss keeps falling, the validation loss does not."""
    rng = np.random.default_rng(6)
    x = planted_design(rng, 3_000, 2_000, 10)
    noise = (rng.random(3_000) < 0.5).astype(np.float64)
    fit = fit_weights(x[:2_000], noise[:2_000], x[2_000:], noise[2_000:], 100.0, l2=0.0,
                      iterations=500, patience=5)
    assert fit.stopped_early
    assert len(fit.validation_loss) - 1 == fit.best_iteration + 5
    assert fit.train_loss[-1] < fit.train_loss[fit.best_iteration]


def test_fit_keeps_weights_in_range_and_rare_ones_at_their_start():
    rng = np.random.default_rng(8)
    x = planted_design(rng, 5_000, 60, 6)
    x = sparse.hstack([x, sparse.csr_matrix(([1.0], ([0], [0])), shape=(5_000, 1))]).tocsr()
    planted = np.append(rng.normal(0.0, 400.0, 60), 0.0)
    won = (rng.random(5_000) < expit(x @ planted / 100.0)).astype(np.float64)
    start = np.full(61, 7.0)
    fit = fit_weights(x, won, x[:0], won[:0], 100.0, iterations=100, init=start,
                      min_count=2, limit=250.0)
    assert np.abs(fit.weights).max() <= 250.0
    assert np.isclose(np.abs(fit.weights).max(), 250.0)  # the bound was needed
    assert fit.weights[60] == 7.0  # seen once: kept


@pytest.mark.parametrize("prior", ["zero", "start"])
def test_the_prior_settles_what_the_data_cannot_tell_apart(prior):
    """Two features that always occur together (a man's value and the pattern entries that
    hold him): the data fixes only their sum; the prior decides the split, toward zero (an
    even split) or toward the start (its difference kept)."""
    rng = np.random.default_rng(9)
    x = planted_design(rng, 20_000, 20, 6).toarray()
    x[:, 1] = x[:, 0]
    planted = np.append([80.0, 0.0], rng.normal(0.0, 40.0, 18))
    won = (rng.random(20_000) < expit(x @ planted / 100.0)).astype(np.float64)
    start = np.zeros(20)
    start[:2] = 100.0, -50.0
    x = sparse.csr_matrix(x)
    fit = fit_weights(x, won, x[:0], won[:0], 100.0, l2=300.0, iterations=500, init=start,
                      prior=start if prior == "start" else None)
    w = fit.weights
    assert w[0] + w[1] == pytest.approx(80.0, abs=20.0)  # the data's (the prior shrinks it)
    if prior == "start":
        assert w[0] - w[1] == pytest.approx(150.0, abs=3.0)
    else:
        assert w[0] - w[1] == pytest.approx(0.0, abs=3.0)


def test_fit_k_finds_the_scale_of_the_scores():
    rng = np.random.default_rng(7)
    score = rng.normal(0.0, 250.0, 40_000)
    result = (rng.random(40_000) < expit(score / 120.0)).astype(np.float64)
    assert fit_k(score, result) == pytest.approx(120.0, rel=0.08)


def test_split_by_game_keeps_games_whole_and_follows_the_seed():
    game = np.repeat(np.arange(200), 7)
    val = split_by_game(game, 0.1, seed=3)
    assert val.sum() == 20 * 7
    for g in range(200):
        assert len(set(val[game == g])) == 1
    assert np.array_equal(val, split_by_game(game, 0.1, seed=3))
    assert not np.array_equal(val, split_by_game(game, 0.1, seed=4))
    assert not split_by_game(game, 0.0, seed=3).any()


# -- the command, with the evaluation's own features -----------------------------------------


def random_positions(rng, variant, count: int):
    """Random men (and a few kings), none on its own promotion row, each position with its
    own density so that the game phase (which splits middlegame and endgame weights) varies
    widely, and sparse enough that many pattern entries are seen hundreds of times."""
    size = variant.size
    squares = size * size // 2
    row = np.arange(squares) // (size // 2)
    fill = rng.uniform(0.03, 0.3, (count, 1))
    draw = rng.random((count, squares))
    white = (draw < fill) & (row > 0)
    black = (draw > 1 - fill) & (row < size - 1)
    kings = (white | black) & (rng.random((count, squares)) < 0.04)
    bits = np.uint64(1) << np.arange(squares, dtype=np.uint64)
    pack = lambda m: (m * bits).sum(axis=1, dtype=np.uint64)  # noqa: E731
    return pack(white), pack(black), pack(kings), rng.random(count) < 0.5


def write_planted_data(out: Path, label: str, rows: dict, score: np.ndarray,
                       result: np.ndarray, per_game: int = 10) -> None:
    """A self-play directory holding the given positions as games of ``per_game``."""
    out.mkdir(parents=True)
    n = len(score)
    records = []
    for g, start in enumerate(range(0, n, per_game)):
        part = slice(start, min(start + per_game, n))
        m = part.stop - part.start
        records.append(GameRecord(
            positions={**{name: rows[name][part] for name in rows},
                       "result": result[part], "score": score[part],
                       "quiet": np.ones(m, bool), "opponent_capture": np.zeros(m, bool),
                       "game": np.full(m, g), "ply": np.arange(m)},
            game={"game_id": g, "game_winner": 0, "game_end": 0, "game_plies": m,
                  "final_white": 0, "final_black": 0, "final_kings": 0,
                  "final_white_to_move": True}))
    meta = Meta(label, {"planted": True})
    entry = write_chunk(out, 0, records)
    meta.chunks.append(entry)
    meta.games_done, meta.positions = entry["games"], entry["positions"]
    write_meta(out, meta)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Russian positions with results drawn from planted weights: (dir, weights, K, planted
    params, planted evaluation).

    The layout's features overlap by design (the pattern tables also see the men that the
    material counts, middlegame and endgame weights split one feature by the phase), so only
    some weights can be told apart by any amount of data. Weights are planted on the
    well-covered ones that can: features of at least a tenth of the positions whose column is
    not (nearly) a combination of the other frequent columns (variance inflation under 10),
    each scaled to an equal share of the evaluation. None on the wide tables: every 4x4
    window of White's rows lies inside a wide window, and the wide tables' frequent entries
    (nearly empty windows) are close to combinations of the 4x4 and edge tables' ones.
    """
    rng = np.random.default_rng(11)
    variant = get_variant("russian")
    white, black, kings, to_move = random_positions(rng, variant, 20_000)
    indptr, indices, values = feature_rows(variant, white, black, kings, to_move)
    n_params = layout(variant).n_params
    x = sparse.csr_matrix((values, indices, indptr), shape=(len(white), n_params))
    frequent = np.flatnonzero(np.bincount(indices, minlength=n_params) >= len(white) // 10)
    frequent = frequent[frequent < layout(variant).group_slice("wide:0").start]
    dense = x[:, frequent].toarray()
    gram = dense.T @ dense
    inflation = np.diag(np.linalg.pinv(gram)) * np.diag(gram)
    chosen = (inflation < 10) & (np.diag(gram) > 0)
    params = frequent[chosen]
    weights = np.zeros(n_params)
    weights[params] = rng.normal(0.0, 40.0, len(params)) / np.sqrt(
        np.diag(gram)[chosen] / len(white))
    k = 110.0
    evaluation = x @ weights
    won = rng.random(len(white)) < expit(evaluation / k)
    result = np.where(won, 1, -1).astype(np.int8)
    score = np.clip(np.round(evaluation + rng.normal(0, 20, len(white))), -9999, 9999)
    out = tmp_path_factory.mktemp("planted") / "russian"
    rows = {"white": white, "black": black, "kings": kings, "white_to_move": to_move}
    write_planted_data(out, "russian", rows, score.astype(np.int16), result)
    return out, weights, k, params, x


def test_tune_recovers_planted_weights(planted, tmp_path, capsys):
    data, weights, k, params, x = planted
    assert len(params) >= 15
    out = tmp_path / "fitted.dkw"
    # (the wide tables held at zero: their frequent entries overlap the planted ones, so
    # with them free the same evaluation has other weights; see the fixture)
    assert main(["tune", str(data), "--out", str(out), "--l2", "1", "--min-count", "1800",
                 "--patience", "30", "--seed", "2", "--without", "wide", "--quiet"]) == 0
    text = capsys.readouterr().out
    fitted_k = float(re.search(r"K = ([\d.]+)", text).group(1))
    assert fitted_k == pytest.approx(k, rel=0.2)
    losses = re.search(r"train loss ([\d.]+) -> ([\d.]+), validation ([\d.]+) -> ([\d.]+)", text)
    train0, train1, val0, val1 = map(float, losses.groups())
    assert train1 < train0 - 0.05 and val1 < val0 - 0.05
    fitted = read_weights(out, "russian")
    assert np.corrcoef(x @ fitted, x @ weights)[0, 1] > 0.97
    assert np.corrcoef(fitted[params], weights[params])[0, 1] > 0.93


def planted_store(planted, directory: Path, block_rows: int = 3_000):
    """The planted positions' design on disk in blocks, and the same rows in memory (the
    store's float32 values, so that both hold the same numbers)."""
    data = planted[0]
    from protocol.training.dataset import load_positions

    positions = load_positions([str(data)], None)
    args = (positions.variant, positions.white, positions.black, positions.kings,
            positions.white_to_move)
    store = DesignStore.build(directory, *args, block_rows=block_rows)
    indptr, indices, values = feature_rows(*args, dtype=np.float32)
    x = sparse.csr_matrix((values.astype(np.float64), indices, indptr), shape=store.shape)
    return store, x, positions, args


def test_design_store_products_match_the_matrix_in_memory(planted, tmp_path):
    store, x, positions, args = planted_store(planted, tmp_path / "store")
    assert len(store.block_rows) == 7 and store.shape == x.shape  # 20,000 rows in 3,000s
    rng = np.random.default_rng(3)
    w, r = rng.normal(size=x.shape[1]), rng.normal(size=x.shape[0])
    np.testing.assert_allclose(store @ w, x @ w, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(store.T @ r, x.T @ r, rtol=1e-12, atol=1e-9)
    for ours, theirs in zip(column_stats(store), column_stats(x)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    # the same positions reuse the files; other positions, or an unfinished store, rebuild
    stamp = (tmp_path / "store" / "block-00000.values.npy").stat().st_mtime_ns
    again = DesignStore.build(tmp_path / "store", *args, block_rows=3_000)
    assert again.fingerprint == store.fingerprint
    assert (tmp_path / "store" / "block-00000.values.npy").stat().st_mtime_ns == stamp
    fewer = [a[:100] for a in args[1:]]
    other = DesignStore.build(tmp_path / "store", args[0], *fewer, block_rows=3_000)
    assert other.shape[0] == 100 and other.fingerprint != store.fingerprint
    assert not (tmp_path / "store" / "block-00001.values.npy").exists()
    (tmp_path / "store" / "store.json").unlink()
    assert DesignStore.open(tmp_path / "store") is None
    assert DesignStore.build(tmp_path / "store", args[0], *fewer).shape[0] == 100


def test_the_fit_on_disk_equals_the_fit_in_memory(planted, tmp_path):
    """The streaming fit and the in-memory fit on the same rows give the same weights."""
    weights, k = planted[1], planted[2]
    store, x, positions, _ = planted_store(planted, tmp_path / "store")
    t = positions.result01
    val = np.arange(len(t)) >= 18_000
    val_store = DesignStore.build(tmp_path / "val", positions.variant,
                                  *(a[val] for a in (positions.white, positions.black,
                                                     positions.kings, positions.white_to_move)))
    train_store = DesignStore.build(tmp_path / "train", positions.variant,
                                    *(a[~val] for a in (positions.white, positions.black,
                                                        positions.kings,
                                                        positions.white_to_move)),
                                    block_rows=4_000)
    fits = [fit_weights(a, t[~val], b, t[val], k, l2=1.0, iterations=60, min_count=1800)
            for a, b in ((train_store, val_store), (x[~val], x[val]))]
    assert fits[0].best_iteration == fits[1].best_iteration > 5
    np.testing.assert_allclose(fits[0].weights, fits[1].weights, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(fits[0].validation_loss, fits[1].validation_loss, rtol=1e-9)
    assert np.corrcoef(x @ fits[0].weights, x @ weights)[0, 1] > 0.95


def test_tune_chooses_l2_by_validation_loss_and_reports_non_zero_weights(planted, tmp_path,
                                                                         capsys):
    data = planted[0]
    out, kept = tmp_path / "w.dkw", tmp_path / "design"
    assert main(["tune", str(data), "--out", str(out), "--l2", "1,100000", "--min-count",
                 "1800", "--k", "110", "--epochs", "40", "--design-dir", str(kept),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    losses = {float(l2): float(loss) for l2, loss in re.findall(
        r"--l2 (\d+) --min-count 1800: validation loss ([\d.]+)", text)}
    assert set(losses) == {1.0, 1e5} and losses[1.0] < losses[1e5] - 0.01
    assert "with --l2 1 --min-count 1800" in text
    fitted = read_weights(out, "russian")
    stored = np.rint(fitted * layout("russian").scale) != 0
    every = re.search(r"all\s+([\d,]+) / ([\d,]+)", text)
    assert int(every[1].replace(",", "")) == stored.sum() > 0
    assert int(every[2].replace(",", "")) == len(fitted)
    assert "pattern:0" in text and "patterns" in text and "wide:0" in text and "wides" in text
    assert DesignStore.open(kept / "train") is not None  # kept for the next fit
    assert not list(tmp_path.glob(".damka-design-*"))
    assert main(["tune", str(data), "--out", str(out), "--l2", "1,3", "--validation", "0",
                 "--quiet"]) == 2
    one_line_error(capsys, "validation positions")


def test_tune_is_reproducible(planted, tmp_path):
    data = planted[0]
    outs = [tmp_path / "a.dkw", tmp_path / "b.dkw"]
    for out in outs:
        assert main(["tune", str(data), "--out", str(out), "--epochs", "5", "--k", "110",
                     "--quiet"]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()


def one_line_error(capsys, words: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("damka: error:") and words in err and len(err.splitlines()) == 1


def test_tune_rejects_another_rule_set(planted, tmp_path, capsys):
    data = planted[0]
    assert main(["tune", str(data), "--out", str(tmp_path / "w.dkw"), "--variant",
                 "english", "--quiet"]) == 2
    one_line_error(capsys, "not english")
    other = tmp_path / "brazilian"
    rows = {"white": np.array([1], np.uint64), "black": np.array([1 << 30], np.uint64),
            "kings": np.zeros(1, np.uint64), "white_to_move": np.ones(1, bool)}
    write_planted_data(other, "brazilian", rows, np.zeros(1, np.int16), np.zeros(1, np.int8))
    assert main(["tune", str(data), str(other), "--out", str(tmp_path / "w.dkw"),
                 "--quiet"]) == 2
    one_line_error(capsys, "not russian")
    assert not (tmp_path / "w.dkw").exists()


def test_tune_rejects_another_format_or_layout(planted, tmp_path, capsys):
    data = planted[0]
    newer = tmp_path / "newer"
    newer.mkdir()
    meta = json.loads((data / "meta.json").read_text())
    (newer / "meta.json").write_text(json.dumps({**meta, "version": 99}))
    assert main(["tune", str(newer), "--out", str(tmp_path / "w.dkw"), "--quiet"]) == 2
    one_line_error(capsys, "version")
    assert main(["tune", str(tmp_path), "--out", str(tmp_path / "w.dkw"), "--quiet"]) == 2
    one_line_error(capsys, "meta.json")
    foreign = tmp_path / "international.dkw"
    write_weights(foreign, "international", np.zeros(layout("international").n_params))
    assert main(["tune", str(data), "--out", str(tmp_path / "w.dkw"), "--init", str(foreign),
                 "--quiet"]) == 2
    one_line_error(capsys, str(foreign))


def damka(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "protocol", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_tune_help_names_the_options():
    run = damka("tune", "--help")
    assert run.returncode == 0
    for option in ("DATA_DIR", "--out", "--variant", "--lambda", "--l2", "--epochs", "--k",
                   "--validation", "--seed", "--init", "--quiet-only", "--upgrade",
                   "--after-deviations"):
        assert option in run.stdout


def test_tune_refuses_an_out_or_design_dir_of_the_wrong_kind_before_the_fit(tmp_path):
    """A directory as --out was found only when the file was written, after the whole fit;
    a file as --design-dir and an unknown --min-count-of name after the data was read."""
    data = tmp_path / "data"
    assert main(["selfplay", "--variant", "english", "--games", "2", "--nodes", "100",
                 "--workers", "1", "--quiet", "--out", str(data)]) == 0
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-file").write_text("")
    for args, words in [(["--out", str(tmp_path / "a-dir")], "is a directory: --out names"),
                        (["--out", str(tmp_path / "w.dkw"), "--design-dir",
                          str(tmp_path / "a-file")], "a-file: not a directory"),
                        (["--out", str(tmp_path / "w.dkw"), "--min-count-of", "foo=3"],
                         "--min-count-of foo: the layout has no group 'foo'")]:
        run = damka("tune", str(data), "--quiet", *args)
        assert run.returncode == 2 and words in run.stderr, run.stderr
        assert "tune: K =" not in run.stdout  # refused before any fitting
    assert not (tmp_path / "w.dkw").exists()


@pytest.mark.parametrize("args, words", [
    (["--out", "w.dkw"], "DATA_DIR"),
    (["data", "--out", "w.dkw", "--lambda", "2"], "lambda must be between 0.0 and 1.0"),
    (["data", "--out", "w.dkw", "--validation", "x"], "validation must be a number"),
    (["data", "--out", "w.dkw", "--l2", "1,,3"], "an empty value in '1,,3'"),
    (["data", "--out", "w.dkw", "--min-count", "10,-1"], "min-count must be at least 0"),
    (["data", "--out", "w.dkw", "--min-count-of", "wide"], "min-count-of takes NAME=N"),
    (["data", "--out", "w.dkw", "--prior", "init"], "--prior init pulls the weights toward"),
    (["data", "--out", "w.dkw", "--hold", "material"], "--hold keeps features at their --init"),
    (["data", "--out", "w.dkw", "--agree", "50"], "--agree compares the search"),
    (["data", "--out", "w.dkw", "--agree", "-1"], "agree must be at least 0"),
    (["data", "--out", "w.dkw", "--anchor", "0.5"], "--anchor mixes the --init"),
    (["data", "--out", "w.dkw", "--anchor", "2"], "anchor must be between 0.0 and 1.0"),
    (["data", "--out", "w.dkw", "--min-count-of", "wide=x"],
     "the min-count of wide must be a whole number"),
    (["no/such/dir", "--out", "w.dkw"], "no/such/dir"),
    (["data", "--upgrade", "old.dkw", "--out", "w.dkw"], "give no DATA_DIR"),
    (["--upgrade", "no/such.dkw", "--out", "w.dkw"], "no/such.dkw: no such file"),
])
def test_tune_bad_arguments_one_line_no_traceback(args, words):
    run = damka("tune", *args)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.startswith("damka: error:") and words in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("version", [1, 2])
def test_tune_upgrade_writes_a_file_of_an_old_layout_in_the_current_layout(version, tmp_path,
                                                                          capsys):
    from test_evaluation import _old_file

    _old_file(tmp_path / "old.dkw", "czech", version)
    new = tmp_path / "new.dkw"
    assert main(["tune", "--upgrade", str(tmp_path / "old.dkw"), "--out", str(new)]) == 0
    assert f"evaluation layout {version}" in capsys.readouterr().out
    assert read_weights(new, "czech").shape == (layout("czech").n_params,)
    assert main(["tune", "--upgrade", str(new), "--out", str(tmp_path / "again.dkw")]) == 2
    assert "already of the current layout" in capsys.readouterr().err
    assert not (tmp_path / "again.dkw").exists()


def test_tune_without_holds_the_named_features_at_zero(planted, tmp_path, capsys):
    data = planted[0]
    out = tmp_path / "without.dkw"
    assert main(["tune", str(data), "--out", str(out), "--epochs", "3", "--min-count", "1",
                 "--without", "edge,material.men", "--quiet"]) == 0
    assert "parameters held at zero" in capsys.readouterr().out
    fitted = read_weights(out, "russian")
    lay = layout("russian")
    for group in ("edge:0", "edge:1"):
        assert not fitted[lay.group_slice(group)].any()
    assert not fitted[0:2].any()  # material.men, middlegame and endgame
    assert fitted[lay.group_slice("pattern:0")].any() and fitted[2:8].any()
    with_edges = tmp_path / "with.dkw"
    assert main(["tune", str(data), "--out", str(with_edges), "--epochs", "3", "--min-count",
                 "1", "--quiet"]) == 0
    assert read_weights(with_edges, "russian")[lay.group_slice("edge:0")].any()


def test_tune_min_count_of_gives_the_named_features_their_own_minimum(planted, tmp_path):
    data = planted[0]
    lay = layout("russian")
    out = tmp_path / "edges-rare.dkw"
    # every edge entry occurs in fewer positions than the data holds: none is fitted, while
    # the patterns and the edges of a fit without the option are
    assert main(["tune", str(data), "--out", str(out), "--epochs", "3", "--min-count", "1",
                 "--min-count-of", "edge=1000000", "--quiet"]) == 0
    fitted = read_weights(out, "russian")
    assert not fitted[lay.group_slice("edge:0")].any()
    assert not fitted[lay.group_slice("edge:1")].any()
    assert fitted[lay.group_slice("pattern:0")].any()
    same = tmp_path / "edges-common.dkw"
    assert main(["tune", str(data), "--out", str(same), "--epochs", "3", "--min-count",
                 "1000000", "--min-count-of", "edge=1", "--quiet"]) == 0
    fitted = read_weights(same, "russian")
    assert fitted[lay.group_slice("edge:0")].any()
    assert not fitted[lay.group_slice("pattern:0")].any()


def test_tune_hold_keeps_the_named_features_at_their_start(planted, tmp_path, capsys):
    data = planted[0]
    lay = layout("russian")
    start = np.zeros(lay.n_params)
    start[0:8] = [150.0, 120.0, 300.0, 400.0, 250.0, 350.0, 200.0, 300.0]  # material
    init = tmp_path / "start.dkw"
    write_weights(init, "russian", start)
    out = tmp_path / "held.dkw"
    assert main(["tune", str(data), "--out", str(out), "--init", str(init), "--epochs", "3",
                 "--min-count", "1", "--hold", "material", "--quiet"]) == 0
    assert "holding material: 8 parameters kept" in capsys.readouterr().out
    fitted = read_weights(out, "russian")
    assert np.array_equal(fitted[0:8], read_weights(init, "russian")[0:8])
    assert not np.array_equal(fitted[lay.group_slice("pattern:0")],
                              start[lay.group_slice("pattern:0")])
    free = tmp_path / "free.dkw"
    assert main(["tune", str(data), "--out", str(free), "--init", str(init), "--epochs", "3",
                 "--min-count", "1", "--quiet"]) == 0
    assert not np.array_equal(read_weights(free, "russian")[0:8], fitted[0:8])


def test_tune_min_count_of_names_what_the_layout_lacks(planted, tmp_path, capsys):
    assert main(["tune", str(planted[0]), "--out", str(tmp_path / "w.dkw"), "--min-count-of",
                 "nothing=5", "--quiet"]) == 2
    assert "--min-count-of nothing: the layout has no group 'nothing'" in capsys.readouterr().err


@pytest.mark.parametrize("name, words", [
    ("nothing", "no group 'nothing'"),
    ("king_mobility.wings", "king_mobility has no feature 'wings'"),
])
def test_tune_without_names_what_the_layout_lacks(planted, tmp_path, capsys, name, words):
    assert main(["tune", str(planted[0]), "--out", str(tmp_path / "w.dkw"), "--without", name,
                 "--quiet"]) == 2
    assert words in capsys.readouterr().err


def test_tune_refuses_damaged_data_and_the_same_directory_twice(tmp_path):
    """A truncated chunk gave a traceback (BadZipFile); a chunk of another run copied in was
    fitted as if meta.json listed it; a directory given twice counted its games twice; --out
    inside the data directory could replace its meta.json."""
    import shutil

    data = tmp_path / "data"
    assert main(["selfplay", "--variant", "english", "--games", "3", "--nodes", "100",
                 "--workers", "1", "--quiet", "--out", str(data)]) == 0
    other = tmp_path / "other"
    assert main(["selfplay", "--variant", "english", "--games", "3", "--nodes", "100",
                 "--workers", "1", "--quiet", "--seed", "5", "--out", str(other)]) == 0
    cut = tmp_path / "cut"
    shutil.copytree(data, cut)
    chunk = cut / "chunk-00000.npz"
    chunk.write_bytes(chunk.read_bytes()[:5000])
    swapped = tmp_path / "swapped"
    shutil.copytree(data, swapped)
    shutil.copy(other / "chunk-00000.npz", swapped / "chunk-00000.npz")
    for args, words in [([str(cut)], "chunk-00000.npz: not a readable chunk"),
                        ([str(swapped)], "not the chunk meta.json lists"),
                        ([str(data), str(data)], "is given twice"),
                        ([str(data), f"{tmp_path}/./data/"], "are one directory")]:
        run = damka("tune", *args, "--out", str(tmp_path / "w.dkw"), "--quiet")
        assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr
    run = damka("tune", str(data), "--out", str(data / "meta.json"), "--quiet")
    assert run.returncode == 2 and "inside the data directory" in run.stderr
    assert json.loads((data / "meta.json").read_text())["games_done"] == 3


def test_a_design_dir_of_other_files_is_refused_not_emptied(tmp_path):
    """--design-dir replaced its train/ and validation/ folders whole: a folder of self-play
    data named train was deleted."""
    import shutil

    data = tmp_path / "data"
    assert main(["selfplay", "--variant", "english", "--games", "3", "--nodes", "100",
                 "--workers", "1", "--quiet", "--out", str(data)]) == 0
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(data, runs / "train")
    run = damka("tune", str(runs / "train"), "--out", str(tmp_path / "w.dkw"), "--design-dir",
                str(runs), "--quiet")
    assert run.returncode == 2 and "holds files that are not the features'" in run.stderr
    assert (runs / "train" / "meta.json").exists() and (runs / "train" / "chunk-00000.npz").exists()
    # its own folders are replaced as before: a fit, then a fit of other data
    other = tmp_path / "other"
    assert main(["selfplay", "--variant", "english", "--games", "3", "--nodes", "100",
                 "--workers", "1", "--quiet", "--seed", "5", "--out", str(other)]) == 0
    design = tmp_path / "design"
    for source in (data, other):
        assert damka("tune", str(source), "--out", str(tmp_path / "w.dkw"), "--design-dir",
                     str(design), "--quiet").returncode == 0


def test_tune_agree_fits_only_positions_the_start_scores_as_the_search_did(planted, tmp_path,
                                                                           capsys):
    from engine.evaluation import static_evals
    from protocol.training.dataset import load_positions

    data, weights = planted[0], planted[1]
    positions = load_positions([str(data)], None)
    for name, start in (("zero", np.zeros(len(weights))), ("planted", weights)):
        init = tmp_path / f"{name}.dkw"
        write_weights(init, "russian", start)
        static = static_evals("russian", positions.white, positions.black, positions.kings,
                              positions.white_to_move, init)
        expected = int((np.abs(positions.score - static) <= 20).sum())
        assert 0 < expected < len(positions)
        assert main(["tune", str(data), "--out", str(tmp_path / f"{name}-fit.dkw"), "--init",
                     str(init), "--agree", "20", "--epochs", "2", "--min-count", "1",
                     "--quiet"]) == 0
        text = capsys.readouterr().out
        assert f"--agree 20: {expected} of {len(positions)} positions" in text
        train, val = map(int, re.search(r"(\d+) training and (\d+) validation", text).groups())
        assert train + val == expected and val > 0
    # a zero file scores every position 0: only the search's near-level positions are kept;
    # the planted file scores them as the (noisy) search did: most are kept
    zero_kept = int((np.abs(positions.score) <= 20).sum())
    assert zero_kept < expected


def test_tune_anchor_keeps_the_fit_near_the_init_files_predictions(planted, tmp_path, capsys):
    data, weights, k, params, x = planted
    rng = np.random.default_rng(5)
    start = weights.copy()
    start[params] += rng.normal(0.0, 2.0, len(params)) * np.abs(weights[params])  # a poor start
    init = tmp_path / "start.dkw"
    write_weights(init, "russian", start)
    start = read_weights(init, "russian")
    fits = {}
    for share in ("0", "0.9", "1"):
        out = tmp_path / f"anchor-{share}.dkw"
        assert main(["tune", str(data), "--out", str(out), "--init", str(init), "--anchor",
                     share, "--prior", "init", "--l2", "1", "--min-count", "1800",
                     "--without", "wide", "--patience", "30", "--quiet"]) == 0
        text = capsys.readouterr().out
        assert (f"--anchor {share}:" in text) == (share != "0")
        fits[share] = x @ read_weights(out, "russian")
    planted_eval, start_eval = x @ weights, x @ start
    distance = {share: np.sqrt(np.mean((fit - start_eval) ** 2)) for share, fit in fits.items()}
    # unanchored, the data pulls the fit from the poor start toward the planted weights; the
    # anchor holds it back, and wholly anchored it stays where it started
    assert np.corrcoef(fits["0"], planted_eval)[0, 1] > np.corrcoef(start_eval,
                                                                    planted_eval)[0, 1]
    assert distance["1"] < distance["0.9"] < distance["0"]
    assert distance["1"] < 0.05 * distance["0"]


def test_after_last_deviation_keeps_what_follows_a_games_last_random_move():
    from protocol.training.dataset import after_last_deviation

    # a random move shows as a step of more than one ply between two positions of a game
    game = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    ply = np.array([4, 5, 7, 8, 0, 1, 2, 9, 11, 12, 15])
    assert after_last_deviation(game, ply).tolist() == [
        False, False, True, True, True, True, True, False, False, False, True]


def test_tune_after_deviations_fits_only_the_positions_after_the_last_random_move(
        tmp_path, capsys):
    data = tmp_path / "deviating"
    assert main(["selfplay", "--out", str(data), "--games", "6", "--workers", "1", "--seed",
                 "4", "--nodes", "150", "--max-plies", "200", "--deviate", "0.1",
                 "--quiet"]) == 0
    from protocol.training.data import read_games

    _, arrays = read_games(data)
    expected = everything = 0
    for game_id in arrays["game_id"]:
        rows = np.flatnonzero(arrays["game"] == game_id)
        quiet = arrays["quiet"][rows] & ~arrays["opponent_capture"][rows]
        gaps = np.flatnonzero(np.diff(arrays["ply"][rows]) > 1)
        first = 0 if len(gaps) == 0 else gaps[-1] + 1
        expected += int(quiet[first:].sum())
        everything += int(quiet.sum())
    assert 0 < expected < everything  # random moves were played, and some positions follow
    counts = {}
    for flag in ([], ["--after-deviations"]):
        assert main(["tune", str(data), "--out", str(tmp_path / "w.dkw"), "--epochs", "2",
                     "--min-count", "1", "--quiet", *flag]) == 0
        text = capsys.readouterr().out
        train, val = map(int, re.search(r"(\d+) training and (\d+) validation", text).groups())
        counts[bool(flag)] = train + val
        assert ("--after-deviations: only" in text) == bool(flag)
    assert counts == {False: everything, True: expected}
