"""Pattern tables fitted as sums of their parts (``damka tune --factor``): the parts matrix
reads each entry's men, the fit gives entries no position held the sum of their parts, and
the command refuses what it cannot factor."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from engine.evaluation import layout, read_weights
from protocol.cli import main
from protocol.training.factored import factor_matrix, window_squares
from protocol.training.logistic import fit_weights

from test_tune import planted  # noqa: F401  (the fixture)


def table_layout(k: int) -> SimpleNamespace:
    """A layout of one table of 3^k entries, middlegame and endgame weights interleaved."""
    size = 2 * 3 ** k
    return SimpleNamespace(groups=[("pattern:0", 0, size)], n_params=size)


def digits(entry: int, k: int) -> list[int]:
    return [(entry // 3 ** i) % 3 for i in range(k)]


def test_each_entry_holds_a_part_per_man_and_per_two_men():
    k = 4
    m = factor_matrix(table_layout(k), ["pattern:0"]).tocsr()
    assert m.shape == (2 * 81, 2 * (2 * k + 4 * 6))
    for entry in range(81):
        men = sum(d != 1 for d in digits(entry, k))
        for phase in (0, 1):
            row = m[2 * entry + phase]
            assert row.nnz == men + men * (men - 1) // 2
            # the middlegame weight is fed by middlegame parts only, and so on
            assert all((c >= m.shape[1] // 2) == bool(phase) for c in row.indices)
    # two entries share a part exactly when they have a man of the same colour on a square
    a, b = 2 * (2 + 0 * 3 + 1 * 9 + 1 * 27), 2 * (2 + 1 * 3 + 0 * 9 + 1 * 27)
    shared = set(m[a].indices) & set(m[b].indices)
    assert len(shared) == 1  # the white man on the first square; the black men stand apart


def test_window_squares_refuses_other_sizes():
    assert window_squares(6561) == 8 and window_squares(19683) == 9
    for size in (6560, 100, 3):
        with pytest.raises(ValueError):
            window_squares(size)


def test_the_fit_gives_unseen_entries_the_sum_of_their_parts():
    """A table whose true weights are sums of parts, half its entries never in the data:
    factored, the fit predicts the unseen half; entry by entry, it leaves them at zero."""
    rng = np.random.default_rng(3)
    k = 5
    lay = table_layout(k)
    factoring = factor_matrix(lay, ["pattern:0"])
    true_parts = rng.normal(0.0, 30.0, factoring.shape[1])
    planted = factoring @ true_parts
    entries = 3 ** k
    seen = rng.permutation(entries)[: entries // 2]
    unseen = np.setdiff1d(np.arange(entries), seen)
    rows = 40_000
    entry = rng.choice(seen, size=rows)
    phase = rng.random(rows)  # the middlegame share of the position
    x = sparse.csr_matrix((np.column_stack([phase, 1.0 - phase]).ravel(),
                           np.column_stack([2 * entry, 2 * entry + 1]).ravel(),
                           np.arange(0, 2 * rows + 1, 2)), shape=(rows, lay.n_params))
    k_scale = 100.0
    won = (rng.random(rows) < expit(x @ planted / k_scale)).astype(np.float64)
    train, val = slice(0, 36_000), slice(36_000, rows)
    factored = fit_weights(x[train], won[train], x[val], won[val], k_scale, l2=1.0,
                           iterations=300, factoring=factoring, patience=20)
    plain = fit_weights(x[train], won[train], x[val], won[val], k_scale, l2=1.0,
                        iterations=300, patience=20)
    unseen_params = np.concatenate([2 * unseen, 2 * unseen + 1])
    assert not plain.weights[unseen_params].any()
    assert np.corrcoef(factored.weights[unseen_params], planted[unseen_params])[0, 1] > 0.8
    assert factored.validation_loss[factored.best_iteration] <= \
        plain.validation_loss[plain.best_iteration] + 1e-3


def test_parts_of_held_weights_stay_at_zero():
    """A part feeding only weights held at their start does not move them."""
    rng = np.random.default_rng(4)
    lay = table_layout(3)
    factoring = factor_matrix(lay, ["pattern:0"])
    rows = 5_000
    entry = rng.integers(0, 27, rows)
    x = sparse.csr_matrix((np.ones(rows), 2 * entry, np.arange(rows + 1)),
                          shape=(rows, lay.n_params))
    won = (rng.random(rows) < 0.6).astype(np.float64)
    start = rng.normal(0.0, 10.0, lay.n_params)
    fit = fit_weights(x, won, x[:0], won[:0], 100.0, iterations=20, init=start,
                      frozen=np.ones(lay.n_params, bool), factoring=factoring)
    assert np.array_equal(fit.weights, start)


def test_tune_factor_fills_the_entries_the_data_never_holds(planted, tmp_path, capsys):  # noqa: F811
    data = planted[0]
    lay = layout("russian")
    table = lay.group_slice("pattern:0")
    never = np.bincount(planted[4].indices, minlength=lay.n_params)[table] == 0
    assert never.any()
    out = tmp_path / "factored.dkw"
    assert main(["tune", str(data), "--out", str(out), "--epochs", "5", "--min-count", "1",
                 "--without", "wide", "--factor", "pattern", "--quiet"]) == 0
    assert "pattern fitted as sums of parts" in capsys.readouterr().out
    fitted = read_weights(out, "russian")[table]
    plain = tmp_path / "plain.dkw"
    assert main(["tune", str(data), "--out", str(plain), "--epochs", "5", "--min-count", "1",
                 "--without", "wide", "--quiet"]) == 0
    assert not read_weights(plain, "russian")[table][never].any()
    assert np.count_nonzero(fitted[never]) > never.sum() // 2


@pytest.mark.parametrize("extra, words", [
    (["--factor", "material"], "--factor material: not a pattern table"),
    (["--factor", "edge", "--without", "edge"], "--factor edge:0: the table is held"),
    (["--factor", "nothing"], "--factor nothing: the layout has no group 'nothing'"),
    (["--factor", "king_mobility.squares"], "name whole tables"),
])
def test_tune_factor_errors_are_one_line(planted, tmp_path, capsys, extra, words):  # noqa: F811
    assert main(["tune", str(planted[0]), "--out", str(tmp_path / "w.dkw"), "--quiet"]
                + extra) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "w.dkw").exists()
