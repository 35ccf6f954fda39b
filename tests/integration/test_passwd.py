"""`tae-client passwd` against a real `tae-server serve` process: the password changes for TP logins
too, a wrong current password or a too-short new one is refused with the server's reason."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import protocol as tp
from clients.cli import cli
from tests.support.servers import free_port, serve_process, wait_for_port

from .test_web_server import serve_args
from .tp_client import TPClient


@pytest.fixture
def running(tmp_path):
    tp_port, web_port = free_port(), free_port()
    with serve_process(tmp_path, serve_args(tp_port, web_port), tp_port) as process:
        wait_for_port(web_port, process)
        client = TPClient(tp_port)
        client.connect()
        assert isinstance(client.create_account("ann", "first-password"), tp.Okay)
        client.close()
        yield tp_port, web_port


def passwd(tp_port: int, web_port: int, password: str, new: str):
    args = ["--port", str(tp_port), "--host", "127.0.0.1", "--web-url", f"http://127.0.0.1:{web_port}"]
    args += ["--user", "ann", "--password", password, "passwd", "--new-password-stdin"]
    return CliRunner().invoke(cli, args, input=new + "\n")


def tp_login(port: int, name: str, password: str) -> object:
    client = TPClient(port)
    try:
        client.connect()
        return client.one(tp.Login(name, password))
    finally:
        client.close()


def test_the_new_password_is_the_tp_password(running):
    tp_port, web_port = running
    result = passwd(tp_port, web_port, "first-password", "second-password")
    assert result.exit_code == 0, result.output
    assert "password of ann changed" in result.output
    assert isinstance(tp_login(tp_port, "ann", "second-password"), tp.Okay)
    assert isinstance(tp_login(tp_port, "ann", "first-password"), tp.Fail)


def test_wrong_current_password_and_short_new_one_are_refused(running):
    tp_port, web_port = running
    wrong = passwd(tp_port, web_port, "not-the-password", "second-password")
    assert wrong.exit_code == 1 and "the server refused" in wrong.output
    short = passwd(tp_port, web_port, "first-password", "abc")
    assert short.exit_code == 1 and "password" in short.output.lower() and "Traceback" not in short.output
    assert isinstance(tp_login(tp_port, "ann", "first-password"), tp.Okay)


def test_no_web_listener_is_a_connection_error(running):
    tp_port, _ = running
    result = passwd(tp_port, free_port(), "first-password", "second-password")
    assert result.exit_code == 3 and "cannot reach the web listener" in result.output


def test_without_a_game_name_the_servers_default_game_is_meant(running, tmp_path):
    from server.cli import cli as server_cli

    tp_port, web_port = running
    made = CliRunner().invoke(
        server_cli, ["create-game", "autumn", "--database", f"sqlite:///{tmp_path / 'tae.db'}"]
    )
    assert made.exit_code == 0, made.output
    import json
    import time
    import urllib.request

    deadline = time.monotonic() + 15
    while True:  # the running server loads the new game within a second or so
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/games", timeout=5) as answer:
            games = json.load(answer)["games"]
        if len(games) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sorted(g["name"] for g in games) == ["autumn", "tae"]
    assert [g["name"] for g in games if g["default"]] == ["tae"]
    result = passwd(tp_port, web_port, "first-password", "second-password")
    assert result.exit_code == 0, result.output
    assert isinstance(tp_login(tp_port, "ann", "second-password"), tp.Okay)
