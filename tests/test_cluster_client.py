"""``--cluster ray://HOST:PORT``: a match through Ray's client on a cluster of two nodes that
``ray start`` runs on this machine (a head and a worker node, one CPU each, on 127.0.0.1), as
a user runs one on a LAN. Its games equal those of the same match on one machine.

The cluster uses token authentication (Ray 2.52 and later): every node and the client get the
same token through RAY_AUTH_MODE=token and RAY_AUTH_TOKEN (docs: the README's Cluster
section). The nodes are started with ``--block`` in their own process groups, so that the test
stops exactly them (``ray stop`` would stop every Ray on the machine).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.pdn import read_games, write_game

pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")

REPO = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))
DAMKA = str(Path(sys.executable).with_name("damka"))
#: Ray's default range for its worker processes' ports, which our chosen ports must avoid
WORKER_PORTS = range(10002, 20000)


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in WORKER_PORTS:
            return port


#: the cluster's token, handed to every node and to the client
TOKEN = secrets.token_hex(32)


def _env() -> dict[str, str]:
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_USAGE_STATS_ENABLED="0",
               RAY_AUTH_TOKEN=TOKEN)
    env.pop("RAY_ADDRESS", None)
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", *args],
                            env=_env(), stdout=log.open("w"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    """The node and every process it started (its process group), at once: Ray's own
    shutdown on SIGTERM takes half a minute."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """A head and a worker node on 127.0.0.1; yields the ray:// address of the head."""
    logs = tmp_path_factory.mktemp("ray-nodes")
    gcs, client = _free_port(), _free_port()
    head = _start(["--head", "--node-ip-address=127.0.0.1", f"--port={gcs}",
                   f"--ray-client-server-port={client}", "--num-cpus=1",
                   "--include-dashboard=false"], logs / "head.log")
    nodes = [head]
    try:
        _wait_for_port(client, head, logs / "head.log")
        nodes.append(_start([f"--address=127.0.0.1:{gcs}", "--node-ip-address=127.0.0.1",
                             "--num-cpus=1"], logs / "worker.log"))
        _wait_for_nodes(f"127.0.0.1:{gcs}", 2, logs)
        yield f"ray://127.0.0.1:{client}"
    finally:
        for process in reversed(nodes):
            _stop(process)


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"ray start ended: {log.read_text()[-2000:]}"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"no Ray client server on port {port} after {timeout} s")


def _wait_for_nodes(gcs: str, count: int, logs: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = subprocess.run([RAY, "status", f"--address={gcs}"], env=_env(),
                                capture_output=True, text=True, timeout=30)
        if status.stdout.count("node_") >= count:
            return
        time.sleep(0.5)
    raise AssertionError(f"the cluster has not {count} nodes: {status.stdout}{status.stderr}\n"
                         + (logs / "worker.log").read_text()[-2000:])


def _match(pdn: Path, *where: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DAMKA, "match", "--engine", "damka hash=8", "--engine", "damka name=b hash=8",
         "--depth", "3", "--games", "6", "--openings",
         str(REPO / "bench" / "openings_international.txt"), "--no-comments", "--pdn", str(pdn),
         *where], env=_env(), capture_output=True, text=True, timeout=300, cwd=pdn.parent)


def _games(pdn: Path) -> dict[str, str]:
    out = {}
    for game in read_games(pdn):
        text = write_game(game)
        out[text.split('[Round "', 1)[1].split('"', 1)[0]] = text
    return out


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_a_match_through_the_ray_client_on_two_nodes_plays_the_same_games(two_nodes, tmp_path):
    cluster = _match(tmp_path / "cluster.pdn", "--cluster", two_nodes)
    assert cluster.returncode == 0, cluster.stdout + cluster.stderr
    assert f"on the Ray cluster {two_nodes}" in cluster.stdout
    local = _match(tmp_path / "local.pdn", "--concurrency", "1")
    assert local.returncode == 0, local.stdout + local.stderr
    games = _games(tmp_path / "cluster.pdn")
    assert len(games) == 6 and games == _games(tmp_path / "local.pdn")

