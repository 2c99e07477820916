"""Run ``damka play``: bind the port first, print the address, open the browser, serve.

The socket is bound and listening before anything is printed, so the printed address works at
once (tests and scripts read it) and ``--port 0`` means a free port chosen by the system. The
browser is opened from a daemon thread and only where a graphical one can exist: on a machine
without a display ``webbrowser`` would pick a console browser that takes over the terminal,
and a slow or failing browser must never block or end the server.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import webbrowser
from typing import TextIO

import uvicorn

from .app import create_app
from .defaults import DEFAULT_HOST, DEFAULT_PORT

__all__ = ["serve", "open_browser", "url_for"]


def url_for(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("", "0.0.0.0") else host
    if ":" in shown:  # an IPv6 address
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> bool:
    """Ask for the page in a browser without waiting for it; False when there is no display."""
    if not _has_display():
        return False

    def run() -> None:
        try:
            webbrowser.open(url, new=2)
        except Exception:  # noqa: BLE001 - no browser is no reason to stop serving
            pass

    threading.Thread(target=run, name="damka-browser", daemon=True).start()
    return True


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (0: a free port); OSError if that cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, browser: bool = True,
          out: TextIO | None = None) -> int:
    """Serve the page until interrupted; returns the exit status."""
    out = out or sys.stdout
    try:
        sock = bind(host, port)
    except OSError as exc:
        print(f"damka play: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    url = url_for(host, sock.getsockname()[1])
    print(f"damka play: serving on {url}  (Ctrl-C to stop)", file=out, flush=True)
    if browser and not open_browser(url):
        print("damka play: no browser to open here; open the address above in one", file=out, flush=True)
    config = uvicorn.Config(create_app(), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0
