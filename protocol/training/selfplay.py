"""``damka selfplay``: play games on every core and write them as training data (see data.py).

Games are handed out by id to worker processes (one engine each) and come back in any order;
the coordinator alone writes, and only whole runs of consecutive games, so the chunks are in
game-id order and ``meta.json``'s ``games_done`` says where a rerun goes on. A rerun with the
same ``--out`` continues after the last game written; one with other settings is refused.
Ctrl-C stops the workers and keeps every finished game that follows the written ones.
With ``cluster`` the workers are slots on a Ray cluster (training/cluster.py); the writing is
the same.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from .data import (DataError, GameRecord, Meta, file_sha256, read_meta, write_chunk,
                   write_meta)
from .engine_pool import EnginePool
from .games import Players, SelfPlaySettings, make_players, play_game

__all__ = ["Summary", "run_selfplay", "settings_record", "prepare_directory", "lock_directory",
           "settings_differ"]

#: a chunk is written once this many positions are waiting (or FLUSH_SECONDS have passed)
CHUNK_POSITIONS = 100_000
FLUSH_SECONDS = 60.0

Progress = Callable[[int, int], None]  # (games finished in this run, positions) after each game


@dataclass(frozen=True)
class Summary:
    """What one run did."""

    games: int  #: games written by this run
    positions: int
    seconds: float
    games_done: int  #: games in the directory now
    interrupted: bool

    @property
    def positions_per_second(self) -> float:
        return self.positions / self.seconds if self.seconds > 0 else 0.0


def settings_record(settings: SelfPlaySettings, openings_file: str | None,
                    weights: dict[str, Any], egtb: dict[str, Any] | None = None,
                    opponent: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings as meta.json keeps them: what a resumed run must match. Databases are
    kept as what they hold (``egtb``: the complete piece count and the slices; the same
    tables give the same games wherever they lie); without them the key is left out, as in
    data written before ``--egtb``; so are ``deviate`` when it is 0 and ``opponent`` (what
    the second weights file is, as ``weights``) when there is none."""
    record = asdict(settings)
    del record["rules"], record["weights"], record["egtb"], record["opponent"]
    if not settings.deviate:  # (as data written before --deviate keeps it)
        del record["deviate"]
    if settings.opponent is not None:
        record["opponent"] = opponent
    record["openings"] = None if openings_file is None else {
        "file": str(openings_file), "sha256": file_sha256(openings_file)}
    record["weights"] = weights
    if settings.egtb is not None:
        record["egtb"] = egtb
    return record


#: the file a run holds locked while it writes a directory
LOCK = ".selfplay.lock"


