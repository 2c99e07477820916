"""The hash table sizes the engine accepts, and checking a requested size against them.

Kept apart from ``engine.search`` (which loads the compiled core) so that front ends can
declare and check their hash setting without loading the search. Every front end (Hub,
``analyse``, ``bench``, ``dxp``, ``selfplay`` and the match spec) takes the same range.
"""

from __future__ import annotations

__all__ = ["DEFAULT_HASH_MB", "MIN_HASH_MB", "MAX_HASH_MB", "check_hash"]

#: the table of an engine not told its size (Engine, the Hub's hash-mb, analyse, dxp, match's
#: damka engines)
DEFAULT_HASH_MB = 64
#: the smallest table: one megabyte
MIN_HASH_MB = 1
#: the largest table: 4 GB (every page of the table is brought into memory when it is made,
#: so a size beyond the machine's memory must be refused, not found out mid-game)
MAX_HASH_MB = 4096


def check_hash(hash_mb: int) -> int:
    """``hash_mb`` if it is a size in range, else a ValueError saying the range."""
    if isinstance(hash_mb, bool) or not isinstance(hash_mb, int) \
            or not MIN_HASH_MB <= hash_mb <= MAX_HASH_MB:
        raise ValueError(f"hash size must be between {MIN_HASH_MB} and {MAX_HASH_MB} MB, "
                         f"not {hash_mb!r}")
    return hash_mb
