"""Opening the Ray cluster named by ``--cluster``: ``auto``, ``ray://HOST:PORT`` or ``local``.

Ray is imported here and only here when a command runs with ``--cluster``; without the
``cluster`` extra the command fails with one line saying how to install it.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["ClusterError", "import_ray", "check_address", "connected"]

#: the object store of a Ray started in-process: results are a few kilobytes each
LOCAL_OBJECT_STORE_MB = 128
#: how often a ``ray://`` connection is tried when the head could not start its server for us
CLIENT_SERVER_ATTEMPTS = 3
#: what Ray's client proxy answers when the server it forks for one client died at start-up
#: (seen on a busy head: the fork happens while gRPC threads run, and the child can die)
CLIENT_SERVER_FAILED = "Starting Ray client server failed"


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
    """``address`` if it is one ``--cluster`` accepts, else ClusterError (before any work)."""
    if address in ("auto", "local") or re.fullmatch(r"ray://[^\s:/]+:\d{1,5}", address):
        return address
    raise ClusterError(f"--cluster takes auto, local or ray://HOST:PORT, not {address!r}")


@contextmanager
def connected(address: str, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray connected to ``address`` for the ``with`` block (``ray`` is yielded).

    A Ray this process already runs is used as it is and left running (tests share one);
    one opened here is shut down at the end. ``local`` starts Ray in this process with
    ``num_cpus`` (default: every core), no dashboard and a small object store.
    """
    check_address(address)
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == "local":
        # Ray lowers its workers' priority (nice 15) by default: a game's clock runs there
        options.update(address="local", num_cpus=num_cpus, include_dashboard=False,
                       object_store_memory=LOCAL_OBJECT_STORE_MB * 2**20,
                       _system_config={"worker_niceness": 0})
    else:
        options["address"] = address
    _init(ray, options)
    try:
        yield ray
    finally:
        ray.shutdown()


def _init(ray: Any, options: dict[str, Any]) -> None:
    """``ray.init(**options)``, tried again when the head's client server failed to start
    (a transient failure of the head, not of the address); any other failure is final."""
    address = options["address"]
    for attempt in range(1, CLIENT_SERVER_ATTEMPTS + 1):
        try:
            ray.init(**options)
            return
        except (ConnectionError, RuntimeError, ValueError) as exc:
            reason = " ".join(str(exc).split())
            if CLIENT_SERVER_FAILED not in reason or attempt == CLIENT_SERVER_ATTEMPTS:
                raise ClusterError(f"cannot connect to the Ray cluster at {address}: "
                                   f"{reason}") from None
        ray.shutdown()
        print(f"damka: the Ray cluster at {address} could not start a client server for us; "
              f"trying again ({attempt + 1} of {CLIENT_SERVER_ATTEMPTS})", file=sys.stderr)
        time.sleep(attempt)
