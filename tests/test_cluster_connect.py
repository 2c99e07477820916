"""Connecting to ``--cluster ray://HOST:PORT``: a head that could not start its client server
for us is asked again (a transient failure seen on busy heads); every other failure ends the
command at once with one line; an address on another machine is refused without token
authentication unless DAMKA_RAY_INSECURE=1 says so. Ray itself is replaced by a recorder, so
these run without it.
"""

from __future__ import annotations

import pytest

from protocol.cli import main as cli_main
from protocol.cluster import connect
from protocol.cluster.connect import (CLIENT_SERVER_ATTEMPTS, INSECURE_ENV, ClusterError,
                                      check_address, connected)

ADDRESS = "ray://10.0.0.5:10001"
SERVER_FAILED = ("Initialization failure from server:\nTraceback ...\nRuntimeError: Starting Ray "
                 "client server failed. See ray_client_server_23000.err for detailed logs.")


class FakeRay:
    """Fails ``init`` with the given errors, in order, then connects; records every call."""

    def __init__(self, *errors: BaseException):
        self.errors = list(errors)
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **options) -> None:
        self.calls.append(f"init {options['address']}")
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.calls.append("shutdown")


@pytest.fixture
def no_wait(monkeypatch):
    monkeypatch.setattr(connect.time, "sleep", lambda seconds: None)


@pytest.fixture(autouse=True)
def token(monkeypatch):
    """This process authenticates with a token unless a test says otherwise."""
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.delenv(INSECURE_ENV, raising=False)


def use(monkeypatch, fake: FakeRay) -> FakeRay:
    monkeypatch.setattr(connect, "import_ray", lambda: fake)
    return fake


def test_a_client_server_that_failed_to_start_is_asked_for_again(monkeypatch, no_wait, capsys):
    fake = use(monkeypatch, FakeRay(ConnectionAbortedError(SERVER_FAILED)))
    with connected(ADDRESS) as ray:
        assert ray is fake
        assert fake.calls == [f"init {ADDRESS}", "shutdown", f"init {ADDRESS}"]
    assert fake.calls[-1] == "shutdown"
    assert "trying again (2 of 3)" in capsys.readouterr().err


ZOMBIE = ("Initialization failure from server: Traceback (most recent call last): File "
          "\".../ray/util/client/server/proxier.py\", line 396, in start_specific_server cmd = "
          "psutil_proc.cmdline() ... psutil.ZombieProcess: PID still exists but it's a zombie "
          "(pid=18036)")


def test_a_proxy_that_met_a_zombie_process_is_asked_for_again(monkeypatch, no_wait, capsys):
    """Ray's proxy fails to start our server when a process it inspects is a zombie at that
    moment (seen once in the slow tier's two-node test): a transient failure, tried again."""
    fake = use(monkeypatch, FakeRay(ConnectionAbortedError(ZOMBIE)))
    with connected(ADDRESS) as ray:
        assert ray is fake
        assert fake.calls == [f"init {ADDRESS}", "shutdown", f"init {ADDRESS}"]
    assert "trying again (2 of 3)" in capsys.readouterr().err


def test_it_gives_up_after_the_last_attempt_with_one_line(monkeypatch, no_wait):
    fake = use(monkeypatch, FakeRay(*[ConnectionAbortedError(SERVER_FAILED)]
                                    * CLIENT_SERVER_ATTEMPTS))
    with pytest.raises(ClusterError) as error:
        with connected(ADDRESS):
            pytest.fail("connected although every attempt failed")
    assert fake.calls.count(f"init {ADDRESS}") == CLIENT_SERVER_ATTEMPTS
    message = str(error.value)
    assert message.startswith(f"cannot connect to the Ray cluster at {ADDRESS}: ")
    assert "\n" not in message and "Starting Ray client server failed" in message


def test_other_failures_are_not_tried_again(monkeypatch, no_wait, capsys):
    fake = use(monkeypatch, FakeRay(ConnectionError("ray client connection timeout")))
    with pytest.raises(ClusterError, match="ray client connection timeout"):
        with connected(ADDRESS):
            pass
    assert fake.calls == [f"init {ADDRESS}"]
    assert capsys.readouterr().err == ""


def test_a_remote_cluster_without_token_authentication_is_refused(monkeypatch, capsys):
    monkeypatch.delenv("RAY_AUTH_MODE")
    fake = use(monkeypatch, FakeRay())
    with pytest.raises(ClusterError) as error:
        with connected(ADDRESS):
            pytest.fail("connected without token authentication")
    assert fake.calls == []
    message = str(error.value)
    assert "\n" not in message and "without token authentication" in message
    assert "RAY_AUTH_MODE=token" in message and f"{INSECURE_ENV}=1" in message
    assert cli_main(["match", "--engine", "damka", "--engine", "damka", "--depth", "1",
                     "--cluster", ADDRESS]) == 2
    err = capsys.readouterr().err
    assert "without token authentication" in err and "Traceback" not in err


def test_loopback_addresses_and_the_opt_in_need_no_token(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    for address in ("ray://127.0.0.1:10001", "ray://localhost:10001", "auto", "local"):
        assert check_address(address) == address
    with pytest.raises(ClusterError, match="without token authentication"):
        check_address("ray://head.lan:10001")
    monkeypatch.setenv(INSECURE_ENV, "1")
    assert check_address("ray://head.lan:10001") == "ray://head.lan:10001"
