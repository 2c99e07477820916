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
from typing import Callable

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


def depth(text: str) -> int:
    """A search or perft depth, 1..MAX_DEPTH."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be a positive integer, not {text!r}") from None
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"depth must be between 1 and {MAX_DEPTH}, not {value}")
    return value


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
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a positive integer, not {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{what} must be a positive integer, not {value}")
        return value

    return parse


def int_range(name: str, low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high]."""
    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, not {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be between {low} and {high}, not {value}")
        return value
    return read


def bounded(kind: Callable[[str], float], name: str, low: float, high: float | None = None):
    """A number of ``kind`` (int or float) with ``low <= value (<= high)``: the wording of the
    training and database commands ("a whole number", "at least")."""
    def read(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {what}, not {text!r}") from None
        if value != value or value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"{name} must be {span}, not {text}")
        return value
    return read


#: ``--hash`` of analyse, bench and dxp: the range every front end takes (engine.hashsize)
hash_size = int_range("hash size", MIN_HASH_MB, MAX_HASH_MB)
#: a TCP port to listen on, 0 for one the system picks
port = int_range("port", 0, 65535)


def seconds(text: str) -> float:
    """A positive time in seconds (analyse's --time, match's --movetime)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"time must be a number of seconds, not {text!r}") from None
    if not 0 < value < 1e7:
        raise argparse.ArgumentTypeError(f"time must be a positive number of seconds, not {text}")
    return value


def seconds_up_to(high: float, zero: bool = False) -> Callable[[str], float]:
    """Seconds in (0, high], or [0, high] with ``zero``."""
    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not (0 <= value if zero else 0 < value) or not value <= high:
            raise argparse.ArgumentTypeError(
                f"seconds must be in {'[' if zero else '('}0, {high:g}], not {value}")
        return value
    return read


def whole_minutes(text: str) -> int:
    """``damka dxp --time``: refused unless whole minutes (DXP's GAMEREQ has no fractions)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"whole minutes (DXP's GAMEREQ cannot say fractions), not {text!r}") from None
    if not 0 <= value <= 999:
        raise argparse.ArgumentTypeError(f"whole minutes between 0 and 999, not {value}")
    return value


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
