"""``damka match``: clocks, schedule, openings, engine specs, and small real matches.

Real matches: damka against itself in-process, over Hub and over DXP; damka against dame-rs
(``dame hub``) two games at once on a game clock; fake Hub engines (scripts written into
tmp_path) that crash, play an illegal move, give no move or think too long; resuming after a
partial PDN file. Every match's PDN file is read back with engine/pdn.py.
"""

from __future__ import annotations

import io
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from protocol.cli import main as cli_main
from engine.game import Termination
from engine.variants import get_variant
from protocol.match.runner import (
    Match,
    MatchConfig,
    MatchError,
    SprtSettings,
    play_game,
    schedule,
)
from protocol.match.report import Progress, final_table, progress_line, score_text
from protocol.match.openings import OpeningsError, read_openings, start_opening
from engine.pdn import read_games
from protocol.match.timecontrol import Clock, TimeControl, parse_time_control
from protocol.match.engines import EngineSpecError, parse_engine
from protocol.match.players import Answer, Player

from coin_players import CoinSpec

ROOT = Path(__file__).resolve().parents[1]
DAMKA = str(Path(sys.executable).with_name("damka"))
DAMKA_HUB = f"cmd='{DAMKA} hub'"
DAME = shutil.which("dame")
needs_dame = pytest.mark.skipif(DAME is None, reason="dame-rs is not installed (test extra)")


# -- time controls and clocks ----------------------------------------------------------------


def test_parse_time_control():
    assert parse_time_control("40/60+0.5") == (60.0, 40, 0.5)
    assert parse_time_control("60+0.5") == (60.0, None, 0.5)
    assert parse_time_control("40/60") == (60.0, 40, 0.0)
    assert parse_time_control(" 2.5 ") == (2.5, None, 0.0)
    for bad in ("", "40/", "1:00", "60+", "/60", "a/b"):
        with pytest.raises(ValueError):
            parse_time_control(bad)
    assert str(TimeControl(time=60, moves=40, increment=0.5)) == "40/60+0.5"
    assert str(TimeControl(movetime=0.1)) == "0.1s/move"
    with pytest.raises(ValueError):
        TimeControl()
    with pytest.raises(ValueError):
        TimeControl(movetime=0.1, increment=1)


def test_clock_moves_time_increment():
    clock = Clock(TimeControl(time=10, moves=2, increment=1), grace=0.1)
    r = clock.request()
    assert (r.limits.time_left, r.limits.increment, r.limits.moves_to_go) == (10, 1, 2)
    assert r.allowance == pytest.approx(10.1)
    assert clock.charge(4)  # 10 - 4 + 1 = 7
    assert clock.request().limits.time_left == pytest.approx(7) and clock.request().limits.moves_to_go == 1
    assert clock.charge(2)  # 7 - 2 + 1 = 6, and the second move of the control adds 10
    assert clock.request().limits.time_left == pytest.approx(16) and clock.request().limits.moves_to_go == 2
    assert clock.used == pytest.approx(6)


def test_clock_grace_and_forfeit():
    clock = Clock(TimeControl(time=1.0), grace=0.1)
    assert clock.charge(1.05)  # over by 0.05: within the grace
    assert clock.request().limits.time_left == 0.0
    assert not clock.charge(0.2)  # over by 0.2
    per_move = Clock(TimeControl(movetime=0.1), grace=0.05)
    assert per_move.request().allowance == pytest.approx(0.15)
    assert per_move.charge(0.14)
    assert not per_move.charge(0.16)
    caps = Clock(TimeControl(depth=3))
    assert caps.request().allowance is None and caps.charge(100.0)


# -- schedule, openings, engine specs ----------------------------------------------------------


def test_schedule_reverses_colours_and_covers_pairs():
    games = schedule(2, 3, 6)
    assert [(g.white, g.black, g.opening) for g in games] == [
        (0, 1, 0), (1, 0, 0), (0, 1, 1), (1, 0, 1), (0, 1, 2), (1, 0, 2)]
    assert [g.round for g in games] == [1, 2, 3, 4, 5, 6]
    rr = schedule(3, 1, 2)
    assert len(rr) == 6
    assert {(g.white, g.black) for g in rr} == {(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)}


