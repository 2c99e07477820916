"""``--cluster``: matches and self-play on a real Ray instance (bound to 127.0.0.1, started once
for the module), checked against the same runs on one machine (resumed runs too), the SPRT
stopping the cluster, slots per machine, and the faults: a worker process killed mid-game (a
match's and self-play's), a unit that ends every worker, a worker that cannot start an engine,
a worker that cannot start at all.

Fixed depth and nodes make the games deterministic, so "the same games" is byte-for-byte: the
cluster's PDN file holds exactly the one machine's games (in the order they finished) and
its self-play chunks hold the same arrays.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine.pdn import read_games, write_game
from engine.variants import get_variant
from protocol.cli import main as cli_main
from protocol.cluster.connect import ClusterError, check_address, import_ray, start_local
from protocol.cluster.farm import MAX_ATTEMPTS, Farm, worker_info
from protocol.match.engines import parse_engine
from protocol.match.openings import read_openings, start_opening
from protocol.match.runner import Match, MatchConfig, MatchError, SprtSettings
from protocol.match.timecontrol import TimeControl
from protocol.training.data import read_games as read_data

import coin_players
from coin_players import CoinSpec

REPO = Path(__file__).resolve().parents[1]
INTERNATIONAL = get_variant("international")
OPENINGS = read_openings(REPO / "bench" / "openings_international.txt", INTERNATIONAL)[:3]

ray = pytest.importorskip(
    "ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory):
    """One small Ray for the module, started as ``--cluster local`` starts it (on 127.0.0.1
    only): two CPUs, no dashboard, the smallest object store."""
    if ray.is_initialized():
        ray.shutdown()
    start_local(ray, str(tmp_path_factory.mktemp("ray-start")), num_cpus=2, object_store_mb=80)
    # the fake engines live in the tests, which the workers cannot import
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.cloudpickle.register_pickle_by_value(coin_players)
    yield
    ray.shutdown()


def match_config(pdn: Path, cluster: str | None, **extra) -> MatchConfig:
    return MatchConfig(engines=[parse_engine("damka hash=8"), parse_engine("damka name=b hash=8")],
                       control=TimeControl(depth=3), openings=OPENINGS, variant=INTERNATIONAL,
                       pdn=pdn, cluster=cluster, comments=False,
                       concurrency=None if cluster else 1, **extra)


def pdn_texts(path: Path) -> list[str]:
    return [write_game(game) for game in read_games(path)]


def by_round(texts: list[str]) -> dict[int, str]:
    out: dict[int, str] = {}
    for text in texts:
        number = int(text.split('[Round "', 1)[1].split('"', 1)[0])
        assert number not in out, f"game {number} recorded twice"
        out[number] = text
    return out


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory) -> dict[int, str]:
    pdn = tmp_path_factory.mktemp("one") / "match.pdn"
    Match(match_config(pdn, None)).run()
    return by_round(pdn_texts(pdn))


def test_match_on_the_cluster_plays_the_same_games(one_machine, tmp_path):
    seen: list[int] = []
    state = Match(match_config(tmp_path / "m.pdn", "local"),
                  on_progress=lambda s: seen.append(s.done)).run()
    assert by_round(pdn_texts(tmp_path / "m.pdn")) == one_machine
    assert state.done == len(one_machine) == 6
    assert seen == list(range(7))  # progress before the first game and after every game
    assert state.replayed == 0 and not state.interrupted


def test_resume_on_the_cluster_plays_only_the_missing_games(one_machine, tmp_path):
    pdn = tmp_path / "m.pdn"
    pdn.write_text("\n".join(one_machine[r] for r in (2, 5)) + "\n")
    state = Match(match_config(pdn, "local", resume=True)).run()
    assert by_round(pdn_texts(pdn)) == one_machine
    assert sum(r.resumed for r in state.records) == 2 and state.done == 6


def _slots_playing(title: bytes) -> list[int]:
    """The pids of the Ray worker processes running a game now (Ray titles them so)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if cmdline.startswith(title):
            pids.append(int(entry.name))
    return pids


