"""``damka rescore``: every position written is a quiet position of the source with the score
a fresh search of it gives at the budget asked (checked against the engine searched
directly), the sample is the same on one or two workers and across a resumed or interrupted
run, and ``damka tune`` fits what it writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine import get_variant
from engine.board import Board
from engine.position import Position
from engine.search import Engine, Limits
from protocol.cli import main
from protocol.training import rescore
from protocol.training.data import GAME_FIELDS, POSITION_FIELDS, read_games

#: the rescoring budget of these tests (English: a few milliseconds a position)
NODES = "2000"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rescore") / "src"
    assert main(["selfplay", "--out", str(out), "--games", "6", "--workers", "2", "--variant",
                 "english", "--nodes", "150", "--seed", "8", "--quiet"]) == 0
    return out


def rescore_run(src: Path, out: Path, *extra: str) -> int:
    return main(["rescore", str(src), "--out", str(out), "--nodes", NODES, "--quiet", *extra])


@pytest.fixture(scope="module")
def every_third(source, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rescore") / "every3"
    assert rescore_run(source, out, "--every", "3", "--workers", "1") == 0
    return out


def keys(data: dict[str, np.ndarray]) -> list[tuple[int, int]]:
    return list(zip(data["game"].tolist(), data["ply"].tolist()))


def test_each_position_is_a_quiet_source_position_with_a_fresh_deeper_score(source,
                                                                            every_third):
    _, src = read_games(source)
    meta, out = read_games(every_third)
    assert meta.variant == "english" and meta.games_done == 6
    assert meta.settings["rescore"] == {"nodes": int(NODES), "every": 3, "seed": 1,
                                        "hash_mb": 64}
    at = {key: i for i, key in enumerate(keys(src))}
    engine = Engine(get_variant("english"), hash_mb=64)
    changed = 0
    for j, key in enumerate(keys(out)):
        i = at[key]
        assert src["quiet"][i] and not src["opponent_capture"][i]
        for name in POSITION_FIELDS:
            if name != "score":
                assert out[name][j] == src[name][i], name
        engine.clear()
        board = Board(get_variant("english"), Position(
            int(out["white"][j]), int(out["black"][j]), int(out["kings"][j]),
            bool(out["white_to_move"][j])))
        expected = engine.search(board, Limits(nodes=int(NODES))).score
        assert out["score"][j] == max(-10000, min(10000, expected))
        changed += int(out["score"][j] != src["score"][i])
    assert changed > 0  # a deeper search than the games' 150 nodes sees other things
    for name in GAME_FIELDS:  # every game of the source is kept, positions or not
        assert np.array_equal(out[name], src[name]), name
    assert keys(out) == sorted(keys(out))


def test_every_takes_a_spread_share_and_every_one_takes_all(source, every_third, tmp_path):
    _, src = read_games(source)
    _, third = read_games(every_third)
    quiet = int((src["quiet"] & ~src["opponent_capture"]).sum())
    assert 0.2 * quiet < len(third["game"]) < 0.47 * quiet
    assert set(third["game"].tolist()) == set(range(6))  # from every game
    out = tmp_path / "all"
    assert rescore_run(source, out, "--every", "1", "--nodes", "200", "--workers", "2") == 0
    _, everything = read_games(out)
    assert len(everything["game"]) == quiet
    other = tmp_path / "seed2"
    assert rescore_run(source, other, "--every", "3", "--seed", "2", "--workers", "1") == 0
    assert keys(read_games(other)[1]) != keys(third)


def test_two_workers_and_a_resumed_run_write_the_same(source, every_third, tmp_path):
    out = tmp_path / "resumed"
    assert rescore_run(source, out, "--every", "3", "--workers", "2", "--games", "2") == 0
    assert json.loads((out / "meta.json").read_text())["games_done"] == 2
    assert rescore_run(source, out, "--every", "3", "--workers", "2") == 0
    a, b = read_games(out)[1], read_games(every_third)[1]
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    assert rescore_run(source, out, "--every", "3") == 0  # nothing left to do


def test_an_interrupted_run_keeps_whole_games_and_goes_on(source, every_third, tmp_path,
                                                         monkeypatch, capsys):
    real = rescore.score_positions
    calls = 0

    def stop_after_some(*args):
        nonlocal calls
        calls += 1
        if calls > 12:  # in the middle of a game: its scored positions are dropped
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(rescore, "score_positions", stop_after_some)
    out = tmp_path / "stopped"
    assert rescore_run(source, out, "--every", "3", "--workers", "1") == 130
    assert "rerun the same command to go on" in capsys.readouterr().err
    meta, part = read_games(out)
    _, whole = read_games(every_third)
    assert 0 < meta.games_done < 6
    covered = whole["game"] < meta.games_done
    assert keys(part) == keys({name: whole[name][covered] for name in ("game", "ply")})
    assert np.array_equal(part["score"], whole["score"][covered])
    monkeypatch.setattr(rescore, "score_positions", real)
    assert rescore_run(source, out, "--every", "3", "--workers", "1") == 0
    again = read_games(out)[1]
    for name in again:
        assert np.array_equal(again[name], whole[name]), name


def test_refuses_other_settings_the_source_itself_and_what_is_not_data(source, every_third,
                                                                        tmp_path, capsys):
    assert rescore_run(source, every_third, "--every", "4") == 2
    assert "other settings" in capsys.readouterr().err
    assert rescore_run(source, source) == 2
    assert "is the source directory" in capsys.readouterr().err
    assert rescore_run(tmp_path / "nothing", tmp_path / "out") == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert rescore_run(tmp_path / "empty", tmp_path / "out") == 2
    assert "not a damka selfplay directory" in capsys.readouterr().err


def test_tune_fits_the_rescored_scores(every_third, tmp_path, capsys):
    weights = tmp_path / "w.dkw"
    assert main(["tune", str(every_third), "--out", str(weights), "--lambda", "1",
                 "--epochs", "3", "--quiet"]) == 0
    assert weights.stat().st_size > 0
    assert "tune:" in capsys.readouterr().out


def test_help_names_the_options(capsys):
    assert main(["rescore", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("SOURCE", "--out", "--nodes", "--every", "--games", "--weights", "--egtb",
                   "--workers", "--seed", "--hash"):
        assert option in text


def test_progress_lines_in_a_log(source, tmp_path, capsys, monkeypatch):
    from protocol.training import rescore_command

    monkeypatch.setattr(rescore_command, "LOG_EVERY_SECONDS", 0.0)  # a line every batch
    assert main(["rescore", str(source), "--out", str(tmp_path / "log"), "--nodes", "300",
                 "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "rescore: 6/6 games" in captured.err and "\r" not in captured.err
    assert "covers 6 games" in captured.out


def test_sigterm_keeps_the_whole_games_scored(source, tmp_path):
    """A batch system's stop: the games scored so far are written, the rest go on later."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "protocol", "rescore", str(source), "--out", str(out),
         "--nodes", "300000", "--every", "1", "--workers", "2", "--quiet"],
        cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    time.sleep(6)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rerun the same command to go on" in err and "Traceback" not in err
    meta, data = read_games(out)
    assert 0 < meta.games_done < 6
    assert set(data["game"].tolist()) <= set(range(meta.games_done))
