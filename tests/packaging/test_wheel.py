"""What an operator installs: the wheel, in a fresh virtual environment, runs as `pipx install`
would run it (no source tree, no PYTHONPATH): `tae-server serve` on a free port with a new
SQLite file (its schema comes from the migrations inside the package), `tae-client` creates an
account and reads `status` from it, and `tae-server status` reads the same database.

The wheel's dependencies come from the package index pip is configured with (and its cache).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ruleset", "protocol", "server", "clients")

pytestmark = pytest.mark.timeout(600)


def run(*command, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, command))}\n{result.stdout}\n{result.stderr}"
    return result


def clean_env() -> dict[str, str]:
    """The environment without anything that would let the source tree leak in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "TAE_"))}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def source_copy(target: Path) -> Path:
    """The files a build reads, copied, so building leaves nothing in the working tree."""

    def ignored(directory, names):
        return {
            n
            for n in names
            if n in {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", "tests"}
            or n.endswith((".egg-info", ".db", ".db-wal", ".db-shm"))
        }

    shutil.copytree(ROOT, target, ignore=ignored)
    return target


def data_files_in_source() -> set[str]:
    """Every file inside our packages that is not Python source (maps, migrations' templates…)."""
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts:
                found.add(path.relative_to(ROOT).as_posix())
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = source_copy(out / "src")
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--quiet",
        "-w",
        str(out),
        str(source),
        env=clean_env(),
    )
    (built,) = out.glob("tpserver_tae-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; its bin directory."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    run(sys.executable, "-m", "venv", str(venv), env=clean_env())
    run(str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel), env=clean_env())
    return venv / "bin"


def test_the_wheel_holds_the_packages_their_data_and_the_license(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"{p}/__init__.py" for p in PACKAGES} <= names
    assert "server/migrations/env.py" in names
    revisions = {p.relative_to(ROOT).as_posix() for p in (ROOT / "server/migrations/versions").glob("0*.py")}
    assert revisions and revisions <= names
    missing = data_files_in_source() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    assert not any(name.startswith("tests/") for name in names)
    shared = "tpserver_tae-0.1.0.data/data/share/tpserver-tae/docs/"
    assert {shared + "rules.md", shared + "diagrams/board.svg", shared + "examples/regions.toml"} <= names
    license_files = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert license_files, "LICENSE is not in the wheel's metadata"
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: GPL-2.0-or-later" in text


def test_the_installed_server_finds_the_rules_for_its_rules_page(installed, tmp_path):
    """/rules renders docs/rules.md: without a source tree, the copy the wheel installed."""
    found = run(
        str(installed / "python"),
        "-c",
        "from server.web.rules import RulesBook; b = RulesBook(); "
        "print(b.folder); print('board.svg' in (b.html() or ''))",
        env=clean_env(),
        cwd=tmp_path,
    ).stdout.split()
    assert found[0].endswith("share/tpserver-tae/docs") and found[1] == "True"


def test_the_installed_commands_serve_and_play(installed, tmp_path):
    env = clean_env()
    help_text = run(str(installed / "tae-server"), "--help", env=env, cwd=tmp_path).stdout
    assert "serve" in help_text and "create-game" in help_text
    assert "status" in run(str(installed / "tae-client"), "--help", env=env, cwd=tmp_path).stdout

    database = f"sqlite:///{tmp_path / 'operator.db'}"
    server = InstalledServer(installed, database, tmp_path)
    port = server.start(timeout=60)
    try:
        client_env = dict(
            env,
            TAE_HOST="127.0.0.1",
            TAE_PORT=str(port),
            TAE_USER="alice",
            TAE_PASSWORD="alice-password",
            TAE_TIMEOUT="20",
        )
        client = str(installed / "tae-client")
        run(client, "create-account", env=client_env, cwd=tmp_path, timeout=60)
        status = json.loads(run(client, "status", "--json", env=client_env, cwd=tmp_path, timeout=60).stdout)
        assert status["turn"] == 0
        assert status["player"]["name"] == "alice"
        assert [player["name"] for player in status["players"]] == ["alice"]
        listing = run(
            str(installed / "tae-server"),
            "status",
            "tae",
            "--json",
            "--database",
            database,
            env=env,
            cwd=tmp_path,
        ).stdout
        assert [player["name"] for player in json.loads(listing)["players"]] == ["alice"]
    finally:
        assert server.terminate() == 0, server.stderr


class InstalledServer:
    """`tae-server serve` from the installed venv, in a directory away from the source tree,
    with an environment that cannot reach the source (unlike tests.integration.ServerProcess,
    which puts the source tree on PYTHONPATH)."""

    def __init__(self, bin_dir: Path, database: str, cwd: Path):
        self.command = [
            str(bin_dir / "tae-server"),
            "serve",
            "--listen",
            "tcp:0:interface=127.0.0.1",
            "--database",
            database,
            "--log-format",
            "json",
        ]
        self.cwd = cwd
        self.process: subprocess.Popen | None = None
        self.stderr = ""

    def start(self, timeout: float) -> int:
        """Start the server; its port, once its log says where it listens."""
        self.process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            for line in self.process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"the installed server did not listen within {timeout} s") from None
            if line is None:
                self.process.wait(10)
                raise RuntimeError(f"the installed server exited: {self.process.stderr.read()}")
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if str(event.get("message", "")).startswith("listening on"):
                return int(event["port"])

    def terminate(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.stderr = self.process.stderr.read()
        return self.process.returncode