def lock_directory(out: "str | os.PathLike[str]") -> int:
    """Lock ``out`` (made if need be) for this run; the descriptor to close at the end.
    DataError while another run writes there: two runs at once interleave their chunks and
    the directory's meta.json, and lose games without a word."""
    directory = Path(out)
    if directory.exists() and not directory.is_dir():
        raise DataError(f"{out} exists and is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DataError(f"{out}: {exc.strerror or exc}") from None
    try:
        import fcntl
    except ImportError:  # (no fcntl: not POSIX; the run goes on unlocked)
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise DataError(f"{out} is being written by another damka selfplay, rescore or spsa: "
                        "let it finish, or stop it (the same command goes on), or use another "
                        "--out") from None
    return fd


def prepare_directory(out: "str | os.PathLike[str]", variant: str,
                      settings: dict[str, Any]) -> Meta:
    """The directory's meta: a new one, or the existing one when its settings match."""
    directory = Path(out)  # (made by lock_directory, which refuses a file there)
    meta = read_meta(directory) if directory.exists() else None
    if meta is None:
        if directory.exists() and any(directory.glob("chunk-*.npz")):
            raise DataError(f"{out}: chunks without meta.json; use an empty directory")
        directory.mkdir(parents=True, exist_ok=True)
        meta = Meta(variant, settings)
        write_meta(directory, meta)
        return meta
    if meta.variant != variant:
        raise DataError(f"{out} holds {meta.variant} games, not {variant}: use another --out")
    details = settings_differ(meta.settings, settings)
    if details:
        raise DataError(f"{out} was written with other settings ({details}); "
                        "resume with the same settings or use another --out")
    return meta


def settings_differ(there: dict[str, Any], now: dict[str, Any]) -> str:
    """How a run's settings differ from those its directory was written with ("" when they
    agree; files are compared by content): "key: X there, Y now, ..."."""
    differ = [key for key in sorted(set(now) | set(there))
              if _comparable(now.get(key)) != _comparable(there.get(key))]
    return ", ".join(f"{key}: {_shown(there.get(key))} there, {_shown(now.get(key))} now"
                     for key in differ)


def _comparable(value: Any) -> Any:
    """Openings and weights are compared by content, not by the path they were given as."""
    if isinstance(value, dict) and "sha256" in value:
        return {key: item for key, item in value.items() if key != "file"}
    return value


def _shown(value: Any) -> str:
    """A setting as an error message names it (a file with the start of its hash)."""
    if isinstance(value, dict) and "sha256" in value:
        if value["sha256"] is None:
            return str(value.get("evaluation"))
        return f"{value['file']} (sha256 {value['sha256'][:12]})"
    return repr(value)


class _Writer:
    """Collects finished games, writes consecutive runs of them as chunks, keeps meta.json."""

    def __init__(self, directory: Path, meta: Meta):
        self.directory = directory
        self.meta = meta
        self.waiting: dict[int, GameRecord] = {}
        self.ready: list[GameRecord] = []
        self.ready_positions = 0
        self.last_flush = time.monotonic()

    def add(self, record: GameRecord) -> None:
        self.waiting[record.game_id] = record
        next_id = self.meta.games_done + len(self.ready)
        while next_id in self.waiting:
            game = self.waiting.pop(next_id)
            self.ready.append(game)
            self.ready_positions += len(game)
            next_id += 1
        if self.ready_positions >= CHUNK_POSITIONS or (
                self.ready and time.monotonic() - self.last_flush >= FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if self.ready:
            entry = write_chunk(self.directory, len(self.meta.chunks), self.ready)
            self.meta.chunks.append(entry)
            self.meta.games_done += entry["games"]
            self.meta.positions += entry["positions"]
            write_meta(self.directory, self.meta)
        self.ready, self.ready_positions = [], 0
        self.last_flush = time.monotonic()


def run_selfplay(settings: SelfPlaySettings, out: "str | os.PathLike[str]", games: int,
                 workers: int | None, meta: Meta, openings: Sequence = (),
                 progress: Progress | None = None, cluster: str | None = None) -> Summary:
    """Play games ``meta.games_done .. games-1`` with ``workers`` processes into ``out``;
    on a Ray ``cluster``, with ``workers`` per machine (None: one per core)."""
    writer = _Writer(Path(out), meta)
    first, before = meta.games_done, meta.positions
    ids = range(first, games)
    played = positions = 0
    started = time.perf_counter()
    interrupted = False
    pool = None
    if cluster is not None:
        from .cluster import on_cluster

        results = on_cluster(settings, ids, openings, cluster, workers)
    else:
        pool = EnginePool(partial(make_players, settings), partial(_play, settings, openings),
                          workers or 1)
        results = pool.map(ids, ordered=False)
    try:
        for record in results:
            writer.add(record)
            played += 1
            positions += len(record)
            if progress is not None:
                progress(played, positions)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        results.close()  # stops the workers
        if pool is not None:
            pool.close()
        writer.flush()
    written = writer.meta.games_done - first
    return Summary(written, writer.meta.positions - before, time.perf_counter() - started,
                   writer.meta.games_done, interrupted)


def _play(settings: SelfPlaySettings, openings: Sequence, players: Players,
          game_id: int) -> GameRecord:
    return play_game(settings, players, game_id, openings)
