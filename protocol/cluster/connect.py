"""Opening the Ray cluster named by ``--cluster``: ``auto``, ``ray://HOST:PORT`` or ``local``.

Ray is imported here and only here when a command runs with ``--cluster``; without the
``cluster`` extra the command fails with one line saying how to install it.

A ``local`` Ray listens on 127.0.0.1 only, and Ray always starts from an empty directory, so
that its workers import the installed damka, not a source checkout the command runs in. A
``ray://`` address on another machine needs token authentication in this process (or
``DAMKA_RAY_INSECURE=1``): a cluster that lets in a client without a token runs code for
anyone who reaches its ports.
"""

from __future__ import annotations

import importlib
import ipaddress
import logging
import os
import re
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["ClusterError", "import_ray", "check_address", "connected", "start_local",
           "COORDINATOR_DIR_ENV", "INSECURE_ENV"]

#: the object store of a Ray started in-process: results are a few kilobytes each
LOCAL_OBJECT_STORE_MB = 128
#: how often a ``ray://`` connection is tried when the head could not start its server for us
CLIENT_SERVER_ATTEMPTS = 3
#: what Ray's client proxy answers when the server it forks for one client died at start-up
#: (seen on a busy head: the fork happens while gRPC threads run, and the child can die), or
#: when it could not start one because a process it looked at was a zombie at that moment
#: (psutil's ZombieProcess, seen on a head whose machine had just ended other processes)
CLIENT_SERVER_FAILED = ("Starting Ray client server failed", "psutil.ZombieProcess")
#: the one address every process of a local Ray listens on
LOOPBACK = "127.0.0.1"
#: Ray's switch for its one-machine mode (the default on macOS and Windows), in which it keeps
#: 127.0.0.1 as the node's address instead of replacing it by the machine's network address
ONE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: where the coordinator works, for the slots of a local Ray (see farm.prepare_worker)
COORDINATOR_DIR_ENV = "DAMKA_COORDINATOR_DIR"
#: "1": connect to a ray:// address on another machine without token authentication
INSECURE_ENV = "DAMKA_RAY_INSECURE"


class ClusterError(ValueError):
    """A cluster that cannot be used as asked (no Ray, a bad address, no usable worker)."""


def import_ray() -> Any:
    """The ``ray`` module, or ClusterError naming the extra that provides it."""
    try:
        import ray
    except ImportError:
        raise ClusterError("--cluster needs Ray: install the cluster extra, "
                           "pip install 'damka[cluster]'") from None
    return ray


