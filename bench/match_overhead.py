"""The match runner's own time per move: from an engine's answer to the next request.

    python bench/match_overhead.py [games]

Two matches of damka against itself at depth 2 (quick moves, so that many are measured): in
process, and over Hub (``damka hub``, where the request is the ``go`` line, so building and
sending ``pos`` and ``level`` counts as the runner's). What is measured per move: legality
check and push of the answer, the draw rules, the clocks, the PDN comment, and the next
request. Target (issue 6): under 5 ms per move.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol.match.runner import Match, MatchConfig  # noqa: E402
from protocol.match.openings import read_openings  # noqa: E402
from protocol.match.timecontrol import TimeControl  # noqa: E402
from protocol.match.engines import parse_engine  # noqa: E402

DAMKA = str(Path(sys.executable).with_name("damka"))


def measure(engines: list[str], games: int) -> dict:
    openings = read_openings(ROOT / "bench" / "openings_international.txt", "international")
    with tempfile.TemporaryDirectory() as tmp:
        config = MatchConfig(engines=[parse_engine(e) for e in engines],
                             control=TimeControl(depth=2), openings=openings,
                             games_per_pair=games, pdn=Path(tmp) / "overhead.pdn")
        state = Match(config).run()
    summary = state.overhead_summary()
    assert summary is not None
    return summary


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for label, engines in (
        ("in-process", ["damka hash=16", "damka hash=16"]),
        ("hub", [f"cmd='{DAMKA} hub' param.hash-mb=16"] * 2),
    ):
        s = measure(engines, games)
        print(f"{label:<11} {int(s['moves']):>6} moves  mean {1000 * s['mean']:.3f} ms  "
              f"median {1000 * s['median']:.3f} ms  99% {1000 * s['p99']:.3f} ms  "
              f"max {1000 * s['max']:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
