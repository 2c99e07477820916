"""Writing to a DXP peer with a deadline.

``sendall`` has no timeout of its own, and a socket timeout would also cut the reads that
another thread is blocked in (the match runner's reader waits as long as the follower
thinks). So each write waits for the socket to take more, at most ``timeout`` seconds in
all: a peer that never reads ends its connection instead of wedging the thread that writes
(and the Ctrl-C that joins it).
"""

from __future__ import annotations

import select
import socket
import time

__all__ = ["SEND_TIMEOUT", "send_all"]

#: seconds a peer may leave a message of ours unread before its connection is given up
SEND_TIMEOUT = 10.0


def send_all(sock: socket.socket, data: bytes, timeout: float | None = None) -> None:
    """All of ``data`` into ``sock`` within ``timeout`` seconds (default SEND_TIMEOUT);
    TimeoutError (an OSError) when the peer does not take it in time, other OSErrors as the
    socket raises them."""
    timeout = SEND_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout
    view = memoryview(data)
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    while view:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(max(1, int(left * 1000))):
            raise TimeoutError(f"the peer took {len(data) - len(view)} of {len(data)} bytes "
                               f"in {timeout:g} s")
        try:
            sent = sock.send(view, socket.MSG_DONTWAIT)
        except BlockingIOError:
            continue
        view = view[sent:]
