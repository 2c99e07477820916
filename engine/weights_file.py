"""The weights file (``.dkw``): one rule set's evaluation weights, checked before use.

Layout (little-endian), 56 header bytes then the payload:

====== ======== =====================================================================
offset type     meaning
====== ======== =====================================================================
0      8 bytes  magic ``DAMKAEVW``
8      uint16   format version (2; version 1 is read too)
10     uint16   scale: weights are int16 in 1/scale hundredths of a man (16)
12     16 bytes rule set name (ASCII, NUL-padded), e.g. ``international``
28     16 bytes layout fingerprint (16 hex digits, see engine.evaluation.Layout)
44     uint32   number of parameters
48     uint32   payload length in bytes
52     uint32   CRC-32 of the stored (uncompressed) parameters
56     payload  zlib-compressed int16 parameters, in the layout's order
====== ======== =====================================================================

Version 2 leaves the parameters after the last non-zero one out of the payload: they are
zero. A layout's last tables are the ones a file most often leaves at zero (the wide tables:
96% of an international file's 4.4 M parameters), and inflating their zeros cost 25 ms of an
engine's start; a version 1 file stores every parameter.

Anything that does not fit - a missing, truncated or corrupt file, another rule set, another
layout - raises ``WeightsError`` naming the file and the layout expected. A file is never
read as zeros, nor inflated past the parameters its header gives.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from .durable import replace_bytes

__all__ = ["WeightsError", "WeightsHeader", "MAGIC", "VERSION", "VERSIONS", "SCALE",
           "read_params", "read_stored_params", "write_params", "peek_header"]

MAGIC = b"DAMKAEVW"
#: the format written; the versions read (1: every parameter stored; 2: the trailing zeros not)
VERSION = 2
VERSIONS = (1, 2)
#: weights are stored as int16 in 1/SCALE hundredths of a man (the core's own unit)
SCALE = 16
_HEADER = struct.Struct("<8sHH16s16sIII")


class WeightsError(ValueError):
    """A weights file that cannot be used: the message names the file and what was expected."""


@dataclass(frozen=True)
class WeightsHeader:
    variant: str
    fingerprint: str
    n_params: int


def _fail(path: "str | os.PathLike", problem: str, expected: WeightsHeader) -> WeightsError:
    return WeightsError(
        f"weights file {os.fspath(path)}: {problem} (expected layout {expected.fingerprint} "
        f"of {expected.variant}, {expected.n_params} parameters)"
    )


def read_params(path: "str | os.PathLike", expected: WeightsHeader) -> bytes:
    """The parameters of a weights file that matches ``expected`` exactly, as little-endian
    int16 bytes."""
    return read_stored_params(path, expected).ljust(2 * expected.n_params, b"\0")


def read_stored_params(path: "str | os.PathLike", expected: WeightsHeader) -> bytes:
    """read_params without the trailing zeros that a version 2 file leaves out (a version 1
    file's are all there): the leading parameters, the rest being zero."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise _fail(path, "no such file", expected) from None
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc})", expected) from None
    if len(data) < _HEADER.size:
        raise _fail(path, f"truncated: {len(data)} bytes, shorter than the header", expected)
    magic, version, scale, variant, fingerprint, n_params, length, crc = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _fail(path, "not a damka weights file (bad magic)", expected)
    if version not in VERSIONS:
        raise _fail(path, f"format version {version}, this engine reads "
                    f"{' and '.join(map(str, VERSIONS))}", expected)
    if scale != SCALE:
        raise _fail(path, f"scale {scale}, this engine reads {SCALE}", expected)
    variant_name = variant.rstrip(b"\0").decode("ascii", "replace")
    if variant_name != expected.variant:
        raise _fail(path, f"the weights are for {variant_name!r}", expected)
    fingerprint_text = fingerprint.decode("ascii", "replace")
    if fingerprint_text != expected.fingerprint:
        raise _fail(path, f"its layout is {fingerprint_text}", expected)
    if n_params != expected.n_params:
        raise _fail(path, f"it holds {n_params} parameters", expected)
    payload = data[_HEADER.size:]
    if len(payload) < length:
        raise _fail(path, f"truncated: {len(payload)} of {length} payload bytes", expected)
    if len(payload) > length:
        raise _fail(path, f"corrupt: {len(payload) - length} bytes after the payload", expected)
    size = 2 * n_params
    inflate = zlib.decompressobj()
    try:
        # one byte more than the header allows, never the whole stream: a small file may
        # expand to gigabytes
        raw = inflate.decompress(payload, size + 1)
    except zlib.error as exc:
        raise _fail(path, f"corrupt payload ({exc})", expected) from None
    if len(raw) > size:
        raise _fail(path, f"corrupt payload: more than {size} bytes for {n_params} parameters",
                    expected)
    if not inflate.eof:
        raise _fail(path, "corrupt payload (incomplete or truncated stream)", expected)
    if len(raw) % 2 or (version == 1 and len(raw) < size):
        raise _fail(path, f"corrupt payload: {len(raw)} bytes for {n_params} parameters",
                    expected)
    if inflate.unused_data:
        raise _fail(path, f"corrupt payload: {len(inflate.unused_data)} bytes after the "
                    "compressed parameters", expected)
    if zlib.crc32(raw) != crc:
        raise _fail(path, "corrupt payload: checksum mismatch", expected)
    return raw


def peek_header(path: "str | os.PathLike") -> WeightsHeader | None:
    """What a weights file's header says it holds (rule set, layout fingerprint, parameters);
    None when it has no such header. The full check is read_params's."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEADER.size)
    except OSError:
        return None
    if len(head) < _HEADER.size or head[:8] != MAGIC:
        return None
    variant, fingerprint, n_params = _HEADER.unpack_from(head)[3:6]
    return WeightsHeader(variant.rstrip(b"\0").decode("ascii", "replace"),
                         fingerprint.decode("ascii", "replace"), n_params)


def write_params(path: "str | os.PathLike", header: WeightsHeader, raw: bytes) -> None:
    """Write parameters given as little-endian int16 bytes under ``header``, replacing the
    file whole and durably (engine.durable): a failed or interrupted write keeps the old one."""
    if len(raw) != 2 * header.n_params:
        raise ValueError(f"expected {header.n_params} int16 parameters, got {len(raw)} bytes")
    variant = header.variant.encode("ascii")
    fingerprint = header.fingerprint.encode("ascii")
    if len(variant) > 16 or len(fingerprint) != 16:
        raise ValueError("rule set name or fingerprint does not fit the header")
    stored = raw.rstrip(b"\0")
    stored = raw[:len(stored) + len(stored) % 2]  # (whole int16s: a low byte may be zero)
    payload = zlib.compress(stored, 9)
    head = _HEADER.pack(MAGIC, VERSION, SCALE, variant, fingerprint, header.n_params,
                        len(payload), zlib.crc32(stored))
    replace_bytes(path, head + payload)
