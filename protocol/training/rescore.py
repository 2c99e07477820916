"""``damka rescore``: a sample of a self-play directory's quiet positions, each with the score
of a much deeper search, written as a self-play directory of its own (data.py's format).

Why: a game's result is a noisy label (a drawn game, or one decided by where a random move
fell, says little of the positions on its way), and the 16,000-node score stored beside it is
shallow. A fit with ``damka tune DST --lambda 1`` learns what the deeper search sees instead.

A position is taken when it is quiet (no capture for either side) and a hash of its game id,
its ply and ``--seed`` falls in the first ``1/--every`` of the range: a sample spread over
every game and stage, the same on every run. Each is searched from a cleared table with only
its position (no move history, fresh draw counters), so its score depends on the settings
alone, on any number of workers. The output holds the source's per-game arrays and, for the
sampled positions, every position field of the source with ``score`` replaced. Games are
covered in id order, a few thousand positions a chunk; ``meta.json``'s ``games_done`` says
how many of the source's games are covered, and a rerun goes on after them (and covers the
games the source has gained since). Ctrl-C or SIGTERM keep every whole game scored.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from engine.board import Board
from engine.position import Position
from engine.search import Engine, Limits
from engine.variants import Variant

from .data import (GAME_FIELDS, POSITION_FIELDS, SCORE_CLIP, Meta, read_listed_chunk,
                   require_meta, write_arrays, write_meta)
from .dataset import data_variant
from .engine_pool import EnginePool
from .games import make_engine

__all__ = ["RescoreSettings", "Summary", "sample_mask", "settings_record", "run_rescore",
           "score_positions", "source_variant", "same_directory"]

#: a chunk is written once this many sampled positions are scored (whole games)
CHUNK_POSITIONS = 2000
#: positions a worker scores per task
BATCH = 8

Progress = Callable[[int, int], None]  # (source games covered, positions scored) this run


@dataclass(frozen=True)
class RescoreSettings:
    """What the new scores depend on."""

    rules: Variant
    nodes: int
    every: int
    seed: int
    hash_mb: int
    weights: str | None
    egtb: str | None = None


@dataclass(frozen=True)
class Summary:
    games: int  #: source games covered by this run
    positions: int  #: positions scored by this run
    seconds: float
    games_done: int  #: source games covered in all
    positions_done: int  #: positions in the output in all
    interrupted: bool

    @property
    def positions_per_second(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic): well-spread bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def sample_mask(arrays: dict[str, np.ndarray], every: int, seed: int) -> np.ndarray:
    """The positions of a chunk that are rescored: quiet for both sides, and one in ``every``
    by a hash of (game, ply, seed), so that a resumed run takes the same ones."""
    keep = arrays["quiet"] & ~arrays["opponent_capture"]
    if every > 1:
        with np.errstate(over="ignore"):
            key = (arrays["game"].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                   + arrays["ply"].astype(np.uint64)
                   + np.uint64(seed % 2**64) * np.uint64(0xD1B54A32D192ED03))
            keep &= _mix(key) % np.uint64(every) == 0
    return keep


def settings_record(settings: RescoreSettings, source: Meta, source_dir: str,
                    weights: dict[str, Any], egtb: dict[str, Any] | None) -> dict[str, Any]:
    """What meta.json keeps: the search's settings and the source (its path, and a hash of
    its settings that a resumed run must match, wherever the source has moved)."""
    text = json.dumps(source.settings, sort_keys=True)
    return {
        "rescore": {"nodes": settings.nodes, "every": settings.every, "seed": settings.seed,
                    "hash_mb": settings.hash_mb},
        "weights": weights,
        "egtb": egtb,
        "source": {"file": str(source_dir),
                   "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                   "settings": source.settings},
    }


def score_positions(engine: Engine, variant: Variant, nodes: int,
                    rows: Sequence[tuple[int, int, int, bool]]) -> list[int]:
    """The search score of each (white, black, kings, white_to_move), from a cleared table,
    clipped to +-SCORE_CLIP."""
    scores = []
    for white, black, kings, to_move in rows:
        engine.clear()
        found = engine.search(Board(variant, Position(white, black, kings, to_move)),
                              Limits(nodes=nodes))
        scores.append(max(-SCORE_CLIP, min(SCORE_CLIP, found.score)))
    return scores


def _score(settings: RescoreSettings, engine: Engine,
           rows: list[tuple[int, int, int, bool]]) -> list[int]:
    return score_positions(engine, settings.rules, settings.nodes, rows)


def _slices(game: np.ndarray, game_ids: np.ndarray, size: int) -> Iterator[tuple[int, int]]:
    """Runs of whole games [first, last) (indices into ``game_ids``) of about ``size``
    positions each; ``game`` is the game id of each position, in order."""
    ends = np.searchsorted(game, game_ids, side="right")  # positions up to each game's end
    first, covered = 0, 0
    for g in range(len(game_ids)):
        if ends[g] - covered >= size or g == len(game_ids) - 1:
            yield first, g + 1
            first, covered = g + 1, int(ends[g])


def _write(out: str, meta: Meta, arrays: dict[str, np.ndarray], positions: np.ndarray,
           scores: list[int], games: np.ndarray) -> None:
    """Write the source ``games`` (row indices) with the scored ``positions`` (row indices,
    in order) as the next chunk, and then meta.json."""
    written = {name: arrays[name][positions] for name in POSITION_FIELDS}
    written["score"] = np.asarray(scores, dtype=np.int16)
    written.update({name: arrays[name][games] for name in GAME_FIELDS})
    entry = write_arrays(out, len(meta.chunks), written)
    meta.chunks.append(entry)
    meta.games_done = int(arrays["game_id"][games[-1]]) + 1
    meta.positions += entry["positions"]
    write_meta(out, meta)


def run_rescore(settings: RescoreSettings, source_dir: str, source: Meta, out: str,
                meta: Meta, workers: int, games: int | None = None,
                progress: Progress | None = None) -> Summary:
    """Cover the games ``meta.games_done`` .. of the source (``source``: its meta; ``games``:
    up to that many) into ``out``, writing a chunk every CHUNK_POSITIONS positions (and what
    is whole when interrupted)."""
    limit = source.games_done if games is None else min(games, source.games_done)
    first_done, positions_before = meta.games_done, meta.positions
    scored_now = 0
    started = time.perf_counter()
    interrupted = False
    scorer = (EnginePool(partial(make_engine, settings), partial(_score, settings), workers)
              if meta.games_done < limit else None)
    try:
        for entry in source.chunks:
            chunk_end = entry["first_game"] + entry["games"]
            if chunk_end <= meta.games_done:
                continue
            if meta.games_done >= limit:
                break
            arrays = read_listed_chunk(source_dir, entry)
            game_ids = arrays["game_id"]
            take = (game_ids >= meta.games_done) & (game_ids < limit)
            ids = game_ids[take]
            game_rows = np.flatnonzero(take)
            mask = sample_mask(arrays, settings.every, settings.seed) \
                & (arrays["game"] >= meta.games_done) & (arrays["game"] < limit)
            chosen = np.flatnonzero(mask)
            for a, b in _slices(arrays["game"][chosen], ids, CHUNK_POSITIONS):
                in_slice = chosen[(arrays["game"][chosen] >= ids[a])
                                  & (arrays["game"][chosen] <= ids[b - 1])]
                pos_games = arrays["game"][in_slice]
                rows = [(int(arrays["white"][i]), int(arrays["black"][i]),
                         int(arrays["kings"][i]), bool(arrays["white_to_move"][i]))
                        for i in in_slice]
                batches = [rows[k:k + BATCH] for k in range(0, len(rows), BATCH)]
                scores: list[int] = []
                assert scorer is not None  # made whenever a game is left to cover
                try:
                    for part in scorer.map(batches):
                        scores.extend(part)
                        scored_now += len(part)
                        if progress is not None:
                            progress(int(pos_games[len(scores) - 1]) - first_done, scored_now)
                except KeyboardInterrupt:
                    interrupted = True
                    # keep the games whose every sampled position is scored
                    b = a + _whole_games(pos_games, len(scores), ids[a:b])
                    keep = len(scores) if b == a else int(
                        np.searchsorted(pos_games, ids[b - 1], side="right"))
                    in_slice, scores = in_slice[:keep], scores[:keep]
                if b > a:
                    _write(out, meta, arrays, in_slice, scores, game_rows[a:b])
                    if progress is not None:
                        progress(meta.games_done - first_done, scored_now)
                if interrupted:
                    raise KeyboardInterrupt
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if scorer is not None:
            scorer.close()
    return Summary(meta.games_done - first_done, meta.positions - positions_before,
                   time.perf_counter() - started, meta.games_done, meta.positions, interrupted)


def _whole_games(game: np.ndarray, scored: int, ids: np.ndarray) -> int:
    """How many of the games ``ids`` (in order) have every one of their sampled positions
    (``game``: the game id of each, in order) among the first ``scored``."""
    if scored >= len(game):
        return len(ids)
    pending = game[scored]  # the first game with a position not scored
    return int(np.searchsorted(ids, pending, side="left"))


def source_variant(source_dir: str) -> tuple[Meta, Variant]:
    """The source's meta and its rule set."""
    meta = require_meta(source_dir)
    return meta, data_variant(meta)


def same_directory(a: str, b: str) -> bool:
    return Path(a).resolve() == Path(b).resolve() or (
        Path(b).exists() and Path(a).exists() and os.path.samefile(a, b))
