"""``verify``: every stored position against the best of its successors."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, NamedTuple

import numpy as np

from ..variants import Variant
from .builder import load_into, solver
from .material import DEFAULT_WORKERS, Material, material_of_file, signatures
from .paths import variant_dir
from .storage import SUFFIX, EgtbError


class SliceCheck(NamedTuple):
    material: Material
    entries: int
    bad: int
    first_bad: int  #: index of the first disagreeing entry, -1 when none
    seconds: float


def verify(variant: Variant, directory: "str | os.PathLike[str] | None" = None,
           on_slice: Callable[[SliceCheck], None] | None = None,
           workers: int = DEFAULT_WORKERS) -> list[SliceCheck]:
    """Check every slice on disk (and what it depends on must be there too), ``workers``
    slices at once (the check releases the GIL); ``on_slice`` hears of them in order."""
    if workers < 1:
        raise EgtbError("workers must be at least 1")
    folder = variant_dir(directory, variant.name)
    try:
        present = {material_of_file(p, SUFFIX) for p in folder.glob(f"*{SUFFIX}")}
    except ValueError as exc:
        raise EgtbError(str(exc)) from None
    if not present:
        raise EgtbError(f"no endgame databases for {variant.name} in {folder}")
    top = max(m.pieces for m in present)
    s = solver(variant)
    todo = [m for m in signatures(top) if m in present]
    for m in todo:
        if m.partner not in present:
            raise EgtbError(f"{m.name} is there but its colour partner {m.partner.name} is not")
        f = load_into(s, folder, variant, m)
        if f is not None:
            f.close()
    counters = np.zeros(len(todo) + 1, dtype=np.uint64)

    def check(slot: int) -> SliceCheck:
        m = todo[slot]
        start = time.perf_counter()
        try:
            bad, first = s.verify(tuple(m), counters, slot)
        except ValueError as exc:
            raise EgtbError(str(exc)) from None
        return SliceCheck(m, s.slice_size(*m), bad, first, time.perf_counter() - start)

    out = []
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="damka-verify")
    try:
        for job in [pool.submit(check, slot) for slot in range(len(todo))]:
            out.append(job.result())
            if on_slice is not None:
                on_slice(out[-1])
    except BaseException:
        # Ctrl-C: the slices not begun are dropped, not checked first (the slices under way
        # finish; a table is checked slice by slice)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return out
