"""What the ``damka selfplay`` and ``damka tune`` parsers share: the rule set options (a name
with its '-nocapture' form, or the house-rule flag) and the check for the ``train`` extra.

Light, like the two command modules that import it (selfplay_command, tune_command): numpy,
scipy and the workers load only when a command runs.
"""

from __future__ import annotations

import argparse

from engine.variants import Variant, variant_names

from protocol import args as arg

__all__ = ["add_variant", "read_variant", "need_train_extra"]


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
