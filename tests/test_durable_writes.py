"""Writes that fail halfway (issue 30 item 11): a PDN append is cut back to the last whole game,
and self-play chunks, meta.json, weights and database files are replaced whole and durably
(engine.durable: a temporary file, fsync, rename, fsync of the directory).

Failures are simulated: a short write then ENOSPC from os.write, an fsync or a writer that
raises. A real full file system needs a mount, so it is checked by hand, not here.
"""

from __future__ import annotations

import errno
import json
import os
import stat

import numpy as np
import pytest

from engine.durable import replace_bytes, replacing
from engine.egtb.material import Material
from engine.egtb.storage import TableFile, write_table
from engine.evaluation import layout, read_weights, write_weights
from engine.game import Game, Termination
from engine.pdn import append_game, read_games, write_game
from protocol.match.openings import start_opening
from protocol.match.runner import Match, MatchConfig, MatchError
from protocol.match.timecontrol import TimeControl
from protocol.training.data import (GAME_FIELDS, POSITION_FIELDS, GameRecord, Meta,
                                    read_chunk, read_meta, write_chunk, write_meta)

from coin_players import CoinSpec

def _disk_full() -> OSError:
    return OSError(errno.ENOSPC, "No space left on device")


def _short_write_then_full(monkeypatch, path, fail_on: int = 1):
    """os.write on ``path``: the ``fail_on``-th write (counting from 1) stores half its bytes,
    the next raises ENOSPC, as a disk that fills up does; other files write as usual."""
    real = os.write
    calls = {"n": 0, "failing": False}

    def write(fd, data):
        try:
            ours = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            ours = False
        if not ours:
            return real(fd, data)
        if calls["failing"]:
            raise _disk_full()
        calls["n"] += 1
        if calls["n"] == fail_on:
            calls["failing"] = True
            return real(fd, bytes(data[:max(1, len(data) // 2)]))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return calls


def _only(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- the helper ---------------------------------------------------------------------------


def test_replace_bytes_writes_new_content_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "f.bin"
    replace_bytes(target, b"one")
    assert target.read_bytes() == b"one"
    replace_bytes(str(target), b"two, longer")
    assert target.read_bytes() == b"two, longer"
    assert _only(tmp_path) == ["f.bin"]


def test_the_new_file_has_the_mode_open_gives(tmp_path):
    with open(tmp_path / "reference", "wb"):
        pass
    replace_bytes(tmp_path / "f.bin", b"x")
    mode = stat.S_IMODE(os.stat(tmp_path / "reference").st_mode)
    assert stat.S_IMODE(os.stat(tmp_path / "f.bin").st_mode) == mode


@pytest.mark.parametrize("fails", ["in the writer", "in fsync", "in the rename"])
def test_a_failed_replacement_keeps_the_old_content(tmp_path, monkeypatch, fails):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old content")
    new = b"new content " * 10_000
    if fails == "in fsync":
        def fsync(fd):
            raise _disk_full()

        monkeypatch.setattr(os, "fsync", fsync)
    elif fails == "in the rename":
        def rename(src, dst):
            raise _disk_full()

        monkeypatch.setattr(os, "replace", rename)
    with pytest.raises(OSError):
        with replacing(target) as f:
            f.write(new[:1000])
            if fails == "in the writer":
                raise _disk_full()  # e.g. np.savez_compressed, part of its zip written
            f.write(new[1000:])
    assert target.read_bytes() == b"old content"
    assert _only(tmp_path) == ["f.bin"]


def test_a_failed_first_write_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError):
        with replacing(tmp_path / "new.bin") as f:
            f.write(b"half")
            raise RuntimeError("stop")
    assert _only(tmp_path) == []


def test_the_file_is_fsynced_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    target = tmp_path / "f.bin"
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.fstat(fd)))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.stat(src)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    replace_bytes(target, b"data")
    assert [kind for kind, _ in events] == ["fsync", "replace", "fsync"]
    assert os.path.samestat(events[0][1], os.stat(target))  # the file that became the target
    assert events[0][1].st_size == 4  # with its bytes, before the rename
    assert os.path.samestat(events[2][1], os.stat(tmp_path))  # then its directory


def test_no_directory_fsync_where_directories_cannot_be_opened(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.delattr(os, "O_DIRECTORY")
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.fstat(fd)), real_fsync(fd)))
    replace_bytes(tmp_path / "f.bin", b"data")
    assert len(synced) == 1 and stat.S_ISREG(synced[0].st_mode)


