"""Hub protocol lines: reading and writing ``command name=value flag name="a b"``.

Shared by the engine side (hub/server.py) and by clients that drive other Hub engines. Reading is
Scan's tokeniser (docs/protocols.md 1.2): blanks separate tokens, a value is a bare word or
everything up to the next ``"``, there is no escape. Writing quotes exactly when a value is empty or holds a
blank, ``=`` or ``"``; a value can never contain ``"`` or a line break (it would end the line
and start another command), so the writer refuses one, and a name that is not a word.
"""

from __future__ import annotations

__all__ = ["HubSyntaxError", "parse_line", "format_line", "format_value"]


class HubSyntaxError(ValueError):
    """A line that is not valid Hub syntax (an unterminated quote, a stray ``=`` ...)."""


def _is_name_char(c: str) -> bool:
    return not (c.isspace() or c in '="' or ord(c) < 32 or ord(c) == 127)


def parse_line(line: str) -> tuple[str, dict[str, str]]:
    """``(command, {name: value})``; a bare flag has the value ``""``. Raises HubSyntaxError."""
    text = line.rstrip("\r\n")
    i, n = 0, len(text)
    tokens: list[tuple[str, str | None]] = []
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        start = i
        while i < n and _is_name_char(text[i]):
            i += 1
        name = text[start:i]
        if not name:
            raise HubSyntaxError(f"unexpected {_shown(text[i])} at column {i + 1}")
        value = None
        if i < n and text[i] == "=":
            i += 1
            if i < n and text[i] == '"':
                end = text.find('"', i + 1)
                if end < 0:
                    raise HubSyntaxError("unterminated quote")
                value = text[i + 1 : end]
                i = end + 1
            else:
                start = i
                while i < n and _is_name_char(text[i]):
                    i += 1
                value = text[start:i]
            if i < n and not text[i].isspace():
                raise HubSyntaxError(f"unexpected {_shown(text[i])} at column {i + 1}")
        elif i < n and not text[i].isspace():
            raise HubSyntaxError(f"unexpected {_shown(text[i])} at column {i + 1}")
        tokens.append((name, value))
    if not tokens:
        raise HubSyntaxError("missing command")
    command, value = tokens[0]
    if value is not None:
        raise HubSyntaxError("a command cannot have a value")
    args: dict[str, str] = {}
    for name, value in tokens[1:]:
        args[name] = "" if value is None else value
    return command, args


def format_value(value: object) -> str:
    """A value as Hub writes it: bare when it is a plain word, quoted otherwise."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    if '"' in text:
        raise ValueError(f"a Hub value cannot contain a double quote: {text!r}")
    if "\n" in text or "\r" in text:
        raise ValueError(f"a Hub value cannot contain a line break: {text!r}")
    if text == "" or any(not _is_name_char(c) for c in text):
        return f'"{text}"'
    return text


def format_line(command: str, *flags: str, **args: object) -> str:
    """``command flag... name=value...`` in the order given; names may use ``_`` for ``-``."""
    parts = [command, *flags]
    for name, value in args.items():
        parts.append(f"{name.replace('_', '-')}={format_value(value)}")
    for word in (command, *flags, *args):
        if not word or not all(_is_name_char(c) for c in word):
            raise ValueError(f"a Hub command or name must be one word: {word!r}")
    return " ".join(parts)


def _shown(char: str) -> str:
    """A character as an error shows it: quoted, and a double quote not turned into a single
    one by the ``error message="..."`` line around it."""
    return "double quote" if char == '"' else repr(char)
