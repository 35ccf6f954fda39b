"""A real ``tae-server`` in a subprocess, for end-to-end tests over TCP.

``tae_server`` starts ``python -m server.cli serve`` on a free loopback port with a fresh SQLite
database in the test's temporary directory, waits until the port accepts connections, and
returns ``(host, port)``. The server is stopped (terminate, then kill) when the test ends,
whatever happens. Extra ``serve`` arguments come from indirect parametrization::

    @pytest.mark.parametrize("tae_server", [["--seed", "7"]], indirect=True)
    def test_something(tae_server): ...

Defaults: ``--turn-length 0`` (turns end when every player has finished) and the server's
default open game "tae". ``running_tae_server(directory, *args)`` is the same as a context
manager, for tests that need several servers or to restart one on the same database.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0


@dataclass
class ServerProcess:
    host: str
    port: int
    database: Path
    log_path: Path
    process: subprocess.Popen

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def running_tae_server(
    directory: Path, *args: str, database: Path | None = None, attempts: int = 3
) -> Iterator[ServerProcess]:
    """Start a server (retrying on another port if the chosen one was taken meanwhile),
    yield it once its port accepts connections, stop it on exit."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    database = database or directory / "tae.db"
    last_log = ""
    for _attempt in range(attempts):
        port = free_port()
        log_path = directory / f"server-{port}.log"
        command = [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--listen",
            f"tcp:{port}:interface={HOST}",
            "--turn-length",
            "0",
            "--database",
            f"sqlite:///{database}",
            *args,
        ]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with open(log_path, "wb") as log_file:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        server = ServerProcess(HOST, port, database, log_path, process)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _accepts(HOST, port):
                if process.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"tae-server did not listen on {HOST}:{port} within {START_TIMEOUT} s:\n"
                        + server.log()
                    )
                time.sleep(0.05)
            else:
                yield server
                return
            last_log = server.log()  # it exited: maybe the port was taken; try another
        finally:
            _stop(process)
    raise RuntimeError(f"tae-server did not start after {attempts} attempts:\n{last_log}")


@pytest.fixture
def tae_server(request, tmp_path) -> Iterator[tuple[str, int]]:
    """(host, port) of a fresh real server; see the module docstring."""
    args = tuple(getattr(request, "param", ()) or ())
    with running_tae_server(tmp_path / "server", *args) as server:
        yield server.address
