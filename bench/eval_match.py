"""Two of damka's evaluations against each other, in-process: learned (a weights file) or classic.

Run on purpose (never part of the test run):

    python bench/eval_match.py --variant international --games 100 --movetime 0.05 \\
        --openings bench/openings_international.txt --a learned --b classic
    python bench/eval_match.py --variant russian --games 100 --a learned:my.dkw --b classic

An evaluation is ``classic``, ``learned`` (the shipped weights) or ``learned:PATH``. Every
opening is played twice with colours reversed; without ``--openings`` the openings are random
first plies (``--random-plies``, seeded). Games end by the rule set's rules or, after
``--max-moves`` moves by each side, as draws. Prints W/D/L of A, its score and Elo with the
95% interval.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.board import Board  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.search import Engine, Limits  # noqa: E402
from engine.variants import get_variant  # noqa: E402
from protocol.match.openings import read_openings  # noqa: E402
from protocol.match.stats import Record  # noqa: E402


def make_engine(variant, spec: str) -> Engine:
    kind, _, path = spec.partition(":")
    if kind == "classic":
        return Engine(variant, hash_mb=32, evaluation="classic")
    if kind == "learned":
        return Engine(variant, hash_mb=32, evaluation="learned", weights=path or None)
    raise SystemExit(f"unknown evaluation {spec!r} (classic, learned or learned:PATH)")


def random_openings(variant, count: int, plies: int, seed: int) -> list[list]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < count:
        board = Board(variant)
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.legal_moves and board.fen() not in seen:
            seen.add(board.fen())
            out.append(list(board.move_stack))
    return out


def play(variant, opening_moves, white: Engine, black: Engine, movetime: float,
         max_moves: int) -> bool | None:
    """The winner (True White, False Black) or None for a draw."""
    game = Game(variant)
    for move in opening_moves:
        game.push(move)
    for engine in (white, black):
        engine.clear()
    limits = Limits(movetime=movetime)
    while game.outcome() is None and game.ply < 2 * max_moves + len(opening_moves):
        engine = white if game.board.white_to_move else black
        game.push(engine.search(game.board, limits).best_move)
    outcome = game.outcome()
    return None if outcome is None else outcome.winner


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="international")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--movetime", type=float, default=0.05)
    parser.add_argument("--openings")
    parser.add_argument("--random-plies", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-moves", type=int, default=150)
    parser.add_argument("--a", default="learned")
    parser.add_argument("--b", default="classic")
    args = parser.parse_args(argv)
    variant = get_variant(args.variant)
    pairs = (args.games + 1) // 2
    if args.openings:
        openings = [list(o.moves) for o in read_openings(args.openings, variant)][:pairs]
    else:
        openings = random_openings(variant, pairs, args.random_plies, args.seed)
    a, b = make_engine(variant, args.a), make_engine(variant, args.b)
    record = Record()
    for n in range(args.games):
        opening = openings[(n // 2) % len(openings)]
        a_white = n % 2 == 0
        winner = play(variant, opening, a if a_white else b, b if a_white else a,
                      args.movetime, args.max_moves)
        if winner is None:
            record = record + Record(draws=1)
        elif winner == a_white:
            record = record + Record(wins=1)
        else:
            record = record + Record(losses=1)
        low, high = record.elo_interval()
        print(f"game {n + 1}: A {args.a} {record.wins}-{record.draws}-{record.losses} "
              f"score {record.score:.3f} Elo {record.elo:+.0f} [{low:+.0f}, {high:+.0f}]",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
