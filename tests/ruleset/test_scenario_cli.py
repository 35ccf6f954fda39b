"""`python -m ruleset.scenario` as a command: help, usage errors, and a reader that stops early."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "ruleset.scenario"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_help_describes_the_command():
    proc = run("--help")
    assert proc.returncode == 0
    assert "FILE.toml" in proc.stdout and "JSON" in proc.stdout


def test_a_missing_file_argument_is_a_usage_error():
    proc = run()
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "FILE.toml" in proc.stderr


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """`python -m ruleset.scenario FILE | head`: no BrokenPipeError traceback, status 141."""
    players = "".join(f'[[players]]\nname = "P{i}"\n' for i in range(1, 7))
    path = tmp_path / "long.toml"
    path.write_text("seed = 3\n" + players + "[[turns]]\n" * 60)
    whole = run(str(path))
    assert whole.returncode == 0 and len(whole.stdout) > 100_000  # more than a pipe buffer
    assert json.loads(whole.stdout)["turn"] > 1
    proc = subprocess.Popen([*COMMAND, str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert stderr == ""
