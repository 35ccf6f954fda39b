"""Fixtures every client test file shares: an environment without the user's tae-client settings,
the fake server's world and its threaded TCP server, a port nobody listens on, and ``invoke`` for
running ``tae-client`` against the fake server."""

from __future__ import annotations

import json
import os
import socket

import pytest
from click.testing import CliRunner

from clients.cli import cli
from protocol import Version
from tests.support.json_schemas import check_document

from .fake_server import ThreadedFakeServer, tae_world


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No TAE_* variable, no NO_COLOR, and a config directory with nothing in it."""
    for name in list(os.environ):
        if name.startswith("TAE_") or name == "NO_COLOR":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def world():
    return tae_world()


@pytest.fixture
def server(world):
    with ThreadedFakeServer(world) as running:
        yield running


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def invoke(
    server,
    *args,
    user="alice",
    password="secret",
    version=Version.TP04,
    expect=0,
    timeout="5",
    env=None,
    input=None,
):
    """Run ``tae-client`` against ``server`` as ``user``; assert the exit code."""
    base = [
        "--host",
        "127.0.0.1",
        "--port",
        str(server.port),
        "--timeout",
        timeout,
        "--protocol",
        version.name.lower(),
    ]
    if user is not None:
        base += ["--user", user, "--password", password]
    result = CliRunner().invoke(cli, base + list(args), env=env, input=input)
    assert result.exit_code == expect, (
        f"{args} → {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    )
    return result


def invoke_json(server, *args, **kwargs):
    """Run ``tae-client --json …``: its one document, checked against the schema it names."""
    return check_document(json.loads(invoke(server, "--json", *args, **kwargs).stdout))
