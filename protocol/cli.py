"""The ``damka`` command line: the top-level parser, ``--version``, and the commands.

Every command has the same shape: a module with ``add_parser(subparsers)``, which declares the
command and its arguments and sets ``run`` as its default, and ``run(args) -> int``, which
does it and returns the exit status. The engine-level commands live beside this file
(``perft_command``, ``analyse_command``, ``bench_command``, ``egtb_command``), the front ends'
in their packages (``hub.command``, ``dxp.command``, ``play.command``, ``match.command``,
``training.selfplay_command``, ``training.tune_command``). Adding a command means writing one
more such module and listing it in ``_command_modules`` below.

A command module imports only what its parser needs (protocol.args for the argument checkers
and the options several commands share, a package's light ``defaults`` module for the values
its help shows); everything else loads inside ``run``, so that ``damka --help`` and ``damka
hub`` start fast. ``damka hub`` is not parsed at all (GUIs add arguments of their own): it
goes straight to its ``run``.

Bad input never shows a traceback: it gives one line ``damka: error: ...`` on stderr and exit
status 2 (``UsageError`` or ``ValueError`` from a command).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Sequence

from engine import BACKEND, __version__

from protocol.args import UsageError

__all__ = ["main", "build_parser", "UsageError"]

PROG = "damka"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not usage + error, and no SystemExit here
        raise UsageError(message)


def _command_modules() -> list:
    """The command modules, in the order ``damka --help`` lists them (imported here, not at
    the top, so that ``damka hub`` loads none of them but its own)."""
    from protocol import analyse_command, bench_command, egtb_command, perft_command
    from protocol.dxp import command as dxp_command
    from protocol.hub import command as hub_command
    from protocol.match import command as match_command
    from protocol.play import command as play_command
    from protocol.training import (rescore_command, selfplay_command, spsa_command,
                                   tune_command)

    return [perft_command, analyse_command, bench_command, hub_command, dxp_command,
            play_command, match_command, selfplay_command, rescore_command, tune_command,
            spsa_command, egtb_command]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="damka: a draughts engine (international 10x10 and the 8x8 rule sets).",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} (backend: {BACKEND}; Python {sys.version.split()[0]})",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in _command_modules():
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hub"] and not {"-h", "--help"} & set(argv[1:]):
        # clients add their own --name=value arguments: take no notice (but answer --help)
        from protocol.hub.command import run as run_hub

        return run_hub(argparse.Namespace())
    parser = build_parser()
    before = _interrupt_on_termination()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return args.run(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UsageError, ValueError) as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # a hash table or database the machine cannot hold
        print(f"{PROG}: error: out of memory: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        signum = _received or signal.SIGINT
        print(f"{PROG}: {'interrupted' if signum == signal.SIGINT else 'terminated'}",
              file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:
        # the reader went away (``damka perft ... | head``): silence the final flush too
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:  # a folder that cannot be made, a full disk: what and where
        where = f": {exc.filename}" if exc.filename else ""
        print(f"{PROG}: error: {exc.strerror or _one_line(exc)}{where}", file=sys.stderr)
        return 1
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


#: the termination signal that stopped a command (None: Ctrl-C, or none)
_received: "int | None" = None
_TERMINATIONS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame) -> None:
    global _received
    _received = signum
    raise KeyboardInterrupt


def _interrupt_on_termination() -> dict:
    """SIGTERM and SIGHUP (kill, a closed terminal, a batch system's stop) end a command as
    Ctrl-C does: the games finished are written, temporary files removed, "rerun to go on"
    said. Their handlers before are returned, to be put back (tests call main in-process);
    processes forked meanwhile (self-play and database workers) get the default back."""
    global _received
    _received = None
    before = {}
    try:
        for signum in _TERMINATIONS:
            before[signum] = signal.signal(signum, _interrupt)
    except ValueError:  # not the main thread: signals are not ours to take
        pass
    return before


def _default_in_child() -> None:
    for signum in _TERMINATIONS:
        if signal.getsignal(signum) is _interrupt:
            signal.signal(signum, signal.SIG_DFL)  # a worker dies as before; its parent reports


os.register_at_fork(after_in_child=_default_in_child)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
