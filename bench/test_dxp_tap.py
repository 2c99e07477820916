"""The soak's DXP referee (bench/dxp_tap.py) on scripted dialogues: it must see every fault
it claims to count, and none in a clean game. Run on purpose: ``pytest bench/test_dxp_tap.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dxp_tap import FOLLOWER, INITIATOR, DxpTap, _Referee  # noqa: E402
from protocol.dxp.codec import Chat, DxpMove, EndReason, GameAccept, GameEnd, GameRequest  # noqa: E402

MOVETIME, GRACE = 0.05, 0.1


@pytest.fixture
def tap():
    tap = DxpTap(("127.0.0.1", 9), MOVETIME, GRACE)  # never connected to: only refereeing
    yield tap
    tap.close()


def begin(tap: DxpTap) -> _Referee:
    """A game from the start position, the initiator White; both messages at t=0."""
    referee = _Referee(tap, 1)
    referee.observe(INITIATOR, 0.0, GameRequest("init", follower_white=False).to_text())
    referee.observe(FOLLOWER, 0.0, GameAccept("follow").to_text())
    return referee


def kinds(tap: DxpTap) -> list[str]:
    return [f.kind for f in tap.faults]


def test_moves_in_time_and_in_turn_are_clean(tap):
    referee = begin(tap)
    referee.observe(INITIATOR, 0.05, DxpMove(32, 28).to_text())
    referee.observe(FOLLOWER, 0.11, DxpMove(19, 23).to_text())
    assert tap.faults == []
    assert referee.game is not None and referee.game.plies == 2
    assert referee.game.move_times == pytest.approx([0.05, 0.06])


def test_a_slow_move_is_a_time_forfeit(tap):
    referee = begin(tap)
    referee.observe(INITIATOR, MOVETIME + GRACE + 0.01, DxpMove(32, 28).to_text())
    assert kinds(tap) == ["time forfeit"]
    assert "initiator" in tap.faults[0].text and "ply 1" in tap.faults[0].text


def test_an_illegal_move_ends_the_game(tap):
    referee = begin(tap)
    referee.observe(INITIATOR, 0.01, DxpMove(32, 23).to_text())  # two rows at once, nothing taken
    assert kinds(tap) == ["illegal move"]
    assert referee.game is None and tap.games[0].end == "illegal move"


def test_a_move_out_of_turn(tap):
    begin(tap).observe(FOLLOWER, 0.01, DxpMove(19, 23).to_text())
    assert kinds(tap) == ["protocol"]


def test_an_end_before_the_rules_end_the_game(tap):
    referee = begin(tap)
    referee.observe(INITIATOR, 0.01, GameEnd(EndReason.I_WIN).to_text())
    referee.observe(FOLLOWER, 0.02, GameEnd(EndReason.UNKNOWN).to_text())  # the acknowledgement
    assert kinds(tap) == ["protocol"]
    assert "before the rules" in tap.faults[0].text and len(tap.games) == 1


def test_chats_other_than_a_rules_end_are_faults(tap):
    referee = begin(tap)
    referee.observe(FOLLOWER, 0.01, Chat("draw: threefold repetition").to_text())
    referee.observe(FOLLOWER, 0.01, Chat("no legal moves").to_text())
    referee.observe(FOLLOWER, 0.01, Chat("error: illegal move 32-27").to_text())
    referee.observe(FOLLOWER, 0.01, Chat("time forfeit: init's time ran out").to_text())
    assert kinds(tap) == ["protocol", "time forfeit"]


def test_a_malformed_message_and_a_closed_connection(tap):
    referee = begin(tap)
    referee.observe(INITIATOR, 0.01, "M0100")
    referee.closed()
    assert kinds(tap) == ["protocol", "connection"]
    assert tap.games[0].end == "connection closed"
