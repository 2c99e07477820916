"""Progress bars for the commands that run longer than a few seconds (perft, the endgame
databases, self-play, tuning; the match runner adds its running score to one): one library,
tqdm, draws them all, and only on a terminal, so that a log or a pipe gets the commands' own
result lines and nothing in between."""

from __future__ import annotations

import sys
from typing import IO, Any


def on_terminal(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (stderr by default) is a terminal a bar can be redrawn on."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_bar(total: float | None, desc: str, unit: str = "it", *, quiet: bool = False,
                 stream: IO[str] | None = None, **options: Any):
    """A tqdm bar on ``stream`` (stderr by default), drawn only when that is a terminal and
    not ``quiet``; a bar that is not drawn still takes every call. ``options`` go to tqdm
    (``leave=False`` clears the line when the bar is closed)."""
    from tqdm import tqdm  # (loaded by the commands that draw one, not by damka --help)

    stream = sys.stderr if stream is None else stream
    return tqdm(total=total, desc=desc, unit=unit, file=stream, dynamic_ncols=True,
                disable=quiet or not on_terminal(stream), **options)


def advance(bar, done: float, total: float) -> None:
    """Move ``bar`` to ``done`` of ``total`` (the callbacks of perft and the databases report
    counts so far, not steps, and learn the total only as they go)."""
    if bar.total != total:
        bar.total = total
    bar.update(done - bar.n)