def check_address(address: str) -> str:
    """``address`` if it is one ``--cluster`` accepts, else ClusterError (before any work).

    Ray's client cannot tell whether a cluster checks tokens; without one here, a cluster that
    lets us in lets anyone in, so a remote ``ray://`` needs RAY_AUTH_MODE=token (Ray then
    sends the token, and a cluster with authentication refuses clients without it)."""
    if address in ("auto", "local"):
        return address
    match = re.fullmatch(r"ray://([^\s:/]+):\d{1,5}", address)
    if match is None:
        raise ClusterError(f"--cluster takes auto, local or ray://HOST:PORT, not {address!r}")
    if (not _is_loopback(match[1]) and os.environ.get("RAY_AUTH_MODE", "").lower() != "token"
            and os.environ.get(INSECURE_ENV) != "1"):
        raise ClusterError(
            f"--cluster {address} would connect without token authentication, and a cluster "
            "that lets this in runs code for anyone who reaches it: set RAY_AUTH_MODE=token "
            "and the cluster's token (RAY_AUTH_TOKEN or ~/.ray/auth_token), or "
            f"{INSECURE_ENV}=1 to connect anyway")
    return address


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def connected(address: str, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray connected to ``address`` for the ``with`` block (``ray`` is yielded).

    A Ray this process already runs is used as it is and left running (tests share one);
    one opened here is shut down at the end. ``local`` starts Ray in this process with
    ``num_cpus`` (default: every core), see ``start_local``. Ray is started or joined from an
    empty directory, which Ray puts first on its workers' sys.path instead of ours.
    """
    check_address(address)
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    with tempfile.TemporaryDirectory(prefix="damka-ray-", ignore_cleanup_errors=True) as empty:
        if address == "local":
            start_local(ray, empty, num_cpus=num_cpus)
        else:
            with _working_directory(empty):
                _init(ray, {"address": address, "logging_level": logging.ERROR,
                            "log_to_driver": False})
        try:
            yield ray
        finally:
            ray.shutdown()


def start_local(ray: Any, empty: str, *, num_cpus: int | None = None,
                object_store_mb: int = LOCAL_OBJECT_STORE_MB) -> None:
    """Ray started in this process for this machine alone, left running: no dashboard, a
    small object store, every process listening on 127.0.0.1 only (ClusterError if the
    installed Ray would not), its workers started in the empty directory ``empty``.

    Ray replaces 127.0.0.1 by the machine's network address, and its gRPC servers then listen
    on every interface, unless it runs in its one-machine mode; it reads that switch when it
    is imported, so it is set in its module too while Ray starts. Ray puts the driver's working
    directory first on its workers' sys.path: started in a source checkout they would import
    its uncompiled engine/. The slots go back to this directory once they run (relative
    paths of engines and weights mean what they mean here)."""
    options = dict(address="local", num_cpus=num_cpus, include_dashboard=False,
                   dashboard_host=LOOPBACK, _node_ip_address=LOOPBACK,
                   object_store_memory=object_store_mb * 2**20,
                   logging_level=logging.ERROR, log_to_driver=False,
                   # Ray lowers its workers' priority (nice 15): a game's clock runs there
                   _system_config={"worker_niceness": 0})
    constants = importlib.import_module("ray._private.ray_constants")
    one_machine = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    with _environment({ONE_MACHINE_ENV: "0", COORDINATOR_DIR_ENV: os.getcwd()}), \
            _working_directory(empty):
        constants.ENABLE_RAY_CLUSTER = False
        try:
            _init(ray, options)
        finally:
            if one_machine is None:
                del constants.ENABLE_RAY_CLUSTER
            else:
                constants.ENABLE_RAY_CLUSTER = one_machine
    node = ray.util.get_node_ip_address()
    if not _is_loopback(node):
        ray.shutdown()
        raise ClusterError(f"the local Ray would listen on {node}, not on {LOOPBACK} only "
                           f"(Ray {getattr(ray, '__version__', '?')}); damka does not start "
                           "it so")


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in os.environ for the block (Ray's processes started in it inherit them)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _working_directory(path: str) -> Iterator[None]:
    """This process in ``path`` for the block: the directory Ray gives its workers' sys.path."""
    back = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(back)


def _init(ray: Any, options: dict[str, Any]) -> None:
    """``ray.init(**options)``, tried again when the head's client server failed to start
    (a transient failure of the head, not of the address); any other failure is final."""
    address = options["address"]
    refused = getattr(getattr(ray, "exceptions", None), "AuthenticationError", ValueError)
    for attempt in range(1, CLIENT_SERVER_ATTEMPTS + 1):
        try:
            ray.init(**options)
            return
        except (ConnectionError, RuntimeError, ValueError, refused) as exc:
            reason = " ".join(str(exc).split())
            transient = any(marker in reason for marker in CLIENT_SERVER_FAILED)
            if not transient or attempt == CLIENT_SERVER_ATTEMPTS:
                raise ClusterError(f"cannot connect to the Ray cluster at {address}: "
                                   f"{reason}") from None
        ray.shutdown()
        print(f"damka: the Ray cluster at {address} could not start a client server for us; "
              f"trying again ({attempt + 1} of {CLIENT_SERVER_ATTEMPTS})", file=sys.stderr)
        time.sleep(attempt)