def test_read_openings_lines_and_pdn(tmp_path):
    lines = tmp_path / "openings.txt"
    lines.write_text(
        "# a comment\n\n"
        "32-28 19-23 28x19 14x23\n"
        "1. 33-29 2... 17-21\n"
        "W:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50:"
        "B1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20\n"
        "B:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50:"
        "B1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 | 19-23\n",
        encoding="utf-8")
    openings = read_openings(lines, "international")
    assert [len(o.moves) for o in openings] == [4, 2, 0, 1]
    # a line that ends with its game's result (movetext copied from PDN without tags)
    results = read_openings(_write(tmp_path / "res.txt", "1. 32-28 19-23 *\n32-28 18-23 2-0\n"
                                   "1. 33-29 17-21 1-1\n"), "international")
    assert [len(o.moves) for o in results] == [2, 2, 2]
    assert openings[0].board("international").white_to_move
    assert not openings[3].start.white_to_move
    bad = tmp_path / "bad.txt"
    bad.write_text("32-28 32-28\n", encoding="utf-8")
    with pytest.raises(OpeningsError, match="line 1"):
        read_openings(bad, "international")
    pdn = tmp_path / "openings.pdn"
    pdn.write_text('[Event "x"]\n[Result "*"]\n\n1. 32-28 19-23 *\n\n'
                   '[Event "y"]\n[Result "*"]\n\n1. 31-27 *\n', encoding="utf-8")
    assert [len(o.moves) for o in read_openings(pdn, "international")] == [2, 1]
    english = read_openings(_write(tmp_path / "e.txt", "9-13 22-18\n"), "english")
    assert len(english[0].moves) == 2
    # Russian captures are written with a colon: still a move list, not a FEN
    russian = read_openings(_write(tmp_path / "r.txt", "c3-d4 f6-e5 d4:f6 g7:e5\n"), "russian")
    assert len(russian[0].moves) == 4 and russian[0].moves[2].captured
    # the bench's openings file is valid and varied
    for variant in ("international", "english", "russian", "brazilian", "spanish", "italian",
                    "czech"):
        bench = read_openings(ROOT / "bench" / f"openings_{variant}.txt", variant)
        assert len(bench) >= 100
        assert len({o.board(variant).position for o in bench}) == len(bench)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_parse_engine_specs():
    spec = parse_engine("cmd='dame hub --x \"a b\"' name=dame dir=/tmp param.hash=32")
    assert spec.kind == "hub" and spec.command == ("dame", "hub", "--x", "a b")
    assert spec.cwd == "/tmp" and spec.params == (("hash", "32"),) and spec.name == "dame"
    assert parse_engine("cmd='/opt/scan/scan hub'").name == "scan"
    damka = parse_engine("damka level=easy hash=16 seed=3 name=weak")
    assert (damka.kind, damka.level, damka.hash_mb, damka.seed, damka.name) == (
        "damka", "easy", 16, 3, "weak")
    assert parse_engine("dxp=127.0.0.1:27531").address == ("127.0.0.1", 27531)
    assert parse_engine("dxp=127.0.0.1:1").max_instances == 1
    for bad in ("", "scan", "damka cmd=x", "damka level=strongest", "cmd=x level=easy",
                "dxp=nohost", "damka hash=0", "cmd=''", "damka color=red", "cmd='unclosed",
                "damka name=", "cmd=x name=' '"):
        with pytest.raises(EngineSpecError):
            parse_engine(bad)


def test_damka_spec_chooses_the_evaluation(tmp_path):
    from engine.evaluation import default_weights_path

    weights = default_weights_path(get_variant("international"))
    spec = parse_engine(f"damka eval=learned weights={weights}")
    assert (spec.evaluation, spec.weights) == ("learned", str(weights))
    assert parse_engine("damka eval=classic").evaluation == "classic"
    assert parse_engine("damka").evaluation is None
    for bad in ("damka eval=neural", f"damka eval=classic weights={weights}",
                f"damka weights={tmp_path / 'missing.dkw'}", f"cmd=x weights={weights}"):
        with pytest.raises(EngineSpecError):
            parse_engine(bad)
    player = spec.create(get_variant("international"))
    player.start()
    assert player.engine.evaluation == "learned"


