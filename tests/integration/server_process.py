"""A `tae-server serve` subprocess for integration tests: started, found on its port, killed.

The server logs JSON lines on stdout; a reader thread collects them, and `start` waits for the
"listening on" event to learn the port (the server listens on tcp:0, so tests never race for a
port). Every wait is bounded; `stop` and `kill` always reap the process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tae_server(*args: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    """Run `python -m server.cli ARGS` to the end."""
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


class ServerProcess:
    def __init__(self, database: str, *args: str, cwd: Path = ROOT):
        self.database = database
        self.args = args
        self.cwd = cwd
        self.process: subprocess.Popen | None = None
        self.events: list[dict] = []
        self.lines: list[str] = []
        self.stderr = ""
        self._seen = threading.Condition()
        self._done = False

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--listen",
            "tcp:0:interface=127.0.0.1",
            "--database",
            self.database,
            "--log-format",
            "json",
            *self.args,
        ]

    def start(self, timeout: float = 30) -> int:
        """Start the server; its port once it listens."""
        assert self.process is None or self.process.poll() is not None
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        with self._seen:
            self.events, self.lines, self._done = [], [], False
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        event = self.wait_for(lambda e: str(e.get("message", "")).startswith("listening on"), timeout)
        return int(event["port"])

    def _read(self, process: subprocess.Popen) -> None:
        # The reader of a killed process may still be draining its pipe when the next process
        # starts: it keeps to the lists of its own process and never marks the new one done.
        events, lines = self.events, self.lines
        for line in process.stdout:
            with self._seen:
                lines.append(line)
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
                self._seen.notify_all()
        with self._seen:
            if process is self.process:
                self._done = True
            self._seen.notify_all()

    def wait_for(self, predicate, timeout: float = 30) -> dict:
        """The first logged event that satisfies `predicate` (waiting for it)."""
        deadline = time.monotonic() + timeout
        with self._seen:
            while True:
                for event in self.events:
                    if predicate(event):
                        return event
                if self._done:
                    self.process.wait(10)
                    raise RuntimeError(
                        f"the server exited with {self.process.returncode}: "
                        f"{self.process.stderr.read().strip()}"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no such log event in {timeout} s; log: {self.lines[-5:]}")
                self._seen.wait(min(left, 0.2))

    def kill(self) -> None:
        """SIGKILL, and reap the process (a zombie would look alive to the next server)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self._reap(30)

    def terminate(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Stop the server with `sig`; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self._reap(timeout)

    def _reap(self, timeout: float) -> int | None:
        if self.process is None:
            return None
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        try:
            self.stderr = self.process.stderr.read()
        except (OSError, ValueError):
            pass
        return self.process.returncode