class Killer:
    """A thread that SIGKILLs the first slot seen playing 50 ms apart (so mid-game)."""

    def __init__(self, title: bytes):
        self.title = title
        self.killed: list[int] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        seen: set[int] = set()
        while not self.done.wait(0.05):
            playing = set(_slots_playing(self.title))
            if playing & seen:
                pid = min(playing & seen)
                os.kill(pid, signal.SIGKILL)
                self.killed.append(pid)
                return
            seen = playing

    def __enter__(self) -> "Killer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def test_a_worker_killed_mid_game_loses_no_game(one_machine, tmp_path):
    warnings: list[str] = []
    with Killer(b"ray::MatchSlot.play") as killer:
        state = Match(match_config(tmp_path / "m.pdn", "local"),
                      on_warning=warnings.append).run()
    killed = killer.killed
    assert killed, "no game was running to be killed"
    assert by_round(pdn_texts(tmp_path / "m.pdn")) == one_machine  # each game exactly once
    assert state.replayed >= 1
    assert any("was lost during game" in w and "played again" in w for w in warnings)


def test_a_worker_that_cannot_start_an_engine_is_named_not_scored(tmp_path):
    config = match_config(tmp_path / "m.pdn", "local")
    config.engines = [config.engines[0], parse_engine(f"cmd='{tmp_path}/no-such-engine hub'")]
    with pytest.raises(ClusterError) as error:
        Match(config).run()
    message = str(error.value)
    assert "no worker of the cluster can play" in message
    assert "cannot start engine no-such-engine" in message and "pid" in message
    assert not (tmp_path / "m.pdn").exists()


def test_sprt_stops_the_whole_cluster(tmp_path):
    config = MatchConfig(engines=[CoinSpec("strong", 0.1, 1), CoinSpec("weak", 0.5, 2)],
                         control=TimeControl(depth=1), openings=[start_opening("international")],
                         games_per_pair=2000, max_moves=1, comments=False, cluster="local",
                         concurrency=None, pdn=tmp_path / "sprt.pdn",
                         sprt=SprtSettings(0, 50, 0.05, 0.05))
    state = Match(config).run()
    assert state.sprt.decision == "H1"
    # no game starts after the decision: at most the two slots' games in flight then
    assert 10 < state.done < 300
    assert len(by_round(pdn_texts(tmp_path / "sprt.pdn"))) == state.done


def selfplay(out: Path, games: int, *where: str) -> None:
    assert cli_main(["selfplay", "--out", str(out), "--games", str(games), "--nodes", "300",
                     "--max-plies", "200", "--seed", "5", "--quiet", *where]) == 0


def assert_same_data(a: Path, b: Path, games: int) -> None:
    _, first = read_data(a)
    _, second = read_data(b)
    assert list(second["game_id"]) == list(range(games))  # every game once, in order
    assert first.keys() == second.keys()
    for name in first:
        assert np.array_equal(first[name], second[name]), name