def test_an_in_process_damka_player_is_warm_and_its_table_in_when_it_has_started(monkeypatch):
    """start() searches once (the code, the evaluation's tables and the databases in memory)
    and waits for its hash table's pages: a 0.1 s-a-move English match lost its first game on
    time (0.211 s for a first move) while the page threads of the four engines it had just
    made in its process ran beside the game."""
    from engine.search import Engine

    warmed = []
    warm = Engine.warm
    monkeypatch.setattr(Engine, "warm", lambda self: (warmed.append(self), warm(self))[1])
    player = parse_engine("damka hash=64").create(get_variant("english"))
    player.start()
    assert warmed == [player.engine]
    assert player.engine._touching is None  # (prefault's thread joined, not left running)


def test_sprt_settings_parse():
    s = SprtSettings.parse("0,10,0.05,0.05")
    assert (s.elo0, s.elo1, s.alpha, s.beta) == (0, 10, 0.05, 0.05)
    for bad in ("0,10", "10,0,0.05,0.05", "0,10,0.7,0.05", "a,b,c,d"):
        with pytest.raises(ValueError):
            SprtSettings.parse(bad)


# -- small real matches ----------------------------------------------------------------------


def _config(engines, control, tmp_path=None, **kw) -> MatchConfig:
    return MatchConfig(engines=[parse_engine(e) for e in engines], control=control,
                       openings=kw.pop("openings", [start_opening(kw.get("variant", "international"))]),
                       pdn=None if tmp_path is None else tmp_path / "match.pdn", **kw)


def _check_pdn(path: Path, state) -> list:
    """The PDN file holds every game of the state, each with the result the state counted."""
    games = list(read_games(path, "international"))
    assert len(games) == state.done
    by_round = {r.scheduled.round: r for r in state.records}
    for g in games:
        record = by_round[int(g.tags["Round"])]
        assert g.tags["White"] == state.names[record.scheduled.white]
        assert g.tags["Black"] == state.names[record.scheduled.black]
        assert g.outcome().winner == record.winner
    return games


#: transport grace for matches at a few hundredths of a second per move: a loaded 2-core machine
#: can hold a process back this long; the tests check that no one loses on time, crashes or
#: plays an illegal move, and the clocks themselves are tested with exact figures above
LOAD_GRACE = 1.0


def _assert_low_overhead(state, limit=0.1):
    """The runner's own time per move (median): 20 ms or less on an idle machine (bench/);
    the limit here catches a runner that waits where it should not, under any load."""
    summary = state.overhead_summary()
    assert summary is not None
    assert summary["median"] < limit, summary


def test_damka_in_process_against_itself(tmp_path):
    openings = read_openings(ROOT / "bench" / "openings_international.txt", "international")[:2]
    config = _config(["damka", "damka level=easy name=easy"], TimeControl(depth=3), tmp_path,
                     openings=openings)
    seen = []
    terminal = io.StringIO()
    bar = Progress(terminal, inplace=True)
    state = Match(config, on_progress=lambda s: (seen.append(progress_line(s)), bar(s))).run()
    bar.finish()
    assert state.done == 4 and not state.interrupted
    assert all(r.termination is None or r.termination.by_rules or
               r.termination == Termination.MOVE_LIMIT for r in state.records)
    games = _check_pdn(tmp_path / "match.pdn", state)
    # each opening twice, colours reversed; the opening's moves are in the game
    assert sorted((g.tags["Opening"], g.tags["White"]) for g in games) == [
        ("1", "damka"), ("1", "easy"), ("2", "damka"), ("2", "easy")]
    assert all(len(g.moves) > 8 for g in games)
    assert seen[-1].startswith("[" + "#" * 20 + "]  4/4")
    # on a terminal: one bar redrawn in place, ending on the whole count and the final score
    drawn = terminal.getvalue()
    assert drawn.count("\n") == 1 and "\r" in drawn
    assert "4/4" in drawn.rsplit("\r", 1)[-1] and score_text(state) in drawn
    table = final_table(state)
    assert "damka" in table and "LOS" in table and "runner overhead" in table
    _assert_low_overhead(state)


def test_damka_over_hub_against_itself(tmp_path):
    config = _config([DAMKA_HUB, DAMKA_HUB], TimeControl(movetime=0.02), tmp_path,
                     games_per_pair=2, max_moves=40, grace=LOAD_GRACE)
    state = Match(config).run()
    assert state.names == ["damka", "damka-2"]
    assert state.done == 2
    assert not any(r.termination in (Termination.CRASH, Termination.TIME_FORFEIT,
                                     Termination.ILLEGAL_MOVE) for r in state.records)
    games = _check_pdn(tmp_path / "match.pdn", state)
    assert all(g.tags["TimeControl"] == "0.02s/move" for g in games)
    _assert_low_overhead(state)


