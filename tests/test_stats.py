"""Match statistics against values worked out by hand from the formulas (protocol/match/stats.py)."""

from __future__ import annotations

import math

import pytest

from protocol.match.stats import Record, elo_from_score, los, score_from_elo, sprt, sprt_bounds, sprt_llr


def test_elo_of_simple_scores():
    # elo(s) = -400 log10(1/s - 1)
    # s = 0.5: 1/s - 1 = 1, log10(1) = 0                       -> 0
    # s = 0.75: 1/s - 1 = 1/3, -400 * log10(1/3) = 400 * 0.4771213 = 190.8485
    # s = 10/11 (10:1 odds): 1/s - 1 = 0.1, -400 * -1           -> 400
    assert elo_from_score(0.5) == 0
    assert elo_from_score(0.75) == pytest.approx(190.8485, abs=1e-3)
    assert elo_from_score(10 / 11) == pytest.approx(400.0)
    assert elo_from_score(1 / 11) == pytest.approx(-400.0)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    # the inverse: 1 / (1 + 10^(-400/400)) = 1 / 1.1 = 0.909090...
    assert score_from_elo(400) == pytest.approx(10 / 11)


def test_record_score_and_elo():
    # 60 wins, 20 draws, 20 losses: s = (60 + 10) / 100 = 0.7
    # elo = -400 log10(1/0.7 - 1) = -400 log10(3/7) = -400 * (0.4771213 - 0.8450980) = 147.1907
    r = Record(60, 20, 20)
    assert r.games == 100 and r.points == 70
    assert r.score == pytest.approx(0.7)
    assert r.elo == pytest.approx(147.1907, abs=1e-3)
    assert r.reversed() == Record(20, 20, 60)


def test_variance_and_interval():
    # 60/20/20, s = 0.7: var = (60 * 0.3^2 + 20 * 0.2^2 + 20 * 0.7^2) / 100
    #                        = (5.4 + 0.8 + 9.8) / 100 = 0.16;  se = sqrt(0.16 / 100) = 0.04
    r = Record(60, 20, 20)
    assert r.variance == pytest.approx(0.16)
    # 95%: s -+ 1.959964 * 0.04 = 0.7 -+ 0.0783986 = 0.6216014 .. 0.7783986
    # elo(0.6216014) = -400 log10(0.6087479) = -400 * -0.2155626 = 86.225
    # elo(0.7783986) = -400 log10(0.2846889) = -400 * -0.5456294 = 218.252
    low, high = r.elo_interval()
    assert low == pytest.approx(86.225, abs=0.001)
    assert high == pytest.approx(218.252, abs=0.001)


def test_interval_of_a_lopsided_record():
    # 30 wins, 40 draws, 20 losses (n = 90): s = (30 + 20) / 90 = 5/9 = 0.555556
    # elo = -400 log10(9/5 - 1) = -400 log10(0.8) = 38.764
    # var = (30 (4/9)^2 + 40 (1/18)^2 + 20 (5/9)^2) / 90 = (5.925926 + 0.123457 + 6.172840) / 90
    #     = 0.1358025;  se = sqrt(0.1358025 / 90) = 0.0388448;  1.959964 se = 0.0761344
    # bounds 0.4794212 and 0.6316899: elo -14.31 and +93.72
    r = Record(30, 40, 20)
    assert r.elo == pytest.approx(38.764, abs=1e-3)
    assert r.variance == pytest.approx(0.1358025, abs=1e-7)
    low, high = r.elo_interval()
    assert low == pytest.approx(-14.31, abs=0.01)
    assert high == pytest.approx(93.72, abs=0.01)


def test_interval_at_the_edges():
    # all wins: s = 1, var = 0: the interval collapses onto +inf
    assert Record(5, 0, 0).elo_interval() == (math.inf, math.inf)
    # no games: nothing is known
    assert Record().elo_interval() == (-math.inf, math.inf)
    # 3 wins 1 loss: s = 0.75, var = (3 * 0.0625 + 0.5625) / 4 = 0.1875, se = 0.2165,
    # s + 1.96 se = 1.17 > 1: the upper bound is +inf
    low, high = Record(3, 0, 1).elo_interval()
    assert high == math.inf and low < 0


def test_los():
    # LOS = (1 + erf((W - L) / sqrt(2 (W + L)))) / 2
    # W 30, L 20: (30 - 20) / sqrt(100) = 1; (1 + erf(1)) / 2 = (1 + 0.8427008) / 2 = 0.9213504
    assert los(30, 20) == pytest.approx(0.9213504, abs=1e-7)
    assert Record(30, 40, 20).los == pytest.approx(0.9213504, abs=1e-7)  # draws do not count
    # W 6, L 0: 6 / sqrt(12) = 1.7320508; erf(1.7320508) = 0.9856941 -> 0.9928471
    assert los(6, 0) == pytest.approx(0.9928471, abs=1e-7)
    assert los(20, 30) == pytest.approx(1 - 0.9213504, abs=1e-7)
    assert los(0, 0) == 0.5 and los(7, 7) == 0.5


def test_sprt_bounds():
    # alpha = beta = 0.05: ln(0.05 / 0.95) = -2.944439, ln(0.95 / 0.05) = +2.944439
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    # alpha 0.05, beta 0.1: ln(0.1 / 0.95) = -2.251292, ln(0.9 / 0.05) = ln 18 = 2.890372
    lower, upper = sprt_bounds(0.05, 0.1)
    assert lower == pytest.approx(-2.251292, abs=1e-6)
    assert upper == pytest.approx(2.890372, abs=1e-6)
    with pytest.raises(ValueError):
        sprt_bounds(0, 0.05)


def test_sprt_llr():
    # H0 elo 0: s0 = 0.5; H1 elo 10: s1 = 1 / (1 + 10^-0.025) = 1 / 1.9440609 = 0.5143872
    # 30/40/20: s = 5/9, var = 0.1358025 (above), n = 90
    # LLR = n (s1 - s0)(2 s - s0 - s1) / (2 var)
    #     = 90 * 0.0143872 * (1.1111111 - 1.0143872) / 0.2716049
    #     = 90 * 0.0143872 * 0.0967239 / 0.2716049 = 0.461121
    r = Record(30, 40, 20)
    assert sprt_llr(r, 0, 10) == pytest.approx(0.461121, abs=1e-5)
    # ten times the games in the same proportions: s and var unchanged, LLR ten times: 4.61121
    assert sprt_llr(Record(300, 400, 200), 0, 10) == pytest.approx(4.61121, abs=1e-4)
    # the mirror record: 2 s - s0 - s1 = 0.8888889 - 1.0143872 = -0.1254983 ->
    # 90 * 0.0143872 * -0.1254983 / 0.2716049 = -0.598299
    assert sprt_llr(r.reversed(), 0, 10) == pytest.approx(-0.598299, abs=1e-5)
    # no spread of results yet (all draws): no evidence
    assert sprt_llr(Record(0, 10, 0), 0, 10) == 0.0
    assert sprt_llr(Record(), 0, 10) == 0.0


def test_sprt_decisions():
    assert sprt(Record(30, 40, 20), 0, 10, 0.05, 0.05).decision is None
    result = sprt(Record(300, 400, 200), 0, 10, 0.05, 0.05)
    assert result.decision == "H1" and result.llr > result.upper
    # 200/400/300: s = 0.4444, LLR = 10 * -0.598299 = -5.98 < -2.944: H0
    assert sprt(Record(200, 400, 300), 0, 10, 0.05, 0.05).decision == "H0"
