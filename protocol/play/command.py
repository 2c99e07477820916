"""``damka play``: its arguments and ``run``, which starts the web server of
protocol.play.server. The web code and its library (the ``play`` extra) load only when the
command runs, so that building the ``damka`` parser never needs them."""

from __future__ import annotations

import argparse

from protocol import args as arg
from protocol.play.defaults import DEFAULT_HOST, DEFAULT_PORT

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "play",
        help="play in the browser against the computer or a friend (a local web page)",
        description="Start a local web server with a page to play any rule set against the "
        "computer (easy, medium, hard) or a friend on the same screen; print its address and "
        "open it in the browser when there is one. Needs the 'play' extra: "
        "pip install 'damka[play]'.",
    )
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=arg.port, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}: a free port)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:  # the web code and its library load only for this command
        from protocol.play.server import serve
    except ImportError as exc:
        raise arg.UsageError(f"{exc}; install the web extra: pip install 'damka[play]'") from None
    return serve(args.host, args.port, browser=not args.no_browser)
