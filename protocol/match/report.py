"""What ``damka match`` prints: progress on stderr and the final table.

On a terminal the progress is a tqdm bar with the running score beside it; elsewhere (a log
file) it is one plain line per finished game, which a log keeps whole.
"""

from __future__ import annotations

import collections
import math
import sys
import threading
from typing import TextIO

from tqdm import tqdm

from protocol.match.runner import MatchState
from protocol.match.stats import Record

__all__ = ["Progress", "format_elo", "final_table", "progress_line", "score_text"]

BAR = 20


def format_elo(elo: float) -> str:
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{elo + 0.0:+.1f}" if round(elo, 1) else "0.0"


def _record_text(record: Record) -> str:
    return f"+{record.wins} ={record.draws} -{record.losses}"


def progress_line(state: MatchState) -> str:
    """``[####----]  42/200  damka - dame +20 =15 -7 65.5% Elo +112 (2 running)``."""
    total = max(state.total, 1)
    filled = BAR * state.done // total
    return "  ".join([f"[{'#' * filled}{'-' * (BAR - filled)}]", f"{state.done}/{state.total}",
                      score_text(state)])


def score_text(state: MatchState) -> str:
    """The running score: ``damka - dame +20 =15 -7  65.5% Elo +112  (2 running)``."""
    parts = []
    if len(state.names) == 2:
        record = state.pair_record(0, 1)
        parts.append(f"{state.names[0]} - {state.names[1]} {_record_text(record)}")
    else:
        records = [state.engine_record(i) for i in range(len(state.names))]
        best = max(range(len(records)), key=lambda i: (records[i].score, records[i].games))
        record = records[best]
        parts.append(f"leader {state.names[best]} {_record_text(record)}")
    if record.games:
        parts.append(f"{100 * record.score:.1f}% Elo {format_elo(record.elo)}")
    if state.sprt is not None:
        parts.append(f"LLR {state.sprt.llr:+.2f} [{state.sprt.lower:.2f}, {state.sprt.upper:.2f}]")
    if state.running:
        parts.append(f"({state.running} running)")
    if state.replayed:
        parts.append(f"({state.replayed} replayed after a lost worker)")
    not_started = len(state.not_started())
    if not_started:
        parts.append(f"({not_started} not started: engine not reached)")
    return "  ".join(parts)


class Progress:
    """The progress callback of a Match: a tqdm bar on a terminal (``inplace``), otherwise
    ``progress_line`` once per finished game."""

    def __init__(self, stream: TextIO | None = None, inplace: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.inplace = self.stream.isatty() if inplace is None else inplace
        self._bar: tqdm | None = None
        self._lock = threading.Lock()

    def __call__(self, state: MatchState) -> None:
        with self._lock:
            if not self.inplace:
                self.stream.write(progress_line(state) + "\n")
                self.stream.flush()
                return
            if self._bar is None:
                self._bar = tqdm(total=state.total, unit="game", file=self.stream,
                                 dynamic_ncols=True, mininterval=0)
            self._bar.total = state.total  # an SPRT that decides ends the match early
            self._bar.n = state.done
            self._bar.set_postfix_str(score_text(state), refresh=False)
            self._bar.refresh()

    def note(self, text: str) -> None:
        """A message on its own line (a lost cluster worker), the bar drawn again after it."""
        with self._lock:
            if self._bar is not None:
                self._bar.write(text, file=self.stream)
            else:
                self.stream.write(text + "\n")
                self.stream.flush()

    def finish(self) -> None:
        """Close the bar so that what follows starts on its own line."""
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None


def _row(rank: str, name: str, record: Record, width: int) -> str:
    low, high = record.elo_interval()
    if record.games:
        score = f"{100 * record.score:5.1f}%"
        elo = format_elo(record.elo)
        interval = f"[{format_elo(low)}, {format_elo(high)}]"
        los = f"{100 * record.los:5.1f}%"
    else:
        score = elo = interval = los = "-"
    return (f"{rank:>2}  {name:<{width}} {record.games:>6} {record.wins:>6} {record.draws:>6} "
            f"{record.losses:>6} {score:>7} {elo:>7}  {interval:<18} {los:>6}")


def _not_started_lines(state: MatchState) -> list[str]:
    """How many attempts did not start and why, and the games given up: none is a result."""
    reasons = state.not_started()
    if not reasons:
        return []
    replayed = sum(1 for r in state.records if r.not_started and not r.resumed)
    why = collections.Counter(reasons)
    lines = [f"not started (an engine not reached, not counted): {len(reasons)} attempt"
             f"{'s' if len(reasons) != 1 else ''}; {replayed} game{'s' if replayed != 1 else ''} "
             "played at a later attempt"]
    lines += [f"  {n} x {reason}" for reason, n in why.most_common()]
    for given_up in state.not_played:
        lines.append(f"not played: game {given_up.scheduled.round}, {given_up.message()}")
    return lines


def final_table(state: MatchState, title: str = "") -> str:
    """Wins, draws, losses, score, Elo with its 95% interval and LOS for every engine (against
    the rest of the field), then every pairing when there are more than two engines, then the
    SPRT, how the games ended and the runner's own time per move."""
    names = state.names
    width = max(8, max(len(n) for n in names), *(len(f"{a} - {b}") for a in names for b in names))
    header = (f"{'#':>2}  {'engine':<{width}} {'games':>6} {'wins':>6} {'draws':>6} "
              f"{'losses':>6} {'score':>7} {'Elo':>7}  {'95% interval':<18} {'LOS':>6}")
    lines = [title] if title else []
    lines += [header, "-" * len(header)]
    records = [(state.engine_record(i), i) for i in range(len(names))]
    order = sorted(records, key=lambda ri: -ri[0].score if ri[0].games else 0)
    for rank, (record, i) in enumerate(order, start=1):
        lines.append(_row(str(rank), names[i], record, width))
    if len(names) > 2:
        lines += ["", "pairings (the first engine's results):"]
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                lines.append(_row("", f"{names[a]} - {names[b]}", state.pair_record(a, b), width))
    if state.sprt is not None:
        s = state.sprt
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "undecided"}[s.decision]
        lines += ["", f"SPRT: LLR {s.llr:+.3f}  bounds [{s.lower:.3f}, {s.upper:.3f}]  {verdict}"]
    endings = collections.Counter(
        (r.termination.value if r.termination is not None else "unknown") for r in state.records)
    if endings:
        lines += ["", "endings: " + ", ".join(f"{k} {v}" for k, v in endings.most_common())]
    overhead = state.overhead_summary()
    if overhead is not None:
        lines.append(
            f"runner overhead per move: mean {1000 * overhead['mean']:.2f} ms, median "
            f"{1000 * overhead['median']:.2f} ms, 99% {1000 * overhead['p99']:.2f} ms, max "
            f"{1000 * overhead['max']:.2f} ms over {int(overhead['moves'])} moves")
    lines += _not_started_lines(state)
    if state.interrupted:
        lines.append(f"interrupted after {state.done} of {state.total} games")
    elif state.done < state.total:
        lines.append(f"stopped after {state.done} of {state.total} games")
    return "\n".join(lines)
