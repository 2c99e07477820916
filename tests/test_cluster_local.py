"""``--cluster local`` as a user starts it, each in a fresh process: from a directory that
looks like a source checkout whose ``engine/`` cannot be imported (Ray puts the driver's
directory first on its workers' sys.path; a checkout's engine/ is uncompiled), the workers
import the installed damka and the match is played; and every process of the local Ray,
the driver included, listens on loopback addresses only.

Listening sockets are read from /proc (net/tcp, net/tcp6 and each process's fds), for the
processes of the driver's tree: Ray's GCS, raylet, agents and workers are its descendants.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.pdn import read_games

pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")

DAMKA = str(Path(sys.executable).with_name("damka"))
FAKE = 'raise ImportError("fake checkout: this is not the installed damka")\n'

#: run in the fake checkout with -I, so that the driver itself imports the installed damka
#: (as the ``damka`` script does), while Ray gives its workers the driver's directory
PROBE = """
import json, os, sys
from protocol.cluster.connect import connected
from protocol.cluster.farm import prepare_worker

class Probe:
    def __init__(self):
        prepare_worker()

    def where(self):
        import engine
        return {"cwd": os.getcwd(), "engine": engine.__file__, "path": sys.path}

with connected("local", num_cpus=1) as ray:
    probe = ray.remote(Probe).remote()
    print(json.dumps(ray.get(probe.where.remote())), flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A directory with ``engine/`` and ``protocol/`` packages that refuse to be imported."""
    root = tmp_path / "checkout"
    for package in ("engine", "protocol"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text(FAKE)
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    return env


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_a_match_on_a_local_cluster_run_in_a_source_checkout_plays(checkout):
    run = subprocess.run([DAMKA, "match", "--engine", "damka name=a hash=8", "--engine",
                          "damka name=b hash=8", "--depth", "2", "--games", "2", "--cluster",
                          "local", "--concurrency", "1", "--no-comments", "--pdn", "m.pdn"],
                         cwd=checkout, env=_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fake checkout" not in run.stderr and "no CPUs" not in run.stderr
    assert len(list(read_games(checkout / "m.pdn"))) == 2  # a relative --pdn, in the checkout


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_a_local_ray_listens_on_loopback_only(checkout, tmp_path):
    err = tmp_path / "probe.err"
    with err.open("w") as stderr:
        probe = subprocess.Popen([sys.executable, "-I", "-c", PROBE], cwd=checkout, env=_env(),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                 text=True)
        try:
            line = probe.stdout.readline()
            assert line, err.read_text()[-3000:]
            where = json.loads(line)
            listening = _listening(_tree(probe.pid))
        finally:
            probe.stdin.close()
            probe.wait(timeout=120)
    # the workers imported the installed damka, then went back to the coordinator's directory
    assert not where["engine"].startswith(str(checkout)), where
    assert str(checkout) not in where["path"]
    assert where["cwd"] == str(checkout)
    names = {name for name, _ in listening}
    assert {"gcs_server", "raylet"} <= names and len(listening) >= 4, listening
    exposed = [(name, address) for name, address in listening
               if not ipaddress.ip_address(address).is_loopback]
    assert not exposed, f"listening beyond loopback: {exposed}"


def _tree(root: int) -> dict[int, str]:
    """``root`` and its descendants now: pid -> process name."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        parents[int(entry.name)] = int(rest.split()[1])
        names[int(entry.name)] = name
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        grew = bool(more)
        tree |= more
    return {pid: names.get(pid, "?") for pid in tree}


def _listening(processes: dict[int, str]) -> list[tuple[str, str]]:
    """(process name, address) of every TCP socket in LISTEN held by ``processes``."""
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp to read listening sockets from")
    addresses: dict[str, str] = {}  # socket inode -> local address
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] != "0A":  # LISTEN
                continue
            raw = bytes.fromhex(fields[1].split(":")[0])
            # the kernel writes the address as 32-bit words in host (little-endian) order
            packed = b"".join(raw[i:i + 4][::-1] for i in range(0, width, 4))
            address = ipaddress.ip_address(packed)
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
                address = address.ipv4_mapped
            addresses[fields[9]] = str(address)
    found = []
    for pid, name in processes.items():
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in addresses:
                found.append((name, addresses[target[8:-1]]))
    return found
