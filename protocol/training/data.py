"""The self-play data format: a directory of numpy ``.npz`` chunks and a ``meta.json``.

``damka selfplay --out DIR`` writes, and ``damka tune DIR`` reads::

    DIR/meta.json          what the data is (see below)
    DIR/chunk-00000.npz    games 0 .. g-1, in game-id order
    DIR/chunk-00001.npz    games g .. , and so on

Each chunk (``numpy.savez_compressed``, no pickled objects) holds whole games with
consecutive ids, and these arrays, one entry per **position** (every position in which the
engine chose a move, in game order; the opening's forced plies are not recorded):

=====================  ========  ===============================================================
``white``              uint64    White's pieces: bit ``s`` is internal square ``s``
                                 (the ``engine.position.Position`` layout)
``black``              uint64    Black's pieces
``kings``              uint64    the kings of both colours
``white_to_move``      bool      the side to move
``result``             int8      the game's result from the side to move: +1 win, 0 draw, -1 loss
``score``              int16     the search score from the side to move, hundredths of a man,
                                 clipped to +-``SCORE_CLIP`` (forced wins and losses land there)
``quiet``              bool      the side to move has no capture
``opponent_capture``   bool      the other side would have a capture if it were to move
``game``               int64     the game id (0, 1, 2, ... within the directory)
``ply``                int16     plies played since the game's start position
=====================  ========  ===============================================================

and one entry per **game**:

=======================  ======  ==============================================================
``game_id``              int64   the id
``game_winner``          int8    +1 White won, 0 draw, -1 Black won
``game_end``             uint8   why it ended: an index into ``ENDINGS``
``game_plies``           int16   plies from the start position to the end
``final_white`` ...      uint64  the position the game ended in (``final_white``,
``final_white_to_move``  bool    ``final_black``, ``final_kings``, ``final_white_to_move``)
=======================  ======  ==============================================================

``meta.json`` holds ``format`` (``"damka-selfplay"``), ``version``, ``variant`` (a name
``engine.get_variant`` reads back, ``-nocapture`` for the house rule), ``settings`` (what the
games depend on: budget, seed, openings, cap, weights, databases), ``endings``,
``games_done`` (games 0 .. games_done-1 are in the chunks), ``positions`` and ``chunks``
(file, first game, games, positions of each). A chunk is written under a temporary name, fsynced and
renamed, and then ``meta.json`` is replaced the same way (engine.durable), so an interrupted
run, even a power cut, leaves a consistent directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from engine.durable import replace_bytes, replacing

__all__ = [
    "FORMAT",
    "VERSION",
    "SCORE_CLIP",
    "ENDINGS",
    "POSITION_FIELDS",
    "GAME_FIELDS",
    "DataError",
    "GameRecord",
    "Meta",
    "read_meta",
    "read_tagged_json",
    "require_meta",
    "write_meta",
    "write_chunk",
    "write_arrays",
    "read_chunk",
    "read_listed_chunk",
    "read_games",
    "file_sha256",
]

FORMAT = "damka-selfplay"
VERSION = 1
#: search scores beyond this (forced results) are stored as +-SCORE_CLIP
SCORE_CLIP = 10000
META = "meta.json"

#: why a game ended (``game_end`` is an index): the rules' endings, the ``--max-plies`` cap
#: (a draw) and, with ``--egtb``, a position in the endgame databases (their result)
ENDINGS: tuple[str, ...] = (
    "no legal move",
    "no pieces",
    "threefold repetition",
    "25-move king rule",
    "16-move endgame rule",
    "5-move endgame rule",
    "40-move rule",
    "move limit",
    "endgame databases",
)

POSITION_FIELDS: dict[str, type] = {
    "white": np.uint64,
    "black": np.uint64,
    "kings": np.uint64,
    "white_to_move": np.bool_,
    "result": np.int8,
    "score": np.int16,
    "quiet": np.bool_,
    "opponent_capture": np.bool_,
    "game": np.int64,
    "ply": np.int16,
}

GAME_FIELDS: dict[str, type] = {
    "game_id": np.int64,
    "game_winner": np.int8,
    "game_end": np.uint8,
    "game_plies": np.int16,
    "final_white": np.uint64,
    "final_black": np.uint64,
    "final_kings": np.uint64,
    "final_white_to_move": np.bool_,
}


class DataError(ValueError):
    """Self-play data that cannot be used; the message names the directory or file."""


@dataclass
class GameRecord:
    """One finished game: its per-position arrays and its per-game values (see the fields)."""

    positions: dict[str, np.ndarray]
    game: dict[str, Any]

    @property
    def game_id(self) -> int:
        return int(self.game["game_id"])

    def __len__(self) -> int:
        return len(self.positions["white"])


@dataclass
class Meta:
    """The contents of ``meta.json``."""

    variant: str
    settings: dict[str, Any]
    games_done: int = 0
    positions: int = 0
    chunks: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "variant": self.variant,
            "settings": self.settings,
            "endings": list(ENDINGS),
            "games_done": self.games_done,
            "positions": self.positions,
            "chunks": self.chunks,
        }


def read_meta(directory: "str | os.PathLike[str]") -> Meta | None:
    """The directory's meta.json, or None when there is none; DataError when it is not ours."""
    path = Path(directory) / META
    data = read_tagged_json(path, FORMAT, "damka self-play data")
    if data is None:
        return None
    if data.get("version") != VERSION:
        raise DataError(f"{path}: data format version {data.get('version')!r}, this damka reads "
                        f"version {VERSION}")
    try:
        return Meta(str(data["variant"]), dict(data["settings"]), int(data["games_done"]),
                    int(data["positions"]), list(data["chunks"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: incomplete ({exc})") from None


def require_meta(directory: "str | os.PathLike[str]") -> Meta:
    """The meta.json of a directory that must hold self-play data; DataError when none."""
    meta = read_meta(directory)
    if meta is None:
        raise DataError(f"{directory}: no {META} (not a damka selfplay directory)")
    return meta


def read_tagged_json(path: Path, form: str, what: str) -> dict | None:
    """A JSON file that names its ``format`` (``form``), or None when there is none;
    DataError when it is unreadable or of another format (``what``: ours, in words)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != form:
        raise DataError(f"{path}: not {what} (format {form!r} expected)")
    return data


def write_meta(directory: "str | os.PathLike[str]", meta: Meta) -> None:
    """Replace meta.json in one step, durably (engine.durable): after a crash it is the old
    or the new one, and names only chunks that are on disk."""
    text = json.dumps(meta.to_json(), indent=1) + "\n"
    replace_bytes(Path(directory) / META, text.encode("utf-8"))


def file_sha256(path: "str | os.PathLike[str]") -> str:
    """The sha256 of a file's bytes, in hex (how meta.json names openings and weights)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def chunk_name(index: int) -> str:
    return f"chunk-{index:05d}.npz"


def write_chunk(directory: "str | os.PathLike[str]", index: int,
                games: Sequence[GameRecord]) -> dict[str, Any]:
    """Write games (consecutive ids, in order) as chunk ``index``; returns its meta entry."""
    arrays = {name: np.concatenate([g.positions[name] for g in games]).astype(dtype, copy=False)
              for name, dtype in POSITION_FIELDS.items()}
    arrays.update({name: np.array([g.game[name] for g in games], dtype=dtype)
                   for name, dtype in GAME_FIELDS.items()})
    return write_arrays(directory, index, arrays)


def write_arrays(directory: "str | os.PathLike[str]", index: int,
                 arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """Write a chunk's arrays (every field, games with consecutive ids) as chunk ``index``,
    durably; returns its meta entry."""
    arrays = {name: np.asarray(arrays[name]).astype(dtype, copy=False)
              for name, dtype in {**POSITION_FIELDS, **GAME_FIELDS}.items()}
    name = chunk_name(index)
    with replacing(Path(directory) / name) as f:
        np.savez_compressed(f, **arrays)
    return {"file": name, "first_game": int(arrays["game_id"][0]),
            "games": int(len(arrays["game_id"])), "positions": int(len(arrays["white"]))}


def read_chunk(path: "str | os.PathLike[str]") -> dict[str, np.ndarray]:
    """The arrays of one chunk, checked for names and types; DataError if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        # (a truncated or damaged file: BadZipFile, a bad CRC-32, an end of file)
        raise DataError(f"{path}: not a readable chunk ({exc})") from None
    for fields in (POSITION_FIELDS, GAME_FIELDS):
        for name, dtype in fields.items():
            if name not in arrays:
                raise DataError(f"{path}: the array {name!r} is missing")
            if arrays[name].dtype != np.dtype(dtype):
                raise DataError(f"{path}: {name} is {arrays[name].dtype}, not {np.dtype(dtype)}")
    n = len(arrays["white"])
    if any(len(arrays[name]) != n for name in POSITION_FIELDS):
        raise DataError(f"{path}: the position arrays differ in length")
    return arrays


def read_games(directory: "str | os.PathLike[str]",
               fields: Iterable[str] | None = None) -> tuple[Meta, dict[str, np.ndarray]]:
    """All chunks of a directory, concatenated in game-id order (``fields``: only these)."""
    meta = require_meta(directory)
    names = list(POSITION_FIELDS) + list(GAME_FIELDS) if fields is None else list(fields)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for entry in meta.chunks:
        arrays = read_listed_chunk(directory, entry)
        for name in names:
            parts[name].append(arrays[name])
    dtypes = {**POSITION_FIELDS, **GAME_FIELDS}
    return meta, {name: np.concatenate(p) if p else np.zeros(0, dtypes[name])
                  for name, p in parts.items()}


def read_listed_chunk(directory: "str | os.PathLike[str]", entry: dict[str, Any]
                      ) -> dict[str, np.ndarray]:
    """The arrays of the chunk a meta.json ``entry`` lists, checked to be that chunk."""
    path = Path(directory) / entry["file"]
    arrays = read_chunk(path)
    _check_entry(path, arrays, entry)
    return arrays


def _check_entry(path: Path, arrays: dict[str, np.ndarray], entry: dict) -> None:
    """A chunk is the one meta.json lists there: its games, their ids, its positions (a file
    copied in from another run, or written over by a second run at once, is refused)."""
    ids = arrays["game_id"]
    first, games = entry.get("first_game"), entry.get("games")
    expected = np.arange(first, first + games) if first is not None and games is not None \
        else None
    if (expected is not None and not np.array_equal(ids, expected)) \
            or len(arrays["white"]) != entry.get("positions", len(arrays["white"])):
        raise DataError(f"{path}: not the chunk meta.json lists (games {first}.."
                        f"{None if first is None else first + games - 1}, "
                        f"{entry.get('positions')} positions; the file holds "
                        f"{len(ids)} games, {len(arrays['white'])} positions)")
