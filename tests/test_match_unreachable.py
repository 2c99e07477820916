"""An engine the match runner cannot reach is never a result (issue 30).

A game that could not start (an engine not started or connected, a connection dropped or a
process dead before its first move) is played again after a back-off; after a few attempts
in a row the match stops with an error naming the engine, keeping the games played, and
``--resume`` goes on. A crash in the middle of a game stays a loss. The DXP followers here
are fakes that restart between games, drop mid-game or never listen again
(tests/dxp_peers.py); the Hub engine is a script that crashes and then cannot start.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from engine.game import Termination
from engine.pdn import read_games
from protocol.cli import main as cli_main
from protocol.match.engines import parse_engine
from protocol.match.games import GameNotStarted, play_game
from protocol.match.openings import start_opening
from protocol.match.report import final_table, progress_line
from protocol.match.runner import Match, MatchConfig, MatchError
from protocol.match.timecontrol import TimeControl

from dxp_peers import RestartingFollower

ROOT = Path(__file__).resolve().parents[1]


def _config(engines, tmp_path, games, **kw) -> MatchConfig:
    kw.setdefault("retry_delay", 0.2)
    return MatchConfig(engines=[parse_engine(e) for e in engines],
                       control=kw.pop("control", TimeControl(depth=1)),
                       openings=[start_opening("international")], games_per_pair=games,
                       pdn=tmp_path / "match.pdn", grace=1.0, **kw)


@pytest.fixture
def follower(request):
    made = []

    def make(**kw) -> RestartingFollower:
        made.append(RestartingFollower(**kw))
        return made[-1]

    yield make
    for f in made:
        f.close()


def _terminations(path: Path) -> list[str]:
    return [g.tags.get("Termination", "") for g in read_games(path, "international")]


def test_a_follower_that_restarts_after_every_game_plays_every_game(tmp_path, follower):
    """The fault of issue 30: a follower that exits when its connection closes and is
    listening again half a second later. Every game is played, none is an engine crash."""
    dxp = follower(delay=0.5)
    config = _config(["damka hash=1", f"dxp=127.0.0.1:{dxp.port} name=dxp"], tmp_path, 6)
    lines = []
    state = Match(config, on_progress=lambda s: lines.append(progress_line(s))).run()
    assert state.done == 6 and not state.not_played
    assert dxp.games == 6 and dxp.connections == 6  # one connection a game, every one played
    assert "engine crash" not in _terminations(tmp_path / "match.pdn")
    assert all(r.termination is not Termination.CRASH for r in state.records)
    # the games that needed a second attempt say so in the record, the PDN and the table
    retried = [r for r in state.records if r.not_started]
    games = {int(g.tags["Round"]): g for g in read_games(tmp_path / "match.pdn")}
    for r in retried:
        assert games[r.scheduled.round].tags["Attempts"] == str(len(r.not_started) + 1)
    if state.not_started():
        assert "not started (an engine not reached, not counted)" in final_table(state)


def test_a_follower_that_drops_mid_game_loses_that_game_and_is_reconnected(tmp_path, follower):
    dxp = follower(delay=0.3, drop_after=3)
    config = _config(["damka hash=1", f"dxp=127.0.0.1:{dxp.port} name=dxp"], tmp_path, 4)
    state = Match(config).run()
    assert state.done == 4 and not state.not_played
    for r in state.records:  # a dropped connection in the middle of a game is a loss
        assert r.termination is Termination.CRASH and r.points(1) == 0.0
    assert dxp.connections == 4
    assert "crashed" in (tmp_path / "match.pdn").read_text()


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_a_follower_that_never_listens_again_stops_the_match_keeping_the_games(
        tmp_path, follower, capsys):
    dxp = follower(lives=1)
    engines = ["damka hash=1", f"dxp=127.0.0.1:{dxp.port} name=dxp"]
    config = _config(engines, tmp_path, 4, start_attempts=3, retry_delay=0.1)
    match = Match(config)
    with pytest.raises(MatchError, match=r"engine dxp could not be reached for game 2 "
                                         r"\(3 attempts\).*cannot connect.*--resume"):
        match.run()
    state = match.state
    assert state.done == 1 and len(state.not_played) == 1
    assert len(state.not_started()) == 3
    assert len(list(read_games(tmp_path / "match.pdn"))) == 1  # only the game played
    table = final_table(state)
    assert "not played: game 2" in table and "stopped after 1 of 4 games" in table
    # --resume goes on from the game played, once the engine is back
    back = follower()
    resumed = _config(["damka hash=1", f"dxp=127.0.0.1:{back.port} name=dxp"], tmp_path, 4,
                      resume=True)
    state = Match(resumed).run()
    assert state.done == 4 and len(list(read_games(tmp_path / "match.pdn"))) == 4
    assert "engine crash" not in _terminations(tmp_path / "match.pdn")
    # the command line: the table of the games played, then the error in one line
    gone = follower(lives=1)
    status = cli_main(["match", "--engine", "damka hash=1", "--engine",
                       f"dxp=127.0.0.1:{gone.port} name=dxp", "--depth", "1", "--games", "3",
                       "--pdn", str(tmp_path / "cli.pdn"), "--quiet"])
    captured = capsys.readouterr()
    assert status == 2
    assert "not played: game 2" in captured.out and "stopped after 1 of 3" in captured.out
    assert "could not be reached" in captured.err and "Traceback" not in captured.err


def test_a_follower_that_drops_before_its_first_move_is_never_a_result(tmp_path, follower):
    dxp = follower(delay=0.05, drop_before_first=True)
    config = _config([f"dxp=127.0.0.1:{dxp.port} name=dxp", "damka hash=1"], tmp_path, 2,
                     start_attempts=3, retry_delay=0.05)
    match = Match(config)
    with pytest.raises(MatchError, match="crashed before its first move"):
        match.run()
    assert match.state.done == 0  # nothing was scored for damka
    assert not (tmp_path / "match.pdn").exists() or not list(read_games(tmp_path / "match.pdn"))


FLAKY_HUB = textwrap.dedent('''
    """A Hub engine that exits at its 3rd go of a game (a crash mid-game) and then, started
    again, exits at once: a restart that fails."""
    import sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from engine.board import Board
    from protocol.hub.text import parse_line

    marker = Path({marker!r})
    if marker.exists():
        sys.exit(4)
    gos, board = 0, None
    for line in sys.stdin:
        command, args = parse_line(line) if line.strip() else ("", {{}})
        reply = {{"hub": "id name=flaky\\nwait", "init": "ready", "ping": "pong"}}.get(command)
        if reply:
            print(reply, flush=True)
        elif command == "new-game":
            gos = 0
        elif command == "pos":
            pos = args.get("pos")
            board = Board.from_hub("international", pos) if pos not in (None, "", "start") \
                else Board()
            for m in args.get("moves", "").split():
                board.push(m)
        elif command == "go":
            gos += 1
            if gos == 3:
                marker.touch()
                sys.exit(3)
            print("done move=" + next(iter(board.legal_moves)).hub(board.variant), flush=True)
''')


def test_a_hub_engine_whose_restart_fails_is_not_scored(tmp_path):
    script = tmp_path / "flaky_hub.py"
    script.write_text(FLAKY_HUB.format(root=str(ROOT), marker=str(tmp_path / "crashed")))
    config = _config([f"cmd='{sys.executable} {script}' name=flaky", "damka hash=1"],
                     tmp_path, 3, start_attempts=2, retry_delay=0.05)
    match = Match(config)
    with pytest.raises(MatchError, match="engine flaky could not be reached for game 2"):
        match.run()
    state = match.state
    assert state.done == 1  # the mid-game crash is a loss; the failed restarts are no result
    assert state.records[0].termination is Termination.CRASH
    assert _terminations(tmp_path / "match.pdn") == ["engine crash"]


def test_play_game_with_a_player_that_could_not_start_is_no_result():
    from engine.game import Game

    game = Game("international")
    with pytest.raises(GameNotStarted) as raised:
        play_game(game, None, object(), TimeControl(depth=1))
    assert raised.value.colours == {True} and "White could not be started" in raised.value.reason
    assert game.outcome() is None and game.ply == 0
