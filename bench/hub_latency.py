"""Hub start-up and responsiveness: launch to ``ready``, and ``ping`` during a search.

    python bench/hub_latency.py                  # builds a normal install first (a few minutes)
    python bench/hub_latency.py --keep DIR       # ... and keeps that install in DIR
    python bench/hub_latency.py --damka PATH     # measures an installed damka instead

Launch to ready is timed as a GUI sees it: from starting the ``damka hub`` process to its
``ready`` line after ``hub`` ... ``wait``, ``init``. It is measured on a normal install, as a
user has it (``pip install .`` into a fresh virtual environment: no editable-install import
hooks, compiled extension in site-packages), and, for comparison, on this checkout's own
``damka`` (usually an editable install). Target (issue 12): under 100 ms on a quiet
machine; the load is printed next to the figures, and so is the engine's CPU time to
``ready``, which a busy machine hardly changes. Ping: answered within 10 ms while
searching (issue 4). Last, the nodes of three 0.1 s searches, the first sent straight after
``ready``: it should reach about what the others do (the hash table's pages come in on their
own thread meanwhile).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import psutil  # noqa: E402  (the bench extra)
from hub_process import HubProcess  # noqa: E402

TARGET_MS = 100.0
THIS_DAMKA = str(Path(sys.executable).with_name("damka"))


def install(into: Path) -> str:
    """A fresh virtual environment with damka installed from this checkout the way a user
    installs it (``pip install .``, not editable); returns its ``damka``."""
    subprocess.run([sys.executable, "-m", "venv", str(into)], check=True)
    pip = into / "bin" / "pip"
    started = time.monotonic()
    print(f"installing damka from {ROOT} into {into} (pip install ., not editable) ...",
          file=sys.stderr, flush=True)
    subprocess.run([str(pip), "install", "--quiet", str(ROOT)], check=True)
    print(f"installed in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return str(into / "bin" / "damka")


def launch_to_ready(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the engine process) from launch to ``ready``. The CPU
    time hardly depends on the load: on a busy machine it says what a quiet one would show."""
    start = time.monotonic()
    hub = HubProcess(command)
    hub.send("hub")
    hub.expect("wait")
    hub.send("init")
    stamp, line = hub.recv_timed()
    while line != "ready":
        stamp, line = hub.recv_timed()
    cpu = psutil.Process(hub.proc.pid).cpu_times()
    hub.close()
    return stamp - start, cpu.user + cpu.system


def ping_latencies(damka: str, count: int) -> list[float]:
    hub = HubProcess([damka, "hub"])
    hub.handshake()
    hub.send("pos start")
    hub.send("level infinite")
    hub.send("go analyze")
    hub.expect("info")
    out = []
    for _ in range(count):
        time.sleep(0.05)
        sent = time.monotonic()
        hub.send("ping")
        while True:
            stamp, line = hub.recv_timed()
            if line == "pong":
                out.append(stamp - sent)
                break
    hub.send("stop")
    hub.expect("done")
    hub.close()
    return out


def first_searches(damka: str, searches: int = 3, movetime: float = 0.1) -> list[int]:
    """Nodes of the first ``searches`` searches of ``movetime`` from the start, the first sent
    straight after ``ready`` (issue 12: the first search once ran at 30 k nodes/s)."""
    hub = HubProcess([damka, "hub"])
    hub.handshake()
    nodes = []
    for _ in range(searches):
        hub.send("new-game")
        hub.send("pos start")
        hub.send(f"level move-time={movetime:g}")
        hub.send("go think")
        last = 0
        while True:
            _, line = hub.recv_timed()
            if line.startswith("info"):
                for word in line.split():
                    if word.startswith("nodes="):
                        last = int(word[6:])
            elif line.startswith("done"):
                break
        nodes.append(last)
    hub.close()
    return nodes


def _summary(label: str, times: list[tuple[float, float]]) -> str:
    ms = sorted(t * 1000 for t, _ in times)
    cpu = statistics.median(c * 1000 for _, c in times)
    return (f"launch to ready, {label}: median {statistics.median(ms):.0f} ms, "
            f"min {ms[0]:.0f} ms, max {ms[-1]:.0f} ms over {len(ms)} runs; "
            f"CPU time to ready median {cpu:.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="launches per program (default 10)")
    parser.add_argument("--damka", metavar="PATH",
                        help="an installed damka to measure (default: install one first)")
    parser.add_argument("--keep", metavar="DIR", type=Path,
                        help="make the install in DIR (a new directory) and keep it, to measure "
                        "again later with --damka DIR/bin/damka")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.damka and not Path(args.damka).is_file():
        parser.error(f"no program {args.damka}")
    if args.keep is not None and (args.damka or args.keep.exists()):
        parser.error("--keep needs a new directory, and no --damka")
    with tempfile.TemporaryDirectory(prefix="damka-install-") as tmp:
        installed = args.damka or install(args.keep or Path(tmp) / "venv")
        programs = [("installed (" + installed + ")", installed)]
        if Path(THIS_DAMKA).is_file() and Path(THIS_DAMKA).resolve() != Path(installed).resolve():
            programs.append(("this checkout's venv", THIS_DAMKA))
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
        medians = {}
        for label, damka in programs:
            launch_to_ready([damka, "hub"])  # the first launch fills the OS file cache
            times = [launch_to_ready([damka, "hub"]) for _ in range(args.runs)]
            medians[label] = statistics.median(t for t, _ in times) * 1000
            print(_summary(label, times), flush=True)
        pings = ping_latencies(installed, args.runs * 2)
        print(f"ping during a search: median {statistics.median(pings) * 1000:.2f} ms, "
              f"max {max(pings) * 1000:.2f} ms over {len(pings)} pings")
        for _ in range(3):
            nodes = first_searches(installed)
            print("0.1 s searches from the start, the first straight after ready: "
                  + ", ".join(f"{n:,}" for n in nodes) + " nodes")
    first = medians[programs[0][0]]
    verdict = "target met" if first < TARGET_MS else "TARGET MISSED"
    print(f"{verdict}: installed launch to ready {first:.0f} ms (target under {TARGET_MS:.0f} ms"
          f"{'' if load[0] <= 1 else f'; load {load[0]:.2f}: re-measure on a quiet machine'})")
    return 0 if first < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
