"""Where ``damka play`` serves when not told (imported by the command's parser and by the
server alike, so it imports nothing: the parser must not load the web code)."""

from __future__ import annotations

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT"]

#: this machine only
DEFAULT_HOST = "127.0.0.1"
#: a free port chosen by the system
DEFAULT_PORT = 0
