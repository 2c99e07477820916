"""Files replaced whole or not at all, and still there after a crash or a power cut.

A rename alone is atomic but not durable: the rename can reach the disk before the data
(ext4, XFS), so that after a crash the new name holds zero bytes, and the rename itself is only
safe once its directory is on disk. So a new version is written to a temporary file beside the
target, fsynced, renamed over the target, and then the directory is fsynced.

Used for self-play chunks and ``meta.json``, weights files and endgame database files.
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["replacing", "replace_bytes", "fsync_directory"]

#: O_EXCL: two writers of one target never share a temporary file; O_BINARY: no newline
#: translation on Windows
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
#: directory fsync refused by the file system (some network and FUSE file systems): nothing
#: more can be done there, and the file itself is on disk
_UNSUPPORTED = {getattr(errno, name) for name in ("EINVAL", "ENOTSUP", "EOPNOTSUPP")
                if hasattr(errno, name)}


@contextmanager
def replacing(path: "str | os.PathLike[str]") -> Iterator[BinaryIO]:
    """A binary file for the new content of ``path``, put in its place when the block ends.

    An error in the block (or in the flush, fsync or rename) leaves ``path`` as it was, with its
    old content or still missing, and removes the temporary file.
    """
    target = Path(path)
    # ends in .tmp: never matched by the globs that find chunks or databases (os.urandom, not
    # the secrets module: its import, hmac and base64 with it, is a cost on every start)
    tmp = target.with_name(f"{target.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, _FLAGS, 0o666)  # the mode open() gives, less the umask
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    fsync_directory(target.parent)


def replace_bytes(path: "str | os.PathLike[str]", data: bytes) -> None:
    """Replace ``path`` by ``data`` durably (see ``replacing``)."""
    with replacing(path) as f:
        f.write(data)


def fsync_directory(path: "str | os.PathLike[str]") -> None:
    """Make the renames and new files in directory ``path`` durable. POSIX only: where a
    directory cannot be opened (Windows, no ``os.O_DIRECTORY``) the rename is left to the
    file system."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise
    finally:
        os.close(fd)