def test_a_file_system_without_directory_fsync_is_not_an_error(tmp_path, monkeypatch):
    real_fsync = os.fsync

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    replace_bytes(tmp_path / "f.bin", b"data")
    assert (tmp_path / "f.bin").read_bytes() == b"data"


# -- PDN appends ------------------------------------------------------------------------------


def _game(round_: int) -> Game:
    game = Game("international", tags={"Event": "m", "Round": str(round_)})
    game.push(next(iter(game.board.legal_moves)))
    game.end(True, Termination.RESIGNATION)
    return game


@pytest.mark.parametrize("fails", ["halfway", "in fsync"])
def test_a_failed_append_is_cut_back_to_the_whole_games(tmp_path, monkeypatch, fails):
    path = tmp_path / "match.pdn"
    for r in (1, 2):
        append_game(path, _game(r))
    before = path.read_bytes()
    if fails == "halfway":
        _short_write_then_full(monkeypatch, path)
    else:
        def fsync(fd):
            raise _disk_full()

        monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError) as caught:
        append_game(path, "\n".join(write_game(_game(r)) for r in (3, 4, 5)))
    assert caught.value.errno == errno.ENOSPC  # the write's own error
    assert path.read_bytes() == before
    assert [g.tags["Round"] for g in read_games(path)] == ["1", "2"]
    monkeypatch.undo()
    append_game(path, _game(3))  # and the next append goes on from there
    assert [g.tags["Round"] for g in read_games(path)] == ["1", "2", "3"]


def test_a_failed_first_append_leaves_an_empty_file(tmp_path, monkeypatch):
    path = tmp_path / "match.pdn"
    path.touch()
    _short_write_then_full(monkeypatch, path)
    with pytest.raises(OSError):
        append_game(path, _game(1))
    assert path.read_bytes() == b""


def test_a_match_ended_by_a_full_disk_resumes_from_its_whole_games(tmp_path, monkeypatch):
    path = tmp_path / "match.pdn"

    def config(resume=False) -> MatchConfig:
        return MatchConfig(engines=[CoinSpec("a", 0.3, 1), CoinSpec("b", 0.3, 2)],
                           control=TimeControl(depth=1),
                           openings=[start_opening("international")], games_per_pair=4,
                           max_moves=1, comments=False, pdn=path, resume=resume)

    path.touch()
    _short_write_then_full(monkeypatch, path, fail_on=3)  # the third game's write, halfway
    with pytest.raises(MatchError, match="No space left on device"):
        Match(config()).run()
    monkeypatch.undo()
    assert [g.tags["Round"] for g in read_games(path)] == ["1", "2"]
    assert sorted(r.scheduled.round for r in Match(config(True))._read_done()) == [1, 2]
    state = Match(config(True)).run()
    assert state.done == 4 and sum(r.resumed for r in state.records) == 2
    assert [g.tags["Round"] for g in read_games(path)] == ["1", "2", "3", "4"]


# -- the callers of the helper --------------------------------------------------------------


def _fail_fsync_on_temporary_files(monkeypatch) -> None:
    """fsync of a file (not a directory) raises ENOSPC: the new version never reaches its
    name."""
    real = os.fsync

    def fsync(fd):
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise _disk_full()
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _record(game_id: int, n: int) -> GameRecord:
    positions = {name: np.arange(n).astype(dtype) for name, dtype in POSITION_FIELDS.items()}
    positions["game"] = np.full(n, game_id, dtype=np.int64)
    game = {name: np.array(0, dtype=dtype)[()] for name, dtype in GAME_FIELDS.items()}
    game["game_id"] = game_id
    game["game_plies"] = n
    return GameRecord(positions, game)


