"""Building the databases of one rule set: every slice up to N pieces, in dependency order.

Slices already on disk (and valid) are loaded instead of solved, so an interrupted build
resumes where it stopped. One pair is solved at a time, each pass of it split over
``workers`` threads (the solver releases the GIL), and written while the next one is solved.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .._core import compiled, core_rules
from ..variants import Variant
from .material import DEFAULT_WORKERS, MAX_PIECES, Material, pairs
from .paths import variant_dir
from .storage import SUFFIX, EgtbError, TableFile, write_table

_egtb = compiled("egtb")

@dataclass
class BuildProgress:
    """What a build has done so far (``examined`` counts every pass over every position)."""

    slices_done: int = 0
    slices_total: int = 0
    examined: int = 0
    entries: int = 0
    bytes_written: int = 0
    loaded: int = 0
    seconds: float = 0.0
    current: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Positions examined per second."""
        return self.examined / self.seconds if self.seconds > 0 else 0.0


def solver(variant: Variant):
    """A fresh C solver for a rule set (tables are registered on it)."""
    if not variant.forced_capture:
        raise EgtbError("endgame databases are built for the official rules (captures forced)")
    return _egtb.Solver(core_rules(variant))


def table_path(directory: Path, material: Material) -> Path:
    return directory / f"{material.name}{SUFFIX}"


def load_into(s, directory: Path, variant: Variant, material: Material) -> TableFile | None:
    """Register a slice's table from its file when the file exists (checked)."""
    path = table_path(directory, material)
    if not path.exists():
        return None
    f = TableFile(path, variant.name, material, s.slice_size(*material))
    s.add(tuple(material), f.table())
    return f


def build(variant: Variant, pieces: int, directory: "str | os.PathLike[str] | None" = None,
          workers: int = DEFAULT_WORKERS, on_progress: Callable[[BuildProgress], None] | None = None,
          interval: float = 0.5,
          only: Callable[[Material], bool] | None = None) -> BuildProgress:
    """Build (or finish building) every slice with up to ``pieces`` pieces; returns totals.

    ``only`` restricts the build to the slices it accepts; it must accept everything those
    depend on (kings-only endings, for example, need only kings-only endings).
    """
    if not 2 <= pieces <= MAX_PIECES:
        raise EgtbError(f"pieces must be between 2 and {MAX_PIECES}, not {pieces}")
    if workers < 1:
        raise EgtbError("workers must be at least 1")
    folder = variant_dir(directory, variant.name)
    folder.mkdir(parents=True, exist_ok=True)
    s = solver(variant)
    todo = [m for m in pairs(pieces) if only is None or only(m)]
    progress = BuildProgress(slices_total=len(todo))
    # a slot per worker, and the last entry asks the running jobs to stop
    # a slot per worker, and the last entry asks the running job to stop
    counters = np.zeros(workers + 1, dtype=np.uint64)
    start = time.perf_counter()
    base_examined = 0

    def report() -> None:
        progress.seconds = time.perf_counter() - start
        progress.examined = base_examined + int(counters[:-1].sum())
        if on_progress is not None:
            on_progress(progress)

    def solve(m: Material, part_pool: ThreadPoolExecutor) -> list[tuple[Material, np.ndarray]]:
        p = m.partner
        a = np.zeros(s.slice_size(*m), dtype=np.uint8)
        b = a if p == m else np.zeros(s.slice_size(*p), dtype=np.uint8)
        s.solve(tuple(m), a, b, counters, 0, workers, part_pool)
        return [(m, a), (p, b)] if p != m else [(m, a)]

    def write(tables: list[tuple[Material, np.ndarray]]) -> int:
        written = 0
        for mat, t in tables:
            out = t.copy()
            _egtb.fill_invalid(out)
            written += write_table(table_path(folder, mat), variant.name, mat, out)
        return written

    # one slice at a time, each pass split over the workers; the next slice is solved while
    # the last one is compressed and written
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="damka-egtb") as part_pool, \
            ThreadPoolExecutor(max_workers=1) as driver, ThreadPoolExecutor(max_workers=1) as writer:
        writes: list = []

        def collect(block: bool) -> None:
            for w in [w for w in writes if block or w.done()]:
                progress.bytes_written += w.result()  # raises the writer's error here
                writes.remove(w)

        try:
            for m in todo:
                if _load_pair(s, folder, variant, m):
                    progress.loaded += 1
                    progress.slices_done += 1
                    continue
                progress.entries += s.slice_size(*m) + (
                    s.slice_size(*m.partner) if m.partner != m else 0)
                progress.current = [m.name]
                job = driver.submit(solve, m, part_pool)
                while not wait([job], timeout=interval).done:
                    report()
                    collect(False)
                tables = job.result()  # raises the solver's error here
                writes.append(writer.submit(write, tables))
                base_examined += int(counters[:-1].sum())
                counters[:-1] = 0
                progress.slices_done += 1
                progress.current = []
                collect(False)
                report()
            collect(True)
        except BaseException:
            # Ctrl-C or a failed slice: the running slice stops within a few thousand
            # positions and is not written; the finished ones are written for the next run
            counters[-1] = 1
            raise
    report()
    return progress


def _load_pair(s, folder: Path, variant: Variant, m: Material) -> bool:
    """Load a finished pair from disk; False when either file is missing."""
    mats = (m, m.partner) if m.partner != m else (m,)
    if not all(table_path(folder, x).exists() for x in mats):
        return False
    for x in mats:
        f = load_into(s, folder, variant, x)
        if f is not None:
            f.close()
    return True
