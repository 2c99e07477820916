"""What the ``damka selfplay`` and ``damka tune`` parsers share: the rule set options (a name
with its '-nocapture' form, or the house-rule flag) and the check for the ``train`` extra.

Light, like the two command modules that import it (selfplay_command, tune_command): numpy,
scipy and the workers load only when a command runs.
"""

from __future__ import annotations

import argparse

from engine.hashsize import MAX_HASH_MB, MIN_HASH_MB
from engine.variants import Variant, variant_names

from protocol import args as arg

__all__ = ["add_variant", "read_variant", "need_train_extra", "add_workers", "add_hash",
           "add_seed", "add_max_plies", "add_egtb"]


def add_variant(p: argparse.ArgumentParser) -> None:
    """``--variant`` (no default here: ``read_variant`` is told one) and
    ``--no-forced-capture``."""
    p.add_argument("--variant", default=None,
                   help=f"rule set or alias, '-nocapture' for the house rule "
                        f"({', '.join(variant_names())})")
    arg.add_no_forced_capture(p)


def read_variant(args: argparse.Namespace, default: str | None) -> Variant | None:
    """The rule set asked for, else ``default`` (None: none at all), with the house rule."""
    name = args.variant if args.variant is not None else default
    if name is None:
        return None
    return arg.read_variant(name, args.no_forced_capture)


def need_train_extra(command: str) -> None:
    """numpy, scipy and tqdm come with the ``train`` extra: say so instead of a traceback."""
    for module in ("numpy", "scipy", "tqdm"):
        try:
            __import__(module)
        except ImportError:
            raise ValueError(f"damka {command} needs {module}: pip install 'damka[train]'"
                             ) from None


def add_workers(p: argparse.ArgumentParser, also: str = "") -> None:
    """``--workers`` (default: every core); ``also`` is added to its help."""
    p.add_argument("--workers", type=arg.bounded(int, "workers", 1, 1024), default=None,
                   metavar="N", help=f"worker processes (default: every core){also}")


def add_hash(p: argparse.ArgumentParser, default: int) -> None:
    """``--hash``: each worker's table, in MB."""
    p.add_argument("--hash", type=arg.bounded(int, "hash", MIN_HASH_MB, MAX_HASH_MB),
                   default=default, metavar="MB",
                   help=f"hash table per worker (default {default})")


def add_seed(p: argparse.ArgumentParser, default: int, what: str) -> None:
    """``--seed``: ``what`` it chooses."""
    p.add_argument("--seed", type=arg.bounded(int, "seed", 0, 2**63 - 1), default=default,
                   metavar="S", help=f"{what} (default {default})")


def add_max_plies(p: argparse.ArgumentParser, default: int) -> None:
    """``--max-plies`` (the adjudication cap of a game) and ``--quiet`` (no progress bar)."""
    p.add_argument("--max-plies", type=arg.bounded(int, "max-plies", 1, 30000),
                   default=default, metavar="N",
                   help=f"a game still going after N plies is a draw (default {default})")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_egtb(p: argparse.ArgumentParser, ends_games: bool = True) -> None:
    """``--egtb [DIR]``: endgame databases the engines probe and, with ``ends_games``, whose
    result ends a game that reaches them (None when not given; "" for the default
    directory)."""
    what = ("the engines probe them, and a game that reaches a position in them ends with "
            "their result" if ends_games else "the search probes them")
    p.add_argument("--egtb", nargs="?", const="", default=None, metavar="DIR",
                   help=f"endgame databases (damka egtb build): {what} (without DIR: the "
                        f"default directory)")
