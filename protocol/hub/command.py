"""``damka hub``: its (ignored) arguments and ``run``, which starts the Hub dialogue of
protocol.hub.server on stdin/stdout.

GUIs start the engine as ``damka hub`` with arguments of their own, so protocol/cli.py calls
``run`` before any parsing (the fast path); the server loads only then.
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "hub",
        help="speak the Hub protocol on stdin/stdout (for draughts GUIs and match runners)",
        description="Run as a Hub engine (Scan's protocol, version 2) on stdin/stdout. "
        "GUIs start the engine as `damka hub`; extra `--name=value` arguments are ignored.",
    )
    p.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace | None = None) -> int:
    """The Hub dialogue until ``quit`` or end of input (its arguments are not looked at)."""
    from protocol.hub.server import main  # imported only when it runs

    return main()
