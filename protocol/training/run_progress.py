"""The progress of a long run (``damka selfplay``, ``damka rescore``, ``damka spsa``): a tqdm
bar on a terminal, and off one (a long run's log) a plain line every ``every`` seconds
instead."""

from __future__ import annotations

import sys
import time

from protocol.progress import on_terminal, terminal_bar

__all__ = ["RunProgress", "GameProgress"]


class RunProgress:
    """A tqdm bar of ``unit``s on a terminal; off one (a long run's log), a plain line every
    ``every`` seconds instead. ``initial`` units were done before the run."""

    def __init__(self, command: str, label: str, total: int, initial: int, quiet: bool,
                 every: float, unit: str):
        self.command, self.total, self.initial, self.unit = command, total, initial, unit
        self.bar = terminal_bar(total, f"{command} {label}", unit=unit, quiet=quiet,
                                initial=initial)
        self.every = None if quiet or on_terminal() else every
        self.started = self.logged = time.perf_counter()

    def show(self, done: int, postfix: str, line: str) -> None:
        """``done`` units in all; ``postfix`` beside the bar, or (off a terminal, when a line
        is due) "command: done/total units, ``line``, seconds"."""
        now = time.perf_counter()
        self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.update(done - self.bar.n)
        if self.every is not None and now - self.logged >= self.every:
            self.logged = now
            print(f"{self.command}: {done}/{self.total} {self.unit}s, {line}, "
                  f"{now - self.started:.0f} s", file=sys.stderr, flush=True)

    def rate(self, done_this_run: float) -> float:
        """Per second since the run started."""
        return done_this_run / max(time.perf_counter() - self.started, 1e-9)

    def close(self) -> None:
        self.bar.close()

    def report(self, line: str, interrupted: bool) -> int:
        """Print the run's summary ``line`` (and, when it was interrupted, how to go on);
        the exit status: 0, or 130 when interrupted."""
        print(f"{self.command}: {line}")
        if interrupted:
            print(f"{self.command}: interrupted; rerun the same command to go on",
                  file=sys.stderr)
            return 130
        return 0


class GameProgress(RunProgress):
    """Call with (games covered this run, positions this run) as the run goes; ``close`` at
    the end. ``initial`` games were covered before the run."""

    def __init__(self, command: str, label: str, total: int, initial: int, quiet: bool,
                 every: float):
        super().__init__(command, label, total, initial, quiet, every, "game")

    def __call__(self, games: int, positions: int) -> None:
        rate = self.rate(positions)
        shown = f"{rate:.0f}" if rate >= 100 else f"{rate:.1f}"
        self.show(self.initial + games, f"{positions} positions, {shown} pos/s",
                  f"{positions} positions this run, {shown} positions/s")
