"""The soak's report (bench/soak.py): a dict for report.json and the markdown tables for
report.md and the console."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from engine import BACKEND, __version__
from protocol.match.timecontrol import DEFAULT_GRACE
from soak_watch import KINDS, MB, Lateness, Soak


@dataclass
class PhaseResult:
    name: str
    games: int = 0
    expected: int = 0
    overheads: list[float] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _ms(xs: list[float]) -> dict | None:
    if not xs:
        return None
    ys = sorted(x * 1000 for x in xs)
    return {"moves": len(ys), "mean": statistics.fmean(ys), "median": statistics.median(ys),
            "p99": ys[min(len(ys) - 1, int(0.99 * len(ys)))], "max": ys[-1]}


def build_report(args, soak: Soak, phases: list[PhaseResult], load: tuple, wall: float) -> dict:
    counts = {p.name: {k: 0 for k in KINDS} for p in phases}
    for fault in soak.faults:
        counts.setdefault(fault.phase, {k: 0 for k in KINDS})[fault.kind] += 1
    totals = {k: sum(c[k] for c in counts.values()) for k in KINDS}
    processes = [w.row() for w in soak.watched]
    growths = [w.growth for w in soak.watched if w.growth is not None]
    memory_ok = all(g < args.max_growth * MB for g in growths)
    return {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "damka": __version__, "backend": BACKEND, "damka_command": args.damka,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_start": load[0], "load_end": load[1], "wall_seconds": round(wall, 1),
        "movetime": args.movetime, "grace": DEFAULT_GRACE, "concurrency": args.concurrency,
        "phases": [{"name": p.name, "games": p.games, "expected": p.expected,
                    "seconds": round(p.seconds, 1), "faults": counts.get(p.name),
                    "runner_overhead_ms": _ms(p.overheads),
                    "move_time_ms": _ms(p.move_times)} for p in phases],
        "faults_total": totals,
        "faults": [{"phase": f.phase, "kind": f.kind, "text": f.text} for f in soak.faults],
        "notes": list(soak.notes),
        "runner_overhead_ms": _ms([x for p in phases for x in p.overheads]),
        "thread_lateness_ms": soak.lateness.summary(),
        "processes": processes,
        "max_growth_mb": args.max_growth,
        "targets": {"no_faults": not any(totals.values()),
                    "all_games": all(p.games == p.expected for p in phases),
                    "memory": memory_ok},
    }


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def markdown(report: dict) -> str:
    """The summary tables (printed at the end and written as report.md)."""
    lines = [f"# damka soak, {report['date']}", "",
             f"`{report['command']}`", "",
             f"damka {report['damka']} ({report['backend']}), {report['movetime']:g} s a move "
             f"(grace {report['grace']:g} s), concurrency {report['concurrency']}, "
             f"{report['cpus']} CPUs, load {report['load_start']:.2f} at the start and "
             f"{report['load_end']:.2f} at the end, {report['wall_seconds']:.0f} s", "",
             ]
    late = report.get("thread_lateness_ms")
    if late:
        lines += [f"How busy the machine was: the soak's own {1000 * Lateness.PERIOD:.0f} ms "
                  f"sleeps woke up late by a median {late['median']:.1f} ms, 99% "
                  f"{late['p99']:.1f} ms, max {late['max']:.0f} ms "
                  f"({100 * late['over_50ms']:.2f}% over 50 ms). On a busy machine engines answer "
                  "late for the same reason: time forfeits then say more about the machine "
                  "than about damka.", ""]
    lines += ["| phase | games | protocol errors | crashes | time forfeits | illegal moves |",
             "|---|---:|---:|---:|---:|---:|"]
    for p in report["phases"]:
        f = p["faults"] or {k: 0 for k in KINDS}
        lines.append(f"| {p['name']} | {p['games']}/{p['expected']} | "
                     + " | ".join(str(f[k]) for k in KINDS) + " |")
    t = report["faults_total"]
    lines += [f"| **total** | {sum(p['games'] for p in report['phases'])} | "
              + " | ".join(f"**{t[k]}**" for k in KINDS) + " |", "",
              "| runner overhead per move (ms) | moves | mean | median | 99% | max |",
              "|---|---:|---:|---:|---:|---:|"]
    for p in report["phases"]:
        o = p["runner_overhead_ms"]
        if o:
            lines.append(f"| {p['name']} | {o['moves']} | {o['mean']:.3f} | {o['median']:.3f} "
                         f"| {o['p99']:.3f} | {o['max']:.3f} |")
    for p in report["phases"]:
        m = p["move_time_ms"]
        if m:
            lines += ["", f"Move times at the DXP referee ({p['name']}): mean {m['mean']:.1f} ms, "
                      f"99% {m['p99']:.1f} ms, max {m['max']:.1f} ms over {m['moves']} moves "
                      "(message to answer, both sides)."]
    lines += ["", "| process | games | RSS at launch (MB) | warm | end | peak | growth (end - warm) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in report["processes"]:
        lines.append(f"| {r['process']} (pid {r['pid']}) | {r['games']} | {_fmt(r['launch_mb'])} "
                     f"| {_fmt(r['warm_mb'])} | {_fmt(r['end_mb'])} | {_fmt(r['peak_mb'])} "
                     f"| {_fmt(r['growth_mb'])} |")
    targets = report["targets"]
    verdict = "all targets met" if all(targets.values()) else "TARGET MISSED: " + ", ".join(
        {"no_faults": "faults (target 0 of each)", "all_games": "games missing",
         "memory": f"memory growth (target under {report['max_growth_mb']:g} MB "
                   "from warm to end, every process)"}[k]
        for k, ok in targets.items() if not ok)
    unmeasured = sum(1 for r in report["processes"] if r["growth_mb"] is None)
    lines += ["", "Warm: after a process's first games (its hash tables allocated and cleared; "
              "two games, or two for each of the follower's sessions)."
              + (f" {unmeasured} process{'es' if unmeasured != 1 else ''} played too few games "
                 "to measure a growth." if unmeasured else ""), "", f"**{verdict}**"]
    if report.get("notes"):
        lines += [""] + [f"- {note}" for note in report["notes"]]
    if report["faults"]:
        lines += ["", "Faults:", ""] + [f"- {f['phase']}: {f['kind']}: {f['text']}"
                                        for f in report["faults"][:50]]
    return "\n".join(lines) + "\n"
