"""The progress of a long run over games (``damka selfplay``, ``damka rescore``): a tqdm bar on
a terminal, and off one (a long run's log) a plain line every ``every`` seconds instead."""

from __future__ import annotations

import sys
import time

from protocol.progress import on_terminal, terminal_bar

__all__ = ["GameProgress"]


class GameProgress:
    """Call with (games covered this run, positions this run) as the run goes; ``close`` at
    the end. ``initial`` games were covered before the run."""

    def __init__(self, command: str, label: str, total: int, initial: int, quiet: bool,
                 every: float):
        self.command, self.total, self.initial = command, total, initial
        self.bar = terminal_bar(total, f"{command} {label}", unit="game", quiet=quiet,
                                initial=initial)
        self.every = None if quiet or on_terminal() else every
        self.started = self.logged = time.perf_counter()

    def __call__(self, games: int, positions: int) -> None:
        now = time.perf_counter()
        rate = positions / max(now - self.started, 1e-9)
        shown = f"{rate:.0f}" if rate >= 100 else f"{rate:.1f}"
        self.bar.set_postfix_str(f"{positions} positions, {shown} pos/s", refresh=False)
        self.bar.update(self.initial + games - self.bar.n)
        if self.every is not None and now - self.logged >= self.every:
            self.logged = now
            print(f"{self.command}: {self.initial + games}/{self.total} games, {positions} "
                  f"positions this run, {shown} positions/s, {now - self.started:.0f} s",
                  file=sys.stderr, flush=True)

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
