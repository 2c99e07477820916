"""Where endgame databases live by default: a per-user data directory, never the source tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "DAMKA_EGTB"


def default_dir() -> Path:
    """``$DAMKA_EGTB``, else the platform's per-user data directory + ``damka/egtb``:
    ``$XDG_DATA_HOME`` (default ``~/.local/share``) on Linux and BSD,
    ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on Windows."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "damka" / "egtb"


def variant_dir(directory: "str | os.PathLike[str] | None", variant_name: str) -> Path:
    """The folder of one rule set's files inside a database directory."""
    return Path(directory if directory is not None else default_dir()).expanduser() / variant_name


def has_tables(directory: "str | os.PathLike[str] | None", variant_name: str) -> bool:
    """Whether a database directory holds files for a rule set (a cheap check: no file is
    opened, nothing heavy imported)."""
    folder = variant_dir(directory, variant_name)
    return folder.is_dir() and any(folder.glob("*.egtb"))
