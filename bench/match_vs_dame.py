"""Strength target of issue 6: damka against dame-rs's Hub engine in international draughts.

    python bench/match_vs_dame.py [--games 200] [--movetime 0.1] [--concurrency 2]
                                  [--pdn FILE] [--resume] [--damka hub|inprocess]

Plays damka (by default over Hub, ``damka hub``, like any other engine) against ``dame hub``
at a fixed time per move from the varied openings of bench/openings_international.txt (each
opening twice, colours reversed), and prints the final table of ``damka match``. The target:
at least 60% for damka over at least 200 games at 0.1 s per move. About 25 minutes at the
defaults on a 2-core machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol.match.runner import Match, MatchConfig  # noqa: E402
from protocol.match.report import Progress, final_table  # noqa: E402
from protocol.match.openings import read_openings  # noqa: E402
from protocol.match.timecontrol import TimeControl  # noqa: E402
from protocol.match.engines import parse_engine  # noqa: E402

OPENINGS = ROOT / "bench" / "openings_international.txt"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--movetime", type=float, default=0.1)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--grace", type=float, default=0.1)
    p.add_argument("--pdn", default=None, help="PDN file (default: none)")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--damka", choices=("hub", "inprocess"), default="hub")
    args = p.parse_args()

    damka = str(Path(sys.executable).with_name("damka"))
    if not Path(damka).exists():
        damka = shutil.which("damka") or "damka"
    dame = shutil.which("dame")
    if dame is None:
        print("dame-rs is not installed: pip install dame-rs==0.2.0", file=sys.stderr)
        return 2
    ours = "damka" if args.damka == "inprocess" else f"cmd='{damka} hub' name=damka"
    config = MatchConfig(
        engines=[parse_engine(ours), parse_engine(f"cmd='{dame} hub' name=dame")],
        control=TimeControl(movetime=args.movetime),
        openings=read_openings(OPENINGS, "international"),
        variant="international",
        games_per_pair=args.games,
        concurrency=args.concurrency,
        pdn=args.pdn,
        resume=args.resume,
        grace=args.grace,
        event="damka vs dame-rs",
    )
    match = Match(config, on_progress=Progress(sys.stderr))
    start = time.monotonic()
    state = match.run()
    title = (f"damka vs dame 0.2.0: international, {config.control}, {len(match.schedule)} games, "
             f"concurrency {config.concurrency}, grace {config.grace:g} s, "
             f"{time.monotonic() - start:.0f} s")
    print(final_table(state, title), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