@needs_dame
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_damka_against_dame_two_games_at_once_keeps_clocks_honest(tmp_path):
    """Two games at once on a game clock: nobody loses on time, and each engine's clock
    (time charged from request to answer) stays within its budget."""
    openings = read_openings(ROOT / "bench" / "openings_international.txt", "international")[:1]
    config = _config([DAMKA_HUB, f"cmd='{DAME} hub'"], TimeControl(time=3, increment=0.05),
                     tmp_path, openings=openings, concurrency=2, max_moves=60,
                     grace=LOAD_GRACE)
    start = time.monotonic()
    state = Match(config).run()
    assert state.done == 2
    assert not any(r.termination in (Termination.TIME_FORFEIT, Termination.CRASH,
                                     Termination.ILLEGAL_MOVE) for r in state.records), \
        [r.termination for r in state.records]
    elapsed = time.monotonic() - start
    # the two games overlapped: the match took clearly less than the engines' thinking time
    # summed over both games (each move's charged time is in its PDN comment), which one
    # game after the other would need at the least
    thought = sum(float(t) for t in re.findall(r"\{[^}]*?(\d+\.\d{3})s",
                                                (tmp_path / "match.pdn").read_text()))
    assert thought > 4  # (the comments were read: two games of a few seconds a side)
    assert elapsed < 0.8 * thought, (elapsed, thought)
    games = _check_pdn(tmp_path / "match.pdn", state)
    assert {g.tags["White"] for g in games} == {"damka", "dame"}
    _assert_low_overhead(state)


