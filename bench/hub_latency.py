"""Hub start-up and responsiveness: launch to ``ready``, and ``ping`` during a search.

    python bench/hub_latency.py [runs]

Targets (issue 4): launch to ready under 150 ms as a whole process; ping answered within
10 ms while searching.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hub_process import HubProcess  # noqa: E402

DAMKA = str(Path(sys.executable).with_name("damka"))


def launch_to_ready(command) -> float:
    start = time.monotonic()
    hub = HubProcess(command)
    hub.send("hub")
    hub.expect("wait")
    hub.send("init")
    stamp, line = hub.recv_timed()
    while line != "ready":
        stamp, line = hub.recv_timed()
    hub.close()
    return stamp - start


def ping_latencies(count: int) -> list[float]:
    hub = HubProcess([DAMKA, "hub"])
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


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for label, command in (("damka hub", [DAMKA, "hub"]),
                           ("python -m protocol hub", [sys.executable, "-m", "protocol", "hub"])):
        times = [launch_to_ready(command) for _ in range(runs)]
        print(f"launch to ready ({label}): median {statistics.median(times) * 1000:.0f} ms, "
              f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {runs} runs")
    pings = ping_latencies(runs * 2)
    print(f"ping during a search: median {statistics.median(pings) * 1000:.2f} ms, "
          f"max {max(pings) * 1000:.2f} ms over {len(pings)} pings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
