"""A scripted Hub client for tests: runs the real ``damka hub`` process and reads its lines
with timeouts (a reader thread fills a queue, so a silent engine fails the test, not hangs it)."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time

HUB_COMMAND = [sys.executable, "-m", "protocol", "hub"]


class HubProcess:
    def __init__(self, command=HUB_COMMAND):
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: "queue.Queue[tuple[float, str | None]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))
        self.lines.put((time.monotonic(), None))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 10.0) -> str:
        _, line = self.recv_timed(timeout)
        return line

    def recv_timed(self, timeout: float = 10.0) -> tuple[float, str]:
        try:
            stamp, line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the engine within {timeout} s") from None
        if line is None:
            raise AssertionError(f"the engine closed its output (stderr: {self.stderr_text()})")
        return stamp, line

    def expect(self, prefix: str, timeout: float = 10.0) -> tuple[str, list[str]]:
        """Read lines up to the first that starts with ``prefix``; returns it and those before."""
        skipped = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.recv(max(0.01, deadline - time.monotonic()))
            if line.split(" ", 1)[0] == prefix:
                return line, skipped
            skipped.append(line)

    def silent_for(self, seconds: float) -> bool:
        try:
            _, line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        self.lines.put((time.monotonic(), line))  # keep it for the test to see
        return False

    def handshake(self, **params: str) -> list[str]:
        self.send("hub")
        line, before = self.expect("wait")
        for name, value in params.items():
            self.send(f"set-param name={name.replace('_', '-')} value={value}")
        self.send("init")
        self.expect("ready")
        return before

    def stderr_text(self) -> str:
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "(still running)"
        return self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