def test_damka_over_dxp(tmp_path):
    """damka's DXP follower (``damka dxp``) against damka in-process, the runner initiating."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    follower = subprocess.Popen([DAMKA, "dxp", "--port", str(port), "--move-time", "0.03",
                                 "--quiet", "--hash", "16"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert follower.poll() is None, follower.stderr.read()
                assert time.monotonic() < deadline, "damka dxp did not start listening"
                time.sleep(0.1)
        openings = read_openings(ROOT / "bench" / "openings_international.txt",
                                 "international")[:1]
        config = _config([f"dxp=127.0.0.1:{port} name=dxp", "damka hash=16"],
                         TimeControl(movetime=0.04), tmp_path, openings=openings,
                         max_moves=30, grace=LOAD_GRACE)
        state = Match(config).run()
    finally:
        follower.terminate()
        follower.wait(timeout=10)
    assert state.done == 2
    assert not any(r.termination in (Termination.TIME_FORFEIT, Termination.CRASH,
                                     Termination.ILLEGAL_MOVE, Termination.RESIGNATION)
                   for r in state.records), [r.termination for r in state.records]
    games = _check_pdn(tmp_path / "match.pdn", state)
    assert all(len(g.moves) > 20 for g in games)


def test_the_dxp_follower_is_sent_the_move_that_ends_the_game():
    """Found by the soak (bench/soak.py): the runner ended a game with GAMEEND without
    sending the follower the move that ended it, so the follower's own record lacked that
    move and showed "the opponent claimed a win". The move goes first: the follower sees the
    end by the rules itself and records the whole game."""
    import threading

    from engine.fen import parse_fen
    from engine.search import Engine
    from protocol.dxp.listener import DxpServer, run_connection
    from protocol.dxp.session import DxpSession, DxpSettings
    from protocol.match.openings import Opening

    server = DxpServer("127.0.0.1", 0)
    session = DxpSession(Engine("international", hash_mb=1), DxpSettings(movetime=0.02))

    def follow() -> None:
        accepted = server.accept()
        server.close()
        if accepted is not None:
            run_connection(accepted[0], session)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    host, port = server.address
    # White (damka in-process) takes Black's (the follower's) last man: 28x19
    opening = Opening(parse_fen(get_variant("international"), "W:W28:B23"))
    config = _config(["damka hash=1", f"dxp={host}:{port} name=dxp"], TimeControl(movetime=0.05),
                     openings=[opening], games_per_pair=1, grace=LOAD_GRACE)
    state = Match(config).run()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert state.done == 1 and state.records[0].winner is True
    assert state.records[0].termination.by_rules
    [record] = session.records
    assert record.moves == (opening.board(get_variant("international")).parse_move("28x19"),)
    assert record.result == "2-0"
    assert record.termination == "no legal moves"


# -- engines that misbehave ---------------------------------------------------------------------

FAKE_HUB = textwrap.dedent('''
    """A Hub engine for tests. Modes, counting the goes of each game: crash (exit at the 3rd
    go), illegal (a move that is not legal at the 2nd), nomove (a bare done at the 2nd),
    slow:SECONDS (think that long every time), else a quick legal move."""
    import sys, time
    sys.path.insert(0, {root!r})
    from engine.board import Board
    from protocol.hub.text import parse_line

    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    gos = 0
    board = None

    def out(line):
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        command, args = parse_line(line)
        if command == "hub":
            out("id name=fake version=1")
            out("wait")
        elif command == "init":
            out("ready")
        elif command == "ping":
            out("pong")
        elif command == "quit":
            break
        elif command == "new-game":
            gos = 0
        elif command == "pos":
            board = Board.from_hub("international", args["pos"]) if args.get("pos") not in (None, "", "start") else Board()
            for m in args.get("moves", "").split():
                board.push(m)
        elif command == "go":
            gos += 1
            if mode == "crash" and gos == 3:
                sys.exit(3)
            if mode == "illegal" and gos == 2:
                out("done move=1-50")
                continue
            if mode == "nomove" and gos == 2:
                out("done")
                continue
            if mode.startswith("slow:"):
                time.sleep(float(mode[5:]))
            move = next(iter(board.legal_moves))
            out("done move=" + move.hub(board.variant))
''')


@pytest.fixture
def fake_hub(tmp_path) -> Path:
    path = tmp_path / "fake_hub.py"
    path.write_text(FAKE_HUB.format(root=str(ROOT)), encoding="utf-8")
    return path


def _fake(path: Path, mode: str, name: str) -> str:
    return f"cmd='{sys.executable} {path} {mode}' name={name}"


@pytest.mark.parametrize("mode, termination", [
    ("crash", Termination.CRASH),
    ("illegal", Termination.ILLEGAL_MOVE),
    ("nomove", Termination.ILLEGAL_MOVE),
])
def test_misbehaving_engine_loses_and_the_match_goes_on(tmp_path, fake_hub, mode, termination):
    config = _config([_fake(fake_hub, mode, "bad"), "damka hash=16"], TimeControl(depth=2),
                     tmp_path, games_per_pair=3)
    state = Match(config).run()
    assert state.done == 3  # every game was played: the engine was restarted after a crash
    for r in state.records:
        assert r.termination == termination
        assert r.points(0) == 0.0  # the fake engine lost each one
        assert r.plies >= 1
    games = _check_pdn(tmp_path / "match.pdn", state)
    assert all(g.tags["Termination"] == termination.value for g in games)
    text = (tmp_path / "match.pdn").read_text()
    assert {"crash": "crashed", "illegal": "illegal move", "nomove": "gave no move"}[mode] in text


def test_time_forfeit(tmp_path, fake_hub):
    # 0.3 s per move on a 1 s clock: the fourth move cannot be in time
    config = _config([_fake(fake_hub, "slow:0.3", "slow"), "damka hash=16"],
                     TimeControl(time=1.0), tmp_path, games_per_pair=2, grace=0.05)
    state = Match(config).run()
    assert state.done == 2
    for r in state.records:
        assert r.termination == Termination.TIME_FORFEIT and r.points(0) == 0.0
    assert "slow lost on time" in (tmp_path / "match.pdn").read_text()
    # a per-move limit as well: 0.3 s against 0.1 s per move and 0.05 s grace
    config = _config([_fake(fake_hub, "slow:0.3", "slow"), "damka hash=16"],
                     TimeControl(movetime=0.1), None, games_per_pair=1, grace=0.05)
    state = Match(config).run()
    assert state.records[0].termination == Termination.TIME_FORFEIT


def test_engine_that_cannot_start_is_an_error(tmp_path):
    config = _config(["cmd='/nonexistent/engine hub' name=nothing", "damka"],
                     TimeControl(depth=1), tmp_path)
    with pytest.raises(MatchError, match="nothing cannot be used"):
        Match(config).run()
    assert not (tmp_path / "match.pdn").exists()  # a match that never started leaves no file


class _LoggedSpec:
    """Players that log when they start and when they are asked for a move; starting takes a
    while, like a real engine's imports and warm-up."""

    max_instances = None

    def __init__(self, name: str, log: list):
        self.name, self.log = name, log

    def create(self, variant) -> "_LoggedPlayer":
        return _LoggedPlayer(self)


