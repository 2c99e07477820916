"""``damka spsa`` from parsed arguments: the knobs, the run's directory, the workers that play
the pairs, progress and the summary.

The directory holds ``state.json`` (the settings, the families tuned and where the run stands,
replaced in one step after every round), ``log.csv`` (the knobs' values every
``LOG_EVERY`` iterations: how they drift) and ``tuned.dkw`` (the weights with the knobs' current
values, written every ``WRITE_EVERY`` iterations and when the run stops).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from engine.board import Board
from engine.durable import replace_bytes
from engine.evaluation import layout, params_bytes, read_weights, write_weights
from engine.learned import default_weights_path
from engine.position import Position
from engine.variants import Variant

from .data import DataError, read_tagged_json
from .engine_pool import EnginePool
from .features import weights_info
from .games import Players, SelfPlaySettings, make_engine, play_game
from .openers import game_rng, opening_board
from .run_progress import RunProgress
from .selfplay import lock_directory, settings_differ, settings_record
from .selfplay_main import databases_option, openings_and_plies
from .spsa import (Knob, Pair, Played, Schedule, SpsaState, apply_knobs, families, knobs_for,
                   run_spsa)

__all__ = ["main"]

STATE = "state.json"
LOG = "log.csv"
TUNED = "tuned.dkw"
FORMAT, VERSION = "damka spsa", 1
#: iterations between two lines of log.csv, and between two writes of tuned.dkw
LOG_EVERY = 100
WRITE_EVERY = 1000
#: seconds between two progress lines when stderr is not a terminal (a long run's log)
LOG_EVERY_SECONDS = 60.0


def main(args: argparse.Namespace, variant: Variant) -> int:
    openings, random_plies = openings_and_plies(args, variant)
    weights = weights_info(variant, args.weights)  # a bad file fails here, with its name
    base = read_weights(args.weights or default_weights_path(variant), variant)
    lay = layout(variant)
    names = args.tune or families(lay)
    knobs = knobs_for(lay, base, names)
    if not knobs:
        raise DataError(f"nothing to tune: every weight of {', '.join(names)} is zero in "
                        f"{args.weights or 'the shipped file'}")
    egtb, egtb_record = databases_option(variant, args.egtb)
    settings = SelfPlaySettings(variant, args.nodes, None, random_plies, args.seed,
                                args.max_plies, args.hash, args.weights, egtb)
    record = settings_record(settings, args.openings, weights, egtb_record)
    record.update(iterations=args.iterations, r_end=args.r_end, tune=list(names))
    lock = lock_directory(args.out)
    try:
        out = Path(args.out)
        state = _prepare(out, settings.variant, record, knobs)
        if state is None:
            state = SpsaState([knob.start for knob in knobs])
            _save(out, settings.variant, record, state)
            _log(out, knobs, state, header=True)
        return _run(args, settings, record, base, knobs, openings, state)
    finally:
        os.close(lock)


def _prepare(out: Path, variant: str, record: dict, knobs: Sequence[Knob]) -> SpsaState | None:
    """The directory's state when its settings match (None: a new run)."""
    path = out / STATE
    data = read_tagged_json(path, FORMAT, "a damka spsa run")
    if data is None:
        return None
    if data.get("version") != VERSION or data.get("variant") != variant:
        raise DataError(f"{path}: a run of {data.get('variant')!r} (version "
                        f"{data.get('version')!r}), not {variant!r} (version {VERSION}): use "
                        "another --out")
    try:
        details = settings_differ(dict(data["settings"]), record)
        state = SpsaState(**data["state"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: incomplete ({exc!r})") from None
    if details:
        raise DataError(f"{out} holds a run with other settings ({details}); resume with the "
                        "same settings or use another --out")
    if len(state.theta) != len(knobs):
        raise DataError(f"{path}: {len(state.theta)} knob values for {len(knobs)} knobs")
    return state


def _save(out: Path, variant: str, record: dict, state: SpsaState) -> None:
    data = {"format": FORMAT, "version": VERSION, "variant": variant, "settings": record,
            "state": asdict(state)}
    replace_bytes(out / STATE, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


def _run(args: argparse.Namespace, settings: SelfPlaySettings, record: dict,
         base: np.ndarray, knobs: Sequence[Knob], openings: Sequence, state: SpsaState) -> int:
    out = Path(args.out)
    if state.iteration >= args.iterations:
        _write_tuned(out, settings, base, knobs, state)
        print(f"spsa: {out} has played all {args.iterations} iterations")
        _summary(knobs, state)
        return 0
    workers = min(args.workers or os.cpu_count() or 1, args.iterations - state.iteration)
    schedule = Schedule(args.iterations, np.array([knob.step for knob in knobs]), args.r_end)
    progress = _Progress(args.iterations, state, settings.variant, args.quiet)
    started, first = time.perf_counter(), state.iteration
    interrupted = False
    before = state.iteration  # the iteration the round started from

    def after_round(now: SpsaState) -> None:
        nonlocal before
        _save(out, settings.variant, record, now)
        if now.iteration // LOG_EVERY > before // LOG_EVERY or now.iteration == args.iterations:
            _log(out, knobs, now)
        if now.iteration // WRITE_EVERY > before // WRITE_EVERY:
            _write_tuned(out, settings, base, knobs, now)
        before = now.iteration
        progress(now)

    stored = int(np.flatnonzero(base)[-1]) + 1 if base.any() else 0
    pool = EnginePool(partial(_worker, settings, base[:stored], knobs),
                      partial(_play_pair, settings, openings), workers)
    try:
        run_spsa(state, schedule, settings.seed, workers, lambda pairs: pool.map(pairs),
                 after_round)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        pool.close()
        progress.close()
        _write_tuned(out, settings, base, knobs, state)
    seconds = time.perf_counter() - started
    played = state.iteration - first
    status = progress.report(f"{played} pairs ({2 * played} games) in {seconds:.0f} s, "
                             f"{state.iteration}/{args.iterations} iterations; the plus sides "
                             f"+{state.wins} ={state.draws} -{state.losses}; {out / TUNED} "
                             "written", interrupted)
    _summary(knobs, state)
    return status


class _Worker(NamedTuple):
    """A worker's engines (the plus side plays as ``engine``, the minus side as
    ``opponent``) and what it builds their weights from."""

    players: Players
    base: np.ndarray  #: the start weights up to the last non-zero one
    knobs: Sequence[Knob]

    def params(self, values: np.ndarray | None) -> bytes:
        """The engine's weights with the knobs at ``values`` (None: the start weights)."""
        weights = self.base if values is None else apply_knobs(self.base, self.knobs, values)
        return params_bytes(self.players.engine.variant, weights)


class _Start(NamedTuple):
    """An opening as play_game takes one: a start position and no moves after it."""

    start: Position
    moves: tuple = ()


def _worker(settings: SelfPlaySettings, base: np.ndarray, knobs: Sequence[Knob]) -> _Worker:
    return _Worker(Players(make_engine(settings), make_engine(settings)), base, knobs)


def _play_pair(settings: SelfPlaySettings, openings: Sequence, worker: _Worker,
               pair: Pair) -> Played:
    """Iteration k's two games from one opening, the plus side White in the first: the
    plus side's points in each."""
    k, plus, minus = pair
    engine = worker.players.engine
    if openings:
        opening = openings[k % len(openings)]
    else:  # K random plies, checked by the start weights' search (whatever theta is)
        engine.set_weights(worker.params(None))
        board = opening_board(settings.rules, Board(settings.rules).position, (),
                              settings.random_plies, game_rng(settings.seed, k), engine)
        opening = _Start(board.position)
    engine.set_weights(worker.params(plus))
    worker.players.opponent.set_weights(worker.params(minus))  # type: ignore[union-attr]
    fixed = replace(settings, random_plies=0)
    points = []
    for game_id in (2 * k, 2 * k + 1):  # Players: the opponent has Black in even games
        winner = play_game(fixed, worker.players, game_id, (opening,)).game["game_winner"]
        plus_white = game_id % 2 == 0
        points.append(0.5 if winner == 0 else float((winner == 1) == plus_white))
    return k, points


def _log(out: Path, knobs: Sequence[Knob], state: SpsaState, header: bool = False) -> None:
    """A line of log.csv: iteration, the plus sides' games, every knob's value."""
    with open(out / LOG, "w" if header else "a", encoding="utf-8") as f:
        if header:
            f.write(",".join(["iteration", "wins", "draws", "losses",
                              *(knob.name for knob in knobs)]) + "\n")
        f.write(",".join([str(state.iteration), str(state.wins), str(state.draws),
                          str(state.losses), *(f"{v:.4f}" for v in state.theta)]) + "\n")


def _write_tuned(out: Path, settings: SelfPlaySettings, base: np.ndarray,
                 knobs: Sequence[Knob], state: SpsaState) -> None:
    write_weights(out / TUNED, settings.rules, apply_knobs(base, knobs, np.array(state.theta)))


def _summary(knobs: Sequence[Knob], state: SpsaState) -> None:
    """Each knob's start and current value (factors as factors, weights in hundredths)."""
    width = max(len(knob.name) for knob in knobs)
    print(f"  {'knob':<{width}}  {'start':>9}  {'now':>9}  {'step':>7}")
    for knob, value in zip(knobs, state.theta):
        print(f"  {knob.name:<{width}}  {knob.start:9.3f}  {value:9.3f}  {knob.step:7.3f}")


class _Progress(RunProgress):
    """The run's progress in pairs, with the plus sides' games."""

    def __init__(self, total: int, state: SpsaState, label: str, quiet: bool):
        super().__init__("spsa", label, total, state.iteration, quiet, LOG_EVERY_SECONDS,
                         "pair")

    def __call__(self, state: SpsaState) -> None:
        games = f"+{state.wins} ={state.draws} -{state.losses}"
        self.show(state.iteration, games, f"{self.rate(state.iteration - self.initial):.2f} "
                  f"pairs/s, the plus sides {games}")
