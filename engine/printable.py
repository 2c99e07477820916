"""Text from outside made safe to print: to a terminal, a log, a PDN tag or a protocol line.

Names and messages from engines and peers (a DXP CHAT, a Hub ``id name=``) reach places where
a control character acts: an escape sequence rewrites a terminal, a line break ends a Hub
line or splits a log entry, a bidi override turns what a reader sees. Rules: line breaks
become blanks; other controls, format characters (bidi overrides, zero-width ones),
surrogates and line or paragraph separators are written as Python escapes (``\\x1b``);
everything else is kept, accents and all.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]

#: controls (ESC, NUL, BEL...), format characters, surrogates, line and paragraph separators
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def printable(text: str) -> str:
    """``text`` with nothing that acts when printed (see the module's rules)."""
    if text.isprintable():
        return text
    text = " ".join(text.splitlines())
    return "".join(c.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(c) in _UNPRINTABLE else c for c in text)