class _LoggedPlayer(Player):
    def __init__(self, spec: _LoggedSpec):
        self.spec, self.name = spec, spec.name

    def start(self) -> None:
        time.sleep(0.02)
        self.spec.log.append(("start", self.name))

    def play(self, game, request) -> Answer:
        self.spec.log.append(("move", self.name))
        now = time.monotonic()
        return Answer(next(iter(game.board.legal_moves)), now, now)


def test_the_players_of_the_first_games_start_before_any_clock_runs():
    """Two games at a time between two engines: all four players are running before the
    first move is asked for, so no engine's start-up takes a core from a game on the clock
    (a 0.1 s-a-move match once lost its first game on time that way). No more are started
    later: the pools reuse them."""
    log: list = []
    config = MatchConfig(engines=[_LoggedSpec("a", log), _LoggedSpec("b", log)],
                         control=TimeControl(depth=1), openings=[start_opening("international")],
                         games_per_pair=6, max_moves=2, comments=False, concurrency=2)
    state = Match(config).run()
    assert state.done == 6
    first_move = log.index(next(e for e in log if e[0] == "move"))
    assert sorted(log[:first_move]) == [("start", "a"), ("start", "a"),
                                        ("start", "b"), ("start", "b")]
    assert [e for e in log[first_move:] if e[0] == "start"] == []


# -- resume ----------------------------------------------------------------------------------


def test_resume_after_a_partial_pdn_file(tmp_path):
    openings = read_openings(ROOT / "bench" / "openings_international.txt", "international")[:3]
    engines = ["damka hash=16", "damka level=easy hash=16 name=easy"]
    full = _config(engines, TimeControl(depth=2), tmp_path, openings=openings)
    state = Match(full).run()
    assert state.done == 6
    text = (tmp_path / "match.pdn").read_text()
    chunks = text.split("\n\n[Event")
    assert len(chunks) == 6
    # keep games 1, 2 and 4 (concurrency finishes games out of order; the tags say which)
    keep = [c if i == 0 else "[Event" + c for i, c in enumerate(chunks)]
    partial = tmp_path / "partial.pdn"
    partial.write_text("\n\n".join(keep[i] for i in (0, 1, 3)).rstrip("\n") + "\n")
    kept_rounds = sorted(int(g.tags["Round"]) for g in read_games(partial))
    config = _config(engines, TimeControl(depth=2), None, openings=openings, resume=True)
    config.pdn = partial
    resumed = Match(config).run()
    assert resumed.done == 6
    assert sum(r.resumed for r in resumed.records) == 3
    rounds = sorted(int(g.tags["Round"]) for g in read_games(partial))
    assert rounds == [1, 2, 3, 4, 5, 6] and len(kept_rounds) == 3
    # same engines, same depth, same openings: deterministic, so the same results
    assert sorted((r.scheduled.round, r.winner) for r in resumed.records) == \
        sorted((r.scheduled.round, r.winner) for r in state.records)
    # a finished match resumed again plays nothing
    again = Match(config).run()
    assert again.done == 6 and all(r.resumed for r in again.records)
    # without --resume an existing file is refused; other engines do not match its games
    config.resume = False
    with pytest.raises(MatchError, match="--resume"):
        Match(config).run()
    other = _config(["damka hash=16", "damka name=other"], TimeControl(depth=2), None,
                    openings=openings, resume=True)
    other.pdn = partial
    with pytest.raises(MatchError, match="other engines or openings"):
        Match(other).run()


