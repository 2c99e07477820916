"""The positions ``damka tune`` fits: read from one or more self-play directories, checked to
be of one rule set, filtered to quiet positions, and split into training and validation by
game (every position of a game on the same side of the split)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.variants import Variant, get_variant

from .defaults import variant_label
from .data import DataError, Meta, read_games

__all__ = ["Positions", "load_positions", "split_by_game", "data_variant",
           "after_last_deviation"]

_FIELDS = ("white", "black", "kings", "white_to_move", "result", "score", "quiet",
           "opponent_capture", "game")
#: game ids of different directories are kept apart by this offset
_DIRECTORY_STRIDE = 1 << 40


@dataclass
class Positions:
    """Parallel arrays of the positions to fit, and which game each comes from."""

    variant: Variant
    label: str  #: the rule set as the data names it
    white: np.ndarray
    black: np.ndarray
    kings: np.ndarray
    white_to_move: np.ndarray
    result: np.ndarray  #: +1 / 0 / -1 from the side to move
    score: np.ndarray  #: search score from the side to move, hundredths of a man
    game: np.ndarray  #: a key unique over all directories
    games: int  #: games read (before filtering)

    def __len__(self) -> int:
        return len(self.white)

    @property
    def result01(self) -> np.ndarray:
        """The result as 1 win, 0.5 draw, 0 loss."""
        return (self.result.astype(np.float64) + 1.0) / 2.0

    def take(self, mask: np.ndarray) -> "Positions":
        arrays = {name: getattr(self, name)[mask] for name in
                  ("white", "black", "kings", "white_to_move", "result", "score", "game")}
        return Positions(self.variant, self.label, games=self.games, **arrays)


def data_variant(meta: Meta) -> Variant:
    """The rule set a self-play directory's meta.json names, looked up as the data is read."""
    return get_variant(meta.variant)


def after_last_deviation(game: np.ndarray, ply: np.ndarray) -> np.ndarray:
    """A mask of the positions that follow their game's last random move (``--deviate``).

    A random move's position is not recorded, so it shows as a step of more than one ply
    between two positions of one game (every other move is searched, and recorded); the
    positions before it have a result that turns on where the random moves fell."""
    step = np.diff(ply.astype(np.int64)) != 1
    same_game = game[1:] == game[:-1]
    deviation = np.append(step & same_game, False)  # a random move after this position
    # deviations at or after each position, counted within its game (games are contiguous)
    later = np.cumsum(deviation[::-1])[::-1]
    last_of_game = np.append(~same_game, True)
    ends = np.flatnonzero(last_of_game)
    end_of = np.repeat(ends, np.diff(np.concatenate(([0], ends + 1))))
    return later == later[end_of]  # (none after a game's last position)


def load_positions(directories: Sequence[str], variant: Variant | None,
                   quiet_only: bool = True, after_deviations: bool = False) -> Positions:
    """Every position of the directories (only those without a capture for either side when
    ``quiet_only``; only those after their game's last random move when
    ``after_deviations``); DataError when a directory holds another rule set than
    ``variant`` (or than the first directory, without ``variant``) or is not self-play
    data."""
    label = None if variant is None else variant_label(variant)
    parts: list[dict[str, np.ndarray]] = []
    games = 0
    seen: dict[Path, str] = {}
    for directory in directories:  # one directory twice would count its games twice
        where = Path(directory).resolve()
        if where in seen:
            same = seen[where]
            twice = (f"{directory} is given twice" if same == directory
                     else f"{same} and {directory} are one directory")
            raise DataError(f"{twice}: give each once (its games would count twice)")
        seen[where] = directory
    for number, directory in enumerate(directories):
        fields = _FIELDS + ("game_id",) + (("ply",) if after_deviations else ())
        meta, arrays = read_games(directory, fields)
        found = data_variant(meta)
        if variant is None:
            variant, label = found, meta.variant
        if found != variant:
            raise DataError(f"{directory} holds {meta.variant} games, not {label}")
        games += len(arrays["game_id"])
        keep = np.ones(len(arrays["game"]), dtype=np.bool_)
        if quiet_only:
            keep &= arrays["quiet"] & ~arrays["opponent_capture"]
        if after_deviations:
            keep &= after_last_deviation(arrays["game"], arrays["ply"])
        part = {name: arrays[name][keep] for name in _FIELDS if name not in
                ("quiet", "opponent_capture")}
        part["game"] = part["game"] + number * _DIRECTORY_STRIDE
        parts.append(part)
    if variant is None or label is None:
        raise DataError("no data directory given")
    joined = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    return Positions(variant, label, games=games, **joined)


def split_by_game(game: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """A mask of the validation positions: ``fraction`` of the games, drawn with ``seed``
    (at least one game when the fraction is positive and there are two games or more)."""
    ids = np.unique(game)
    count = int(round(fraction * len(ids)))
    if fraction > 0 and len(ids) >= 2:
        count = min(max(count, 1), len(ids) - 1)
    chosen = np.random.default_rng(seed).permutation(ids)[:count]
    return np.isin(game, chosen)
