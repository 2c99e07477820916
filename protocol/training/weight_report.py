"""How much of a weights file the data has moved: the parameters of each table that are
non-zero as the file stores them (rounded to 1/scale of a hundredth), so that a thin fit (rare
pattern entries left at zero) shows at a glance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["GroupCount", "nonzero_by_group", "format_report"]


@dataclass(frozen=True)
class GroupCount:
    name: str
    nonzero: int
    size: int

    @property
    def share(self) -> float:
        return self.nonzero / self.size if self.size else 0.0


def nonzero_by_group(layout: Any, weights: np.ndarray) -> list[GroupCount]:
    """One count per group of the layout (each table its own), then ``patterns`` (the 4x4
    tables), ``edges`` (the edge tables), ``wides`` (the wide tables) and ``all``."""
    stored = np.rint(np.asarray(weights, np.float64) * layout.scale) != 0
    counts = [GroupCount(name, int(stored[offset:offset + size].sum()), size)
              for name, offset, size in layout.groups]
    for total, prefix in (("patterns", "pattern:"), ("edges", "edge:"), ("wides", "wide:")):
        tables = [c for c in counts if c.name.startswith(prefix)]
        if tables:
            counts.append(GroupCount(total, sum(c.nonzero for c in tables),
                                     sum(c.size for c in tables)))
    counts.append(GroupCount("all", int(stored.sum()), len(stored)))
    return counts


def format_report(counts: list[GroupCount]) -> str:
    """The counts as aligned lines: ``group  non-zero / size  share``."""
    width = max(len(c.name) for c in counts)
    return "\n".join(f"  {c.name:<{width}}  {c.nonzero:>9,} / {c.size:<10,} {c.share:6.1%}"
                     for c in counts)