def test_a_failed_meta_write_keeps_the_previous_meta(tmp_path, monkeypatch):
    meta = Meta("international", {"budget": 1}, games_done=3, positions=30)
    write_meta(tmp_path, meta)
    text = (tmp_path / "meta.json").read_text(encoding="utf-8")
    assert text == json.dumps(meta.to_json(), indent=1) + "\n"  # the format as before
    _fail_fsync_on_temporary_files(monkeypatch)
    with pytest.raises(OSError):
        write_meta(tmp_path, Meta("international", {"budget": 1}, games_done=9, positions=90))
    assert read_meta(tmp_path).games_done == 3
    assert _only(tmp_path) == ["meta.json"]


def test_a_failed_chunk_write_keeps_the_previous_chunk(tmp_path, monkeypatch):
    write_chunk(tmp_path, 0, [_record(0, 5), _record(1, 3)])
    before = (tmp_path / "chunk-00000.npz").read_bytes()

    def breaks_off(file, **arrays):
        file.write(b"PK\x03\x04 half a zip")
        raise _disk_full()

    monkeypatch.setattr(np, "savez_compressed", breaks_off)
    with pytest.raises(OSError):
        write_chunk(tmp_path, 0, [_record(0, 7)])
    assert (tmp_path / "chunk-00000.npz").read_bytes() == before
    assert len(read_chunk(tmp_path / "chunk-00000.npz")["white"]) == 8
    assert _only(tmp_path) == ["chunk-00000.npz"]


def test_a_failed_weights_write_keeps_a_loadable_file(tmp_path, monkeypatch):
    path = tmp_path / "w.dkw"
    w = np.linspace(-50, 50, layout("russian").n_params)
    write_weights(path, "russian", w)
    _fail_fsync_on_temporary_files(monkeypatch)
    with pytest.raises(OSError):
        write_weights(path, "russian", -w)
    monkeypatch.undo()
    assert np.allclose(read_weights(path, "russian"), w, atol=1 / 16)
    assert _only(tmp_path) == ["w.dkw"]


def test_a_failed_database_write_keeps_the_previous_table(tmp_path, monkeypatch):
    m = Material(1, 0, 0, 1)
    path = tmp_path / f"{m.name}.egtb"
    table = (np.arange(10_000) % 7).astype(np.uint8)
    size = write_table(path, "brazilian", m, table)
    assert size == path.stat().st_size
    _fail_fsync_on_temporary_files(monkeypatch)
    with pytest.raises(OSError):
        write_table(path, "brazilian", m, np.zeros(10_000, dtype=np.uint8))
    monkeypatch.undo()
    f = TableFile(path, "brazilian", m, len(table))
    assert np.array_equal(f.table(), table)
    f.close()
    assert _only(tmp_path) == [path.name]


@pytest.mark.parametrize("caller", ["meta.json", "chunk", "weights", "database"])
def test_every_caller_fsyncs_the_file_then_renames_then_fsyncs_the_directory(
        tmp_path, monkeypatch, caller):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append("fsync " + ("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))
        real_fsync(fd)

    def replace(src, dst):
        events.append("rename to " + os.path.basename(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    if caller == "meta.json":
        write_meta(tmp_path, Meta("international", {}))
        name = "meta.json"
    elif caller == "chunk":
        write_chunk(tmp_path, 0, [_record(0, 2)])
        name = "chunk-00000.npz"
    elif caller == "weights":
        name = "w.dkw"
        write_weights(tmp_path / name, "russian", np.zeros(layout("russian").n_params))
    else:
        name = "t.egtb"
        write_table(tmp_path / name, "brazilian", Material(1, 0, 0, 1), np.zeros(9, np.uint8))
    assert events == ["fsync file", f"rename to {name}", "fsync directory"]
    assert _only(tmp_path) == [name]
