"""A Hub engine is ended with its whole process group (issue 30 item 10).

An engine started through a wrapper (``cmd='sh -c "..."'``) that hangs without reading its
input used to survive the match runner's kill of the wrapper and keep a core busy. The
engine here is a script behind ``sh -c`` (not exec'd: the shell stays as the wrapper) that
writes its pid, answers the handshake and then hangs on ``go``.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.limits import Limits
from protocol.hub.client import HubClient, HubTimeoutError
from protocol.match.engines import parse_engine
from protocol.match.openings import start_opening
from protocol.match.runner import Match, MatchConfig
from protocol.match.timecontrol import TimeControl

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

HANGING_HUB = textwrap.dedent('''
    import os, sys, time
    open({pidfile!r}, "w").write(str(os.getpid()))
    gos = 0
    for line in sys.stdin:
        word = line.split(" ", 1)[0].strip()
        if word == "hub":
            print("id name=hang\\nwait", flush=True)
        elif word == "init":
            print("ready", flush=True)
        elif word == "ping":
            print("pong", flush=True)
        elif word == "go":
            gos += 1
            if gos == 1 and {warm_up!r}:  # the runner's warm-up search at start
                print("done move=32-28", flush=True)
                continue
            while True:  # hangs, reading nothing more
                time.sleep(1)
''')


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it waits only for its parent (here the wrapper, killed too)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _engine(tmp_path: Path, warm_up: bool = False) -> tuple[list[str], Path]:
    script = tmp_path / "hang_hub.py"
    pidfile = tmp_path / "engine.pid"
    script.write_text(HANGING_HUB.format(pidfile=str(pidfile), warm_up=warm_up))
    return ["sh", "-c", f"{sys.executable} {script}; echo wrapper done"], pidfile


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_kill_ends_the_engine_behind_a_wrapper(tmp_path):
    command, pidfile = _engine(tmp_path)
    client = HubClient(command, variant="international", name="hang")
    client.start()
    engine_pid = int(pidfile.read_text())
    assert engine_pid != client.process.pid  # the shell is a wrapper, not exec'd
    client.reply_timeout = 0.2  # it never answers `stop`: no need to wait the default 5 s for it
    with pytest.raises(HubTimeoutError):
        client.go(None, limits=Limits(movetime=0.05), timeout=0.3)
    client.kill()
    assert _wait_gone(engine_pid), "the engine behind the wrapper is still running"


@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_a_match_timeout_ends_the_wrapped_engine(tmp_path):
    command, pidfile = _engine(tmp_path, warm_up=True)
    spec = parse_engine(f"cmd='{' '.join(command[:2])} \"{command[2]}\"' name=hang")
    config = MatchConfig(engines=[spec, parse_engine("damka hash=1")],
                         control=TimeControl(movetime=0.05), openings=[start_opening("international")],
                         games_per_pair=1, grace=0.2, hang_timeout=1.0)
    state = Match(config).run()
    # it hangs on its first move: a loss on time (it was reached), and nothing is left of it
    assert state.done == 1 and state.records[0].points(0) == 0.0
    assert state.records[0].termination.value == "time forfeit"
    engine_pid = int(pidfile.read_text())
    assert _wait_gone(engine_pid), "the match left the wrapped engine running"
