"""The ``damka egtb`` command: ``build``, ``probe`` and ``verify`` endgame databases.

The work is in ``engine.egtb``; this module declares the arguments (``add_parser``: one
sub-parser per action), runs the action asked for (``run``), shows progress on stderr and
prints results. Bad input raises ValueError (one line, exit status 2). ``load_tables`` also
serves ``damka analyse --egtb``.
"""

from __future__ import annotations

import argparse
import os

from engine.variants import Variant, get_variant, variant_names

from protocol import args as arg
from protocol.progress import advance, on_terminal, terminal_bar

__all__ = ["add_parser", "run", "load_tables"]


def add_parser(subparsers) -> None:
    from engine.egtb.material import DEFAULT_WORKERS, MAX_PIECES

    p = subparsers.add_parser(
        "egtb",
        help="build, probe and verify endgame databases",
        description="Endgame databases: the game-theoretic value (win, draw, loss for the side "
                    "to move, and plies to the next capture or crowning) of every position with "
                    "up to N pieces. Files go to a per-user data directory unless --dir says "
                    "otherwise (see docs/egtb.md).",
    )
    sub = p.add_subparsers(dest="egtb_command", metavar="ACTION", title="actions")
    sub.required = True
    p.set_defaults(run=run)

    def common(q: argparse.ArgumentParser, variant_required: bool = True) -> None:
        q.add_argument("--variant", required=variant_required,
                       help=f"rule set or alias ({', '.join(variant_names())})")
        q.add_argument("--dir", default=None,
                       help="database directory (default $DAMKA_EGTB or the per-user data "
                            "directory, e.g. ~/.local/share/damka/egtb)")

    b = sub.add_parser("build", help="build every slice up to N pieces (resumable)",
                       description="Build the databases of one rule set up to N pieces. Slices "
                                   "already on disk are checked and reused, so an interrupted "
                                   "build goes on where it stopped.")
    common(b)
    b.add_argument("--pieces", type=arg.bounded(int, "pieces", 2, MAX_PIECES), required=True,
                   help=f"most pieces on the board, 2..{MAX_PIECES}")
    b.add_argument("--workers", type=arg.bounded(int, "workers", 1, 256),
                   default=DEFAULT_WORKERS,
                   help=f"threads sharing the work of each slice (default {DEFAULT_WORKERS})")
    b.set_defaults(egtb_action=_run_build)

    q = sub.add_parser("probe", help="print the database value of a position",
                       description="Print the value of a position and the moves that keep it.")
    common(q)
    q.add_argument("--fen", required=True, help="the position")
    q.set_defaults(egtb_action=_run_probe)

    v = sub.add_parser("verify", help="check every stored position against its successors",
                       description="Check every stored value against the best of its "
                                   "successors (all rule sets found, or --variant).")
    common(v, variant_required=False)
    v.add_argument("--workers", type=arg.bounded(int, "workers", 1, 256),
                   default=DEFAULT_WORKERS,
                   help=f"slices checked at once (default {DEFAULT_WORKERS})")
    v.set_defaults(egtb_action=_run_verify)


def run(args: argparse.Namespace) -> int:
    """The action asked for (build, probe or verify)."""
    return args.egtb_action(args)


def _human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def load_tables(variant: Variant, directory: "str | os.PathLike[str]") -> None:
    """Decompress the databases of ``directory`` for the search before it starts, with a
    progress bar on a terminal's stderr (a 6-piece 8x8 set takes about 20 s). Nothing
    happens when there are none: the engine then says what is missing."""
    from engine.egtb import shared_tablebase

    tables = shared_tablebase(variant, directory)
    if tables is None:
        return
    if not on_terminal():
        tables.memory_solver()
        return
    with terminal_bar(None, "loading endgame databases", unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
        tables.memory_solver(on_progress=lambda done, total: advance(bar, done, total))


def _run_build(args: argparse.Namespace) -> int:
    from engine.egtb import build
    from engine.egtb.paths import variant_dir

    variant = get_variant(args.variant)
    folder = variant_dir(args.dir, variant.name)
    print(f"egtb build {variant.name} up to {args.pieces} pieces, {args.workers} worker(s), "
          f"into {folder}", flush=True)
    tty = on_terminal()
    with terminal_bar(None, "slices", unit=" slices") as bar:
        def show(p) -> None:
            bar.set_postfix_str(f"{p.examined:,} positions examined, {p.rate:,.0f}/s, "
                                f"{' '.join(p.current)}", refresh=False)
            advance(bar, p.slices_done, p.slices_total)

        result = build(variant, args.pieces, args.dir, args.workers, on_progress=show,
                       interval=0.5 if tty else 5.0)
    size = sum(f.stat().st_size for f in folder.glob("*.egtb"))
    print(f"done: {result.slices_done} slice pairs ({result.loaded} already built), "
          f"{result.entries:,} new entries, {result.examined:,} positions examined in "
          f"{result.seconds:.1f} s ({result.rate:,.0f}/s); {_human_bytes(size)} on disk")
    return 0


def _run_probe(args: argparse.Namespace) -> int:
    from engine.board import Board
    from engine.egtb import Tablebase

    variant = get_variant(args.variant)
    board = Board(variant, args.fen)
    tb = Tablebase(variant, args.dir)
    if not len(tb):
        raise ValueError(f"no endgame databases for {variant.name} in {tb.folder}; "
                         f"build them with: damka egtb build --variant {variant.name} --pieces N")
    value = tb.probe(board.position)
    if value is None:
        raise ValueError(f"the position is not in the databases found in {tb.folder} "
                         f"(complete up to {tb.pieces} pieces)")
    print(f"{board.fen(compact=True)}: {value}")
    if board.position.white | board.position.black and value.plies:
        moves = tb.best_moves(board)
        if moves:
            print("keeps it: " + ", ".join(f"{board.pdn(m)} ({r.plies})" for m, r in moves))
    return 0


def _run_verify(args: argparse.Namespace) -> int:
    from engine.egtb import EgtbError
    from engine.egtb.verify import verify
    from engine.egtb.paths import variant_dir
    from engine.variants import VARIANTS

    if args.variant is not None:
        variants = [get_variant(args.variant)]
    else:
        variants = [v for v in VARIANTS if variant_dir(args.dir, v.name).is_dir()]
        if not variants:
            raise EgtbError(f"no endgame databases in {variant_dir(args.dir, '')}")
    failures = 0
    for variant in variants:
        def show(c) -> None:
            state = "ok" if c.bad == 0 else f"{c.bad} WRONG (first at index {c.first_bad})"
            print(f"{variant.name:<14} {c.material.name:<12} {c.entries:>12,} entries "
                  f"{c.seconds:>7.2f} s  {state}", flush=True)

        checks = verify(variant, args.dir, on_slice=show, workers=args.workers)
        failures += sum(c.bad for c in checks)
    print("verify: all values agree with their successors" if not failures
          else f"verify: {failures} values disagree")
    return 0 if not failures else 1