def test_resume_refuses_games_of_other_engine_settings_or_another_clock(tmp_path, capsys):
    """The engines' names alone let a resumed match count games played by other settings
    (an auto-named "damka-2" is damka-2 whatever its level) or at another time control."""
    pdn = str(tmp_path / "m.pdn")
    first = ["match", "--engine", "damka hash=8", "--engine", "damka hash=8", "--depth", "1",
             "--games", "2", "--pdn", pdn, "--quiet"]
    assert cli_main(first) == 0
    tags = [g.tags for g in read_games(pdn)]
    assert {t["WhiteEngine"] for t in tags} == {t["BlackEngine"] for t in tags} == {"damka hash=8"}
    capsys.readouterr()
    more = ["--games", "4", "--resume"]
    other_level = ["match", "--engine", "damka hash=8", "--engine", "damka hash=8 level=easy",
                   "--depth", "1", "--pdn", pdn, "--quiet", *more]
    assert cli_main(other_level) == 2
    err = capsys.readouterr().err
    assert "damka-2 is 'damka hash=8 level=easy'" in err and "other engine settings" in err
    engines = first[1:5]
    other_clock = ["match", *engines, "--depth", "2", "--pdn", pdn, "--quiet", *more]
    assert cli_main(other_clock) == 2
    assert "was played at depth 1; this match plays depth 2" in capsys.readouterr().err
    other_rules = ["match", *engines, "--depth", "1", "--variant", "english", "--pdn", pdn,
                   "--quiet", *more]
    assert cli_main(other_rules) == 2
    assert "under the rules of international; this match plays english" in \
        capsys.readouterr().err
    assert len(list(read_games(pdn))) == 2  # nothing was played or lost
    assert cli_main(["match", *engines, "--depth", "1", "--pdn", pdn, "--quiet", *more]) == 0
    assert len(list(read_games(pdn))) == 4


def test_a_pdn_file_that_cannot_be_written_is_refused_before_any_game(tmp_path):
    engines = ["damka hash=8", "damka hash=8 name=b"]
    for where, reason in [(tmp_path / "no-such-folder" / "match.pdn", "No such file"),
                          (tmp_path, "Is a directory")]:
        config = _config(engines, TimeControl(depth=1))
        config.pdn = where
        started = []
        with pytest.raises(MatchError, match=f"cannot write the PDN file .*{reason}"):
            Match(config, on_progress=started.append).run()
        assert started == []  # not even the progress line of game 0: nothing was played


def test_a_write_that_fails_mid_match_ends_it_keeping_the_games_before(tmp_path, monkeypatch):
    import engine.pdn

    append = engine.pdn.append_game
    calls = []

    def disk_full_on_the_second_game(path, text):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        append(path, text)

    monkeypatch.setattr(engine.pdn, "append_game", disk_full_on_the_second_game)
    openings = read_openings(ROOT / "bench" / "openings_international.txt", "international")[:2]
    config = _config(["damka hash=8", "damka hash=8 name=b"], TimeControl(depth=1), tmp_path,
                     openings=openings)
    with pytest.raises(MatchError, match="No space left on device; the games before are in it"):
        Match(config).run()
    assert len(list(read_games(tmp_path / "match.pdn"))) == 1


# -- the command line -------------------------------------------------------------------------


def test_cli_match(tmp_path, capsys):
    pdn = tmp_path / "cli.pdn"
    status = cli_main(["match", "--engine", "damka hash=16", "--engine",
                       "damka level=easy hash=16 name=easy", "--depth", "2", "--games", "2",
                       "--pdn", str(pdn), "--sprt", "0,10,0.05,0.05", "--quiet"])
    out = capsys.readouterr().out
    assert status == 0
    assert "SPRT: LLR" in out and "95% interval" in out
    assert len(list(read_games(pdn))) == 2
    # errors are one line and exit status 2
    assert cli_main(["match", "--engine", "damka", "--depth", "2"]) == 2
    assert cli_main(["match", "--engine", "damka", "--engine", "damka"]) == 2
    assert cli_main(["match", "--engine", "damka", "--engine", "damka", "--depth", "2",
                     "--pdn", str(pdn)]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "Traceback" not in err


def test_sprt_stops_the_match(tmp_path):
    """The stronger coin resigns 10% of its games, the weaker 50%; after one move each a game
    is drawn. The SPRT (0 against 50 Elo) accepts H1 long before the 2000 scheduled games."""
    config = MatchConfig(engines=[CoinSpec("strong", 0.1, 1), CoinSpec("weak", 0.5, 2)],
                         control=TimeControl(depth=1), openings=[start_opening("international")],
                         games_per_pair=2000, max_moves=1, comments=False,
                         pdn=tmp_path / "sprt.pdn", sprt=SprtSettings(0, 50, 0.05, 0.05))
    state = Match(config).run()
    assert state.sprt.decision == "H1"
    assert 10 < state.done < 300
    assert state.sprt.llr >= state.sprt.upper
    assert "H1 accepted" in final_table(state)
    assert len(list(read_games(tmp_path / "sprt.pdn"))) == state.done
    assert {r.termination for r in state.records} <= {Termination.RESIGNATION,
                                                      Termination.MOVE_LIMIT}
