"""A damka engine with some of the search's rules switched off, for measuring what each rule
gives (docs/search.md).

    python bench/search_variant.py --off prune,lmr hub      # the Hub engine without them
    python bench/search_variant.py --list

Used as a match engine: ``--engine "cmd='python bench/search_variant.py --off prune hub'"``.
Everything after the options is a ``damka`` command line. The rules are the core's
(``_fast.search.SEARCH_FEATURES``); all on is the engine's own search.
"""

from __future__ import annotations

import argparse
import sys


#: the core's settings beside the rules, as _set_search_features names them
_SETTINGS = ("prune_margin", "prune_depth", "prune_percent", "lmr_mode", "extend_depth",
             "singular_depth", "singular_margin", "qs_promote", "root_lmr",
             "history_mode", "extend_mode", "eval_grain")


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose the search's rules (this script's and bench/time_to_depth.py's)."""
    parser.add_argument("--off", default="", help="rules to switch off, comma-separated")
    parser.add_argument("--prune-margin", type=int, help="hundredths of a man per ply")
    parser.add_argument("--prune-depth", type=int, help="the least depth pruned")
    parser.add_argument("--prune-percent", type=int, help="verification depth, percent")
    parser.add_argument("--lmr-mode", type=int,
                        help="0: Scan 2.0's steps, 1: the log table, 2: Scan 3.1's steps, "
                             "3: Scan 3.1's rule whole (from depth 2, into quiescence, only "
                             "the hash move exempt; the default)")
    parser.add_argument("--extend-depth", type=int,
                        help="the least depth at which a single legal move is extended")
    parser.add_argument("--singular-depth", type=int,
                        help="the least depth of a PV node whose hash move may be found "
                             "singular and searched a ply deeper (0: never, the default)")
    parser.add_argument("--singular-margin", type=int,
                        help="percent of a man below the hash score every other move must "
                             "stay for the hash move to be singular (default 20)")
    parser.add_argument("--qs-promote", type=int, choices=(0, 1),
                        help="1: a quiet quiescence node that does not stand pat tries its "
                             "men's crowning steps (Scan 2.0's), 0: not (the default)")
    parser.add_argument("--root-lmr", type=int,
                        help="the main thread's root searches its quiet moves a ply shallower "
                             "from the N-th on, as PV nodes below it do from the 4th (0: "
                             "never, the default)")
    parser.add_argument("--extend-mode", type=int, choices=range(8),
                        help="bits limiting the single-move extension: 1: none inside a "
                             "pruning verification, 2: none right below an extended node, "
                             "4: at most half the line's nominal depth (0: none, the default)")
    parser.add_argument("--history-mode", type=int, choices=(0, 1),
                        help="0: killers and a history raised by depth squared on cut-offs "
                             "(the default); 1: Scan's, no killers and a from-to history that "
                             "every node's best move moves toward 1, the moves tried before it "
                             "toward 0")
    parser.add_argument("--eval-grain", type=int,
                        help="round the static evaluation to a multiple of N thousandths of "
                             "a man (0: as it is, the default)")


def apply_rule_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Set the core's rules from the options of ``add_rule_options`` for the searches to come
    (a rule that does not exist is the parser's error)."""
    from engine import _core

    search = _core.compiled("search")
    names = search.SEARCH_FEATURES
    settings = search._search_features()
    for name in filter(None, args.off.split(",")):
        if name not in names:
            parser.error(f"no rule {name!r}; the rules: {', '.join(names)}")
        settings["features"] &= ~names[name]
    for key in _SETTINGS:
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    search._set_search_features(**settings)


def main(argv: list[str] | None = None) -> int:
    from engine import _core

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_rule_options(parser)
    parser.add_argument("--list", action="store_true", help="list the rules and exit")
    parser.add_argument("damka", nargs=argparse.REMAINDER, help="the damka command line")
    args = parser.parse_args(argv)
    if args.list:
        for name in _core.compiled("search").SEARCH_FEATURES:
            print(name)
        return 0
    apply_rule_options(parser, args)
    from protocol.cli import main as damka

    return damka(args.damka)


if __name__ == "__main__":
    sys.exit(main())