@pytest.fixture(scope="module")
def selfplay_one_machine(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("selfplay") / "one"
    selfplay(out, 6, "--workers", "1")
    return out


def test_selfplay_on_the_cluster_writes_the_same_data_and_resumes(selfplay_one_machine,
                                                                 tmp_path):
    selfplay(tmp_path / "ray", 3, "--cluster", "local")
    selfplay(tmp_path / "ray", 6, "--cluster", "local")  # a rerun goes on after game 3
    assert_same_data(selfplay_one_machine, tmp_path / "ray", 6)


def test_selfplay_worker_killed_mid_game_loses_no_game(selfplay_one_machine, tmp_path, capsys):
    with Killer(b"ray::SelfPlaySlot.play") as killer:
        selfplay(tmp_path / "ray", 6, "--cluster", "local")
    assert killer.killed, "no game was running to be killed"
    assert "was lost during game" in capsys.readouterr().err
    assert_same_data(selfplay_one_machine, tmp_path / "ray", 6)


def test_cli_match_on_the_cluster(tmp_path, capsys):
    assert cli_main(["match", "--engine", "damka hash=8", "--engine", "damka name=b hash=8",
                     "--depth", "2", "--games", "2", "--cluster", "local", "--concurrency", "1",
                     "--pdn", str(tmp_path / "m.pdn")]) == 0
    out = capsys.readouterr().out
    assert "on the Ray cluster local (1 game on each machine)" in out
    assert len(pdn_texts(tmp_path / "m.pdn")) == 2


def test_cluster_addresses_and_a_missing_extra(monkeypatch, capsys):
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # a remote ray:// needs it (test_cluster_connect)
    for good in ("auto", "local", "ray://head.lan:10001"):
        assert check_address(good) == good
    with pytest.raises(ClusterError, match="auto, local or ray://HOST:PORT"):
        check_address("head:6379")
    assert cli_main(["match", "--engine", "damka", "--engine", "damka", "--depth", "1",
                     "--cluster", "head:6379"]) == 2
    assert "--cluster takes auto, local or ray://HOST:PORT" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(ClusterError, match=r"pip install 'damka\[cluster\]'"):
        import_ray()
    assert cli_main(["selfplay", "--out", "x", "--games", "1", "--cluster", "local"]) == 2
    err = capsys.readouterr().err
    assert "damka[cluster]" in err and "Traceback" not in err


class _PidSlot:
    """A slot that answers with its process id after a short wait; item -1 ends its process."""

    def check(self):
        return worker_info()

    def play(self, item: int) -> int:
        if item == -1:
            os._exit(1)
        time.sleep(0.2)
        return os.getpid()

    def close(self) -> None:
        pass


class _MeetingSlot(_PidSlot):
    """A slot whose first unit waits (up to a minute) until ``slots`` slots have begun one,
    each leaving its process id in ``directory``: whether every slot gets work then depends on
    the farm handing work to each slot that starts, not on how fast Ray starts them on a
    loaded machine."""

    def __init__(self, directory: str, slots: int):
        self.directory, self.slots = Path(directory), slots

    def play(self, item: int) -> int:
        (self.directory / str(os.getpid())).touch()
        deadline = time.monotonic() + 60
        while len(list(self.directory.iterdir())) < self.slots and time.monotonic() < deadline:
            time.sleep(0.02)
        return os.getpid()


@pytest.mark.parametrize("per_node, cores, slots", [(None, 1, 2), (1, 1, 1), (3, 1, 3),
                                                     (None, 2, 1)])
def test_slots_per_machine(per_node, cores, slots, tmp_path):
    """One slot per core by default (the module's Ray has two) or per ``cores`` (engines on
    several threads), else ``per_node``; each slot gets work."""
    farm = Farm(ray, _MeetingSlot, (str(tmp_path), slots), per_node=per_node,
                cores_per_slot=cores)
    results = dict(pair for finished in farm.results(range(9), key=lambda item: item)
                   for pair in finished)
    assert sorted(results) == list(range(9))
    assert len(set(results.values())) == len(farm.workers) == slots


class _BrokenSlot(_PidSlot):
    """A slot whose worker cannot start it, saying why at length (as an import error does)."""

    def __init__(self):
        raise ImportError("cannot start here: " + "the reason in full, " * 20 + "the end")


def test_a_worker_that_cannot_start_says_why_in_full():
    warnings: list[str] = []
    farm = Farm(ray, _BrokenSlot, (), per_node=2, warn=warnings.append)
    with pytest.raises(ClusterError) as error:
        list(farm.results(range(3), key=lambda item: item))
    message = str(error.value)
    said = "ImportError: cannot start here: " + "the reason in full, " * 20 + "the end"
    assert message.startswith("no worker of the cluster can play: a worker on ")
    assert said in message and "raised in" in message and "no CPUs" not in message
    assert len(warnings) == 1 and said in warnings[0]  # once a machine, not once a slot


def test_a_unit_that_ends_every_worker_is_an_error():
    warnings: list[str] = []
    farm = Farm(ray, _PidSlot, (), per_node=1, warn=warnings.append,
                describe=lambda item: f"unit {item}")
    with pytest.raises(ClusterError, match=f"unit -1 ended its worker {MAX_ATTEMPTS} times"):
        list(farm.results([0, -1, 1], key=lambda item: item))
    assert farm.replayed == MAX_ATTEMPTS - 1
    assert sum("was lost during unit -1" in w for w in warnings) == MAX_ATTEMPTS - 1


def test_dxp_engines_stay_off_the_cluster(tmp_path):
    config = match_config(tmp_path / "m.pdn", "local")
    config.engines = [config.engines[0], parse_engine("dxp=127.0.0.1:27531")]
    with pytest.raises(MatchError, match="cannot play on a cluster"):
        Match(config)
