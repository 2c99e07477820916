"""``verify``: every stored position against the best of its successors."""

from __future__ import annotations

import os
import time
from typing import Callable, NamedTuple

import numpy as np

from ..variants import Variant
from .builder import load_into, solver
from .material import Material, signatures
from .paths import variant_dir
from .storage import SUFFIX, EgtbError


class SliceCheck(NamedTuple):
    material: Material
    entries: int
    bad: int
    first_bad: int  #: index of the first disagreeing entry, -1 when none
    seconds: float


def verify(variant: Variant, directory: "str | os.PathLike[str] | None" = None,
           on_slice: Callable[[SliceCheck], None] | None = None) -> list[SliceCheck]:
    """Check every slice on disk (and what it depends on must be there too)."""
    folder = variant_dir(directory, variant.name)
    present = {Material.from_name(p.name[: -len(SUFFIX)]) for p in folder.glob(f"*{SUFFIX}")}
    if not present:
        raise EgtbError(f"no endgame databases for {variant.name} in {folder}")
    top = max(m.pieces for m in present)
    s = solver(variant)
    counter = np.zeros(1, dtype=np.uint64)
    out = []
    for m in signatures(top):
        if m not in present:
            continue
        f = load_into(s, folder, variant, m)
        if f is not None:
            f.close()
    for m in signatures(top):
        if m not in present:
            continue
        if m.partner not in present:
            raise EgtbError(f"{m.name} is there but its colour partner {m.partner.name} is not")
        start = time.perf_counter()
        try:
            bad, first = s.verify(tuple(m), counter, 0)
        except ValueError as exc:
            raise EgtbError(str(exc)) from None
        check = SliceCheck(m, s.slice_size(*m), bad, first, time.perf_counter() - start)
        out.append(check)
        if on_slice is not None:
            on_slice(check)
    return out
