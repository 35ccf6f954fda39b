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
from typing import IO, Any

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


def start_serve(
    cwd: Path, args: Sequence[str], port: int, log: IO[Any], timeout: float = 30
) -> subprocess.Popen:
    """`python -m server.cli serve ARGS` in `cwd`, once `port` listens. Its log goes to `log`, an
    open file: never to a pipe that nobody reads, where a server that logs more than the pipe
    holds would stop in the middle of a write, and every answer after it would time out. A
    server that exits or does not listen in time is killed, and the RuntimeError says what its
    log ends with."""
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process, timeout)
    except RuntimeError as error:
        process.kill()
        process.wait()
        log.flush()
        raise RuntimeError(f"{error}\n{log_tail(Path(log.name))}") from None
    return process


@contextmanager
def serve_process(
    cwd: Path, args: Sequence[str], port: int, timeout: float = 30
) -> Iterator[subprocess.Popen]:
    """`start_serve` with its log appended to `cwd`/server.log; terminated afterwards."""
    with open(Path(cwd) / "server.log", "ab") as log:
        process = start_serve(cwd, args, port, log, timeout)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def log_tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of the log file at `path` (for a failed test's message)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return f"(no log at {path}: {error})"
    return "\n".join(text.splitlines()[-lines:])
