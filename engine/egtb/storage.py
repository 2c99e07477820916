"""The endgame database file: one file per material signature, compressed in blocks.

Layout (little-endian)::

    header   magic "DAMKAEGT", format version (u16), rule set name (16 bytes, NUL padded),
             material wm wk bm bk (4 x u8), value kind (u8), reserved (u8),
             entries per block (u32), entries (u64), blocks (u32), payload CRC-32 (u32)
    crc      CRC-32 of the header bytes (u32)
    offsets  blocks + 1 byte offsets (u64) of the compressed blocks, from the payload start
    blocks   each block: ``entries per block`` value bytes in index order, zlib-compressed

The payload (offsets and blocks) is covered by its CRC-32, checked when the file is opened:
a corrupt, truncated or mismatched file raises EgtbError and is never read silently. A probe
decompresses one block (4096 entries, never inflated past them) and keeps the last blocks it
used in a small cache. Entries of the index that hold no position (two men on one square)
are filled with the value before them, so they cost nothing in the compressed stream.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..durable import replacing
from ..errors import DamkaError
from .material import Material

MAGIC = b"DAMKAEGT"
VERSION = 1
#: value kind 2: one byte, 0 draw, 1..127 a win in that many plies, 128 + d a loss in d plies,
#: plies counted to the next capture or crowning (see docs/egtb.md)
KIND_DTC = 2
BLOCK = 4096
SUFFIX = ".egtb"
_HEAD = struct.Struct("<8sH16s4BBBIQII")
_CRC = struct.Struct("<I")


class EgtbError(DamkaError):
    """A missing, corrupt or mismatched endgame database file (or a bad database request)."""


def write_table(path: Path, variant_name: str, material: Material, table: np.ndarray,
                level: int = 6) -> int:
    """Write one table (uint8, invalid entries already filled) atomically and durably
    (engine.durable: a build that dies never leaves a partial file); returns its size."""
    table = np.ascontiguousarray(table, dtype=np.uint8)
    raw = table.tobytes()
    blocks = [zlib.compress(raw[i:i + BLOCK], level) for i in range(0, len(raw), BLOCK)]
    offsets = np.zeros(len(blocks) + 1, dtype="<u8")
    np.cumsum([len(b) for b in blocks], out=offsets[1:])
    payload = offsets.tobytes() + b"".join(blocks)
    head = _HEAD.pack(MAGIC, VERSION, variant_name.encode()[:16], *material, KIND_DTC, 0,
                      BLOCK, len(table), len(blocks), zlib.crc32(payload))
    with replacing(path) as f:
        f.write(head)
        f.write(_CRC.pack(zlib.crc32(head)))
        f.write(payload)
    return len(head) + _CRC.size + len(payload)


class TableFile:
    """One database file, memory-mapped and checked; values by index through a block cache."""

    def __init__(self, path: "str | os.PathLike[str]", variant_name: str,
                 material: Material | None = None, entries: int | None = None,
                 cache_blocks: int = 256):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise EgtbError(f"cannot read endgame database {self.path}: {exc}") from None
        m = self._map
        size = _HEAD.size + _CRC.size
        if len(m) < size or m[:8] != MAGIC:
            raise EgtbError(f"{self.path} is not a damka endgame database (bad header)")
        head = m[:_HEAD.size]
        (_magic, version, name, wm, wk, bm, bk, kind, _res, block, count, nblocks,
         crc) = _HEAD.unpack(head)
        if _CRC.unpack(m[_HEAD.size:size])[0] != zlib.crc32(head):
            raise EgtbError(f"{self.path}: header checksum mismatch (corrupt file)")
        if version != VERSION or kind != KIND_DTC or block != BLOCK:
            raise EgtbError(f"{self.path}: format version {version} kind {kind} is not the "
                            f"one this damka reads ({VERSION}, {KIND_DTC}); rebuild it")
        self.variant_name = name.rstrip(b"\0").decode(errors="replace")
        self.material = Material(wm, wk, bm, bk)
        if self.variant_name != variant_name:
            raise EgtbError(f"{self.path} belongs to rule set {self.variant_name!r}, "
                            f"not {variant_name!r}")
        if material is not None and self.material != material:
            raise EgtbError(f"{self.path} holds material {self.material.name}, "
                            f"not {material.name}")
        if entries is not None and count != entries:
            raise EgtbError(f"{self.path} has {count} entries, expected {entries}")
        if nblocks != (count + BLOCK - 1) // BLOCK:
            raise EgtbError(f"{self.path}: block count {nblocks} does not fit {count} entries")
        self.entries = count
        self._base = size + 8 * (nblocks + 1)
        if len(m) < self._base or zlib.crc32(m[size:]) != crc:
            raise EgtbError(f"{self.path}: checksum mismatch (corrupt or truncated file)")
        self._offsets = np.frombuffer(m, dtype="<u8", count=nblocks + 1, offset=size)
        if int(self._offsets[-1]) != len(m) - self._base:
            raise EgtbError(f"{self.path}: block offsets do not match the file size")
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cache_blocks = cache_blocks
        self._lock = threading.Lock()

    def _block(self, b: int) -> bytes:
        with self._lock:  # engines on several threads may share one file
            data = self._cache.get(b)
            if data is not None:
                self._cache.move_to_end(b)
                return data
            data = self._decode(b)
            self._cache[b] = data
            if len(self._cache) > self._cache_blocks:
                self._cache.popitem(last=False)
            return data

    def _decode(self, b: int) -> bytes:
        start = self._base + int(self._offsets[b])
        end = self._base + int(self._offsets[b + 1])
        size = min(BLOCK, self.entries - b * BLOCK)
        inflate = zlib.decompressobj()
        try:
            # one byte more than a block holds, never the whole stream: a few kilobytes of a
            # crafted file may expand to gigabytes
            data = inflate.decompress(self._map[start:end], size + 1)
        except zlib.error as exc:
            raise EgtbError(f"{self.path}: block {b} cannot be decoded ({exc})") from None
        problem = (f"more than {size} entries" if len(data) > size else
                   f"{len(data)} of {size} entries" if len(data) < size else
                   "its stream does not end" if not inflate.eof else
                   "bytes after its stream" if inflate.unused_data else "")
        if problem:
            raise EgtbError(f"{self.path}: block {b} has the wrong length ({problem})")
        return data

    def value(self, index: int) -> int:
        """The value byte of entry ``index``."""
        if not 0 <= index < self.entries:
            raise EgtbError(f"{self.path}: index {index} out of range")
        return self._block(index // BLOCK)[index % BLOCK]

    def table(self) -> np.ndarray:
        """The whole table decompressed (for building larger tables and for verify)."""
        out = np.empty(self.entries, dtype=np.uint8)
        for b in range(len(self._offsets) - 1):
            data = self._decode(b)
            out[b * BLOCK:b * BLOCK + len(data)] = np.frombuffer(data, dtype=np.uint8)
        return out

    @property
    def size(self) -> int:
        """Bytes on disk."""
        return len(self._map)

    def close(self) -> None:
        self._cache.clear()
        self._offsets = None  # type: ignore[assignment]
        self._map.close()
