"""Real servers for integration tests: free ports on 127.0.0.1 and `tae-server serve` processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen | None = None, timeout: float = 30) -> None:
    """Return once 127.0.0.1:`port` accepts connections; RuntimeError if `process` ends first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process is not None and process.poll() is not None:
                output = process.stdout.read().decode(errors="replace") if process.stdout else ""
                raise RuntimeError(f"server exited with {process.returncode}: {output}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port} after {timeout} s") from None
            time.sleep(0.05)


@contextmanager
def serve_process(
    cwd: Path, args: Sequence[str], port: int, timeout: float = 30, log: Any = subprocess.PIPE
) -> Iterator[subprocess.Popen]:
    """`python -m server.cli serve ARGS` in `cwd`, once `port` listens; terminated afterwards.
    Its log goes to a pipe nobody reads after the start (enough for a few hundred lines); a
    test that makes the server log much gives `log`, an open file."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", *args],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process, timeout)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
