"""The ``damka`` command line's argument checkers, and the options several commands share.

Every command's parser (``add_parser`` in the command modules that protocol/cli.py lists)
checks its values with the functions here, each written once: a bad value raises
``argparse.ArgumentTypeError``, which the parser turns into ``UsageError`` (one line
``damka: error: ...`` on stderr, exit status 2). A checker's message names the option, so the
same checker serves every option of its kind.

Light on purpose: it imports argparse and the engine's small modules of limits (hash sizes,
rule set names) and nothing of protocol's subpackages, so every one of them may import it.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from engine.hashsize import MAX_HASH_MB, MIN_HASH_MB
from engine.variants import Variant, get_variant, variant_names

__all__ = [
    "UsageError",
    "MAX_DEPTH",
    "DEFAULT_VARIANT",
    "depth",
    "threads",
    "positive_int",
    "int_range",
    "bounded",
    "hash_size",
    "port",
    "seconds",
    "seconds_up_to",
    "whole_minutes",
    "add_threads",
    "add_hash",
    "add_variant",
    "add_no_forced_capture",
    "read_variant",
    "variant_label",
    "egtb_dir",
]

#: deeper than this is a typo, not a request (and beyond what any core's ply stack holds)
MAX_DEPTH = 64
#: the rule set of a command not told one
DEFAULT_VARIANT = "international"


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


# -- checkers: argparse types, one per kind of value -------------------------------------


def _read(text: str, kind: Callable[[str], Any], unreadable: str, ok: Callable[[Any], bool],
          out_of_range: Callable[[Any], str]) -> Any:
    """``kind(text)`` if it reads and ``ok`` holds; otherwise the message for what went wrong
    (every checker below is this with its own wording)."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(unreadable) from None
    if not ok(value):
        raise argparse.ArgumentTypeError(out_of_range(value))
    return value


def depth(text: str) -> int:
    """A search or perft depth, 1..MAX_DEPTH."""
    return _read(text, int, f"depth must be a positive integer, not {text!r}",
                 lambda v: 1 <= v <= MAX_DEPTH,
                 lambda v: f"depth must be between 1 and {MAX_DEPTH}, not {v}")


def threads(text: str) -> int:
    """A --threads value: 1 up to the cores this process may use."""
    from engine.threads import check_threads

    try:
        return check_threads(int(text))
    except ValueError as exc:
        message = str(exc) if text.strip().lstrip("+-").isdigit() else \
            f"threads must be a positive integer, not {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def positive_int(what: str) -> Callable[[str], int]:
    """An integer of at least 1 (``what`` names it in the message)."""
    return lambda text: _read(text, int, f"{what} must be a positive integer, not {text!r}",
                              lambda v: v >= 1,
                              lambda v: f"{what} must be a positive integer, not {v}")


def int_range(name: str, low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high]."""
    return lambda text: _read(text, int, f"{name} must be an integer, not {text!r}",
                              lambda v: low <= v <= high,
                              lambda v: f"{name} must be between {low} and {high}, not {v}")


def bounded(kind: Callable[[str], float], name: str, low: float, high: float | None = None):
    """A number of ``kind`` (int or float) with ``low <= value (<= high)``: the wording of the
    training and database commands ("a whole number", "at least")."""
    what = "a whole number" if kind is int else "a number"
    span = f"at least {low}" if high is None else f"between {low} and {high}"
    return lambda text: _read(
        text, kind, f"{name} must be {what}, not {text!r}",
        lambda v: v == v and v >= low and (high is None or v <= high),
        lambda v: f"{name} must be {span}, not {text}")


def listed(check: Callable[[str], Any]) -> Callable[[str], tuple]:
    """One value or several, comma-separated, each read by ``check`` (a grid to try)."""
    def read(text: str) -> tuple:
        parts = [part.strip() for part in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"an empty value in {text!r}")
        return tuple(check(part) for part in parts)
    return read


#: ``--hash`` of analyse, bench and dxp: the range every front end takes (engine.hashsize)
hash_size = int_range("hash size", MIN_HASH_MB, MAX_HASH_MB)
#: a TCP port to listen on, 0 for one the system picks
port = int_range("port", 0, 65535)


def seconds(text: str) -> float:
    """A positive time in seconds (analyse's --time, match's --movetime)."""
    return _read(text, float, f"time must be a number of seconds, not {text!r}",
                 lambda v: 0 < v < 1e7,
                 lambda v: f"time must be a positive number of seconds, not {text}")


def seconds_up_to(high: float, zero: bool = False) -> Callable[[str], float]:
    """Seconds in (0, high], or [0, high] with ``zero``."""
    return lambda text: _read(
        text, float, f"not a number of seconds: {text!r}",
        lambda v: (0 <= v if zero else 0 < v) and v <= high,
        lambda v: f"seconds must be in {'[' if zero else '('}0, {high:g}], not {v}")


def whole_minutes(text: str) -> int:
    """``damka dxp --time``: refused unless whole minutes (DXP's GAMEREQ has no fractions)."""
    return _read(text, int, f"whole minutes (DXP's GAMEREQ cannot say fractions), not {text!r}",
                 lambda v: 0 <= v <= 999,
                 lambda v: f"whole minutes between 0 and 999, not {v}")


# -- options several commands take -------------------------------------------------------


def add_threads(p: argparse.ArgumentParser, what: str) -> None:
    """``--threads N``: ``what`` says what runs on them ("search", "count" ...)."""
    p.add_argument("--threads", type=threads, default=1, metavar="N",
                   help=f"{what} on N threads, 1 up to the number of cores (default 1)")


def add_hash(p: argparse.ArgumentParser, default: int) -> None:
    """``--hash MB``, the hash table of the command's engine."""
    p.add_argument("--hash", type=hash_size, default=default, metavar="MB",
                   help=f"hash table size in MB, {MIN_HASH_MB}..{MAX_HASH_MB} (default {default})")


def add_variant(p: argparse.ArgumentParser) -> None:
    """``--variant NAME``: a rule set or alias, DEFAULT_VARIANT when not given."""
    p.add_argument("--variant", default=DEFAULT_VARIANT,
                   help=f"rule set or alias (default {DEFAULT_VARIANT}; "
                        f"{', '.join(variant_names())})")


def add_no_forced_capture(p: argparse.ArgumentParser) -> None:
    """``--no-forced-capture``: the house rule, read back by ``read_variant``."""
    p.add_argument("--no-forced-capture", action="store_true",
                   help='the "no forced capture" house rule (8x8 rule sets only)')


def read_variant(name: str, no_forced_capture: bool = False) -> Variant:
    """The rule set of ``--variant`` (ValueError for an unknown name), with the house rule of
    ``--no-forced-capture``."""
    variant = get_variant(name)
    return variant.with_forced_capture(False) if no_forced_capture else variant


def variant_label(variant: Variant) -> str:
    """A name that get_variant reads back, house rule included (``russian-nocapture``)."""
    return variant.name if variant.forced_capture else f"{variant.name}-nocapture"


def egtb_dir(option: str | None):
    """``--egtb [DIR]``: None without the option, the default directory for an empty value."""
    if option is None:
        return None
    from engine.egtb import default_dir

    return option or default_dir()
