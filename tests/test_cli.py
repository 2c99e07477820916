"""The ``damka`` command line as a whole process (``python -m protocol``).

Node counts come from tests/data/perft.json (published or independently agreed) or from
positions small enough to count by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine import Board, get_variant, parse_fen
from conftest import PERFT_JSON

REPO = Path(__file__).resolve().parents[1]
OUR_VARIANTS = ("international", "english", "russian", "brazilian", "spanish", "italian", "czech")


def damka(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "protocol", *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def start_counts() -> dict[str, dict[int, int]]:
    """{variant: {depth: nodes}} for the start positions in perft.json."""
    out: dict[str, dict[int, int]] = {}
    for e in json.loads(PERFT_JSON.read_text(encoding="utf-8")):
        if e["variant"] in OUR_VARIANTS and e["name"] == "start":
            out.setdefault(e["variant"], {})[e["depth"]] = e["nodes"]
    return out


START = start_counts()


def test_perft_lines():
    run = damka("perft", "--depth", "3")
    assert run.returncode == 0 and run.stderr == ""
    rows = [line.split() for line in run.stdout.splitlines() if line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    assert [int(r[1]) for r in rows] == [START["international"][d] for d in (1, 2, 3)]
    for r in rows:
        assert float(r[2]) >= 0 and int(r[3]) >= 0


@pytest.mark.parametrize("name", OUR_VARIANTS)
def test_json_lines_match_published_counts(name):
    run = damka("perft", "--variant", name, "--depth", "3", "--json")
    assert run.returncode == 0 and run.stderr == ""
    records = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["depth"] for r in records] == [1, 2, 3]
    variant = get_variant(name)
    start = parse_fen(variant, variant.start_fen)
    for r in records:
        assert set(r) == {"variant", "fen", "depth", "nodes", "seconds", "nps"}
        assert r["variant"] == name
        assert r["nodes"] == START[name][r["depth"]]
        assert parse_fen(variant, r["fen"]) == start
        assert isinstance(r["seconds"], float) and r["seconds"] >= 0
        assert isinstance(r["nps"], int) and r["nps"] >= 0


def test_fen_option_and_alias():
    entry = next(
        e for e in json.loads(PERFT_JSON.read_text(encoding="utf-8"))
        if e["variant"] == "russian" and e["name"] != "start" and 2 <= e["depth"] <= 3
        and e["nodes"] < 100_000
    )
    run = damka("perft", "--variant", "Shashki", "--fen", entry["fen"], "--depth", str(entry["depth"]),
                "--json")
    assert run.returncode == 0, run.stderr
    last = json.loads(run.stdout.splitlines()[-1])
    assert (last["variant"], last["depth"], last["nodes"]) == ("russian", entry["depth"], entry["nodes"])


@pytest.mark.parametrize("name", ["international", "spanish"])
def test_divide_adds_up(name):
    run = damka("perft", "--variant", name, "--depth", "3", "--divide")
    assert run.returncode == 0 and run.stderr == ""
    lines = run.stdout.splitlines()
    depth_rows = [line.split() for line in lines[2:] if line.split()[0].isdigit()]
    move_rows = [line.split() for line in lines[2:] if not line.split()[0].isdigit()]
    assert [int(r[0]) for r in depth_rows] == [1, 2, 3]
    total = int(depth_rows[-1][1])
    assert total == START[name][3]
    assert sum(int(n) for _, n in move_rows) == total
    assert len(move_rows) == START[name][1]
    # the divide total is printed after the root moves
    assert lines[-1].split()[0] == "3"
    board = Board(name)
    assert {board.parse_move(m) for m, _ in move_rows} == set(board.legal_moves)


def test_divide_json():
    run = damka("perft", "--depth", "2", "--divide", "--json")
    records = [json.loads(line) for line in run.stdout.splitlines()]
    moves = [r for r in records if "move" in r]
    assert len(moves) == 9 and all(r["nodes"] == 9 for r in moves)
    assert records[-1]["nodes"] == 81 and records[-1]["depth"] == 2


def test_no_forced_capture_by_hand():
    fen = "W:Wc3:Bd4"  # forced: only c3:e5; house rule: c3:e5 and c3-b4
    forced = damka("perft", "--variant", "russian", "--fen", fen, "--depth", "1", "--json")
    free = damka("perft", "--variant", "russian", "--fen", fen, "--depth", "1", "--json",
                 "--no-forced-capture")
    assert json.loads(forced.stdout)["nodes"] == 1
    record = json.loads(free.stdout)
    assert record["nodes"] == 2 and record["variant"] == "russian-nocapture"


def test_version_names_the_backend():
    run = damka("--version")
    assert run.returncode == 0
    assert engine.__version__ in run.stdout and engine.BACKEND in run.stdout


@pytest.mark.parametrize("args", [(), ("-h",), ("--help",)])
def test_help_lists_the_commands(args):
    run = damka(*args)
    assert run.returncode == 0 and run.stderr == ""
    assert "usage: damka" in run.stdout and "perft" in run.stdout


def test_help_loads_neither_numpy_nor_the_databases():
    """The command line is drawn from light modules: numpy and the database code load only
    when a command that needs them runs (the first start of a GUI's engine is quick)."""
    code = ("import sys; from protocol.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('engine.egtb.')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert run.returncode == 0, run.stderr
    loaded = run.stdout.strip().splitlines()[-1]
    assert "numpy" not in loaded and "builder" not in loaded and "probe" not in loaded


BAD = [
    ("perft", "--variant", "chess", "--depth", "1"),
    ("perft", "--fen", "W:W51:B1", "--depth", "1"),
    ("perft", "--fen", "nonsense", "--depth", "1"),
    ("perft", "--variant", "russian", "--fen", "W:W21-33:B1-12", "--depth", "1"),
    ("perft", "--depth", "0"),
    ("perft", "--depth", "-3"),
    ("perft", "--depth", "three"),
    ("perft", "--depth", "2.5"),
    ("perft", "--depth", "1000000000"),
    ("perft", "--depth", "99999999999999999999999"),
    ("perft",),
    ("perft", "--depth"),
    ("perft", "--depth", "1", "--bogus"),
    ("perft", "--no-forced-capture", "--depth", "1"),  # house rule is 8x8 only
    ("frobnicate",),
    ("--bogus",),
    # hash sizes out of engine.hashsize's range, in every command that takes one
    ("analyse", "--depth", "1", "--hash", "0"),
    ("analyse", "--depth", "1", "--hash", "4097"),
    ("analyse", "--depth", "1", "--hash", "999999999"),
    ("bench", "--depth", "1", "--hash", "4097"),
    ("dxp", "--hash", "4097"),
    ("dxp", "--pdn", "/no-such-folder/games.pdn"),  # refused at once, not as a game ends
    ("selfplay", "--out", "never-written", "--games", "1", "--hash", "4097"),
    ("match", "--engine", "damka hash=4097", "--engine", "damka", "--depth", "1"),
]


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a) for a in BAD])
def test_bad_input_is_one_line_and_status_2(args):
    run = damka(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("damka: error: ")


def test_a_table_the_machine_cannot_hold_is_one_line_and_status_1(monkeypatch, capsys):
    import engine.search
    from protocol.cli import main

    def no_memory(*args, **kwargs):
        raise MemoryError("cannot allocate a 4096 MB hash table")

    monkeypatch.setattr(engine.search, "Engine", no_memory)
    assert main(["analyse", "--depth", "1", "--hash", "4096"]) == 1
    out = capsys.readouterr()
    assert out.err == "damka: error: out of memory: cannot allocate a 4096 MB hash table\n"


def test_a_folder_that_cannot_be_made_is_one_line_and_status_1(tmp_path, capsys):
    from protocol.cli import main

    (tmp_path / "a-file").write_text("not a folder")
    where = tmp_path / "a-file" / "egtb"
    assert main(["egtb", "build", "--variant", "english", "--pieces", "2",
                 "--dir", str(where)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("damka: error: Not a directory: ") and str(tmp_path / "a-file") in err


@pytest.mark.parametrize("hash_mb", [0, 4097, True, 64.0])
def test_the_engine_refuses_hash_sizes_out_of_range(hash_mb):
    from engine.search import Engine

    with pytest.raises(ValueError, match="hash size must be between 1 and 4096 MB"):
        Engine("international", hash_mb=hash_mb)
    engine = Engine("international", hash_mb=1, prefault=False)
    with pytest.raises(ValueError, match="hash size must be between 1 and 4096 MB"):
        engine.resize(hash_mb)
    assert engine.hash_mb == 1


def test_missing_core_says_how_to_build():
    code = "import sys; sys.modules['_fast.movegen'] = None; import engine"
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode != 0
    assert "ImportError" in run.stderr and "not built" in run.stderr
    assert "pip install -e ." in run.stderr and "build_ext --inplace" in run.stderr


def test_main_in_process(capsys):
    from protocol.cli import main

    assert main(["perft", "--depth", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == 9
    assert main(["perft", "--depth", "0"]) == 2
    assert capsys.readouterr().err.startswith("damka: error: ")
