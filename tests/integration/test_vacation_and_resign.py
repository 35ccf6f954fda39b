"""`tae-client vacation` and `tae-client resign` against a real `tae-server serve` process with
its web listener: the JSON API's answers, its refusals, what status and the public game show."""

from __future__ import annotations

import json
import urllib.request

import pytest
from click.testing import CliRunner

import protocol as tp
from clients.cli import cli
from tests.support.json_schemas import json_answer
from tests.support.servers import free_port, serve_process, wait_for_port

from .test_web_server import serve_args
from .tp_client import TPClient

PLAYERS = ("ann", "bob")
PASSWORD = "first-password"


@pytest.fixture
def running(tmp_path):
    tp_port, web_port = free_port(), free_port()
    config = tmp_path / "tae.toml"
    config.write_text("[game]\nvacation_days_max = 10\n")
    with serve_process(tmp_path, serve_args(tp_port, web_port, "--config", str(config)), tp_port) as process:
        wait_for_port(web_port, process)
        for name in PLAYERS:
            client = TPClient(tp_port)
            client.connect()
            assert isinstance(client.create_account(name, PASSWORD), tp.Okay)
            client.close()
        yield tp_port, web_port


def client(tp_port: int, web_port: int, user: str, *command: str, password: str = PASSWORD):
    args = ["--port", str(tp_port), "--host", "127.0.0.1", "--web-url", f"http://127.0.0.1:{web_port}"]
    args += ["--user", user, "--password", password, *command]
    return CliRunner().invoke(cli, args)


def public_players(web_port: int) -> dict[str, dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/games/tae", timeout=10) as answer:
        document = json.loads(answer.read())
    return {p["name"]: p for p in document["players"]}


def tp_login(port: int, name: str) -> object:
    connection = TPClient(port)
    try:
        connection.connect()
        return connection.one(tp.Login(name, PASSWORD))
    finally:
        connection.close()


def test_a_vacation_starts_shows_and_ends(running):
    tp_port, web_port = running
    shown = client(tp_port, web_port, "ann", "vacation")
    assert shown.exit_code == 0, shown.output
    assert "you play your own seat" in shown.output
    started = client(tp_port, web_port, "ann", "vacation", "3", "--json")
    assert started.exit_code == 0, started.output
    seat = json_answer(started.output)
    assert seat["seat"] == "on vacation" and seat["stand_in"] and seat["vacation_days_max"] == 10
    assert "on vacation until" in client(tp_port, web_port, "ann", "vacation").output
    # the public game shows it, but not when it ends
    ann = public_players(web_port)["ann"]
    assert ann["seat"] == "on vacation" and "vacation_until" not in ann
    # logging in does not end it; --end does, and so does "back"
    assert isinstance(tp_login(tp_port, "ann"), tp.Okay)
    assert public_players(web_port)["ann"]["seat"] == "on vacation"
    ended = client(tp_port, web_port, "ann", "vacation", "--end")
    assert ended.exit_code == 0 and "you play your own seat" in ended.output
    assert public_players(web_port)["ann"]["seat"] == "playing"
    assert client(tp_port, web_port, "ann", "vacation", "1").exit_code == 0
    back = client(tp_port, web_port, "ann", "back")
    assert back.exit_code == 0 and "you play your own seat" in back.output
    assert public_players(web_port)["ann"]["seat"] == "playing"


def test_bad_vacations_are_refused_with_the_servers_reason(running):
    tp_port, web_port = running
    too_long = client(tp_port, web_port, "bob", "vacation", "11")
    assert too_long.exit_code == 1 and "1 to 10 whole days" in too_long.output
    assert "Traceback" not in too_long.output
    not_on = client(tp_port, web_port, "bob", "vacation", "--end")
    assert not_on.exit_code == 1 and "not on vacation" in not_on.output
    both = client(tp_port, web_port, "bob", "vacation", "2", "--end")
    assert both.exit_code == 2


def test_the_api_refuses_bad_bodies(running):
    _, web_port = running
    import base64

    def post(path: str, body: object) -> tuple[int, dict]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{web_port}/api/games/tae/{path}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Authorization": "Basic " + base64.b64encode(f"bob:{PASSWORD}".encode()).decode(),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    status, document = post("vacation", {"days": "soon"})
    assert status == 400 and document["error"]["name"] == "FRAME"
    status, document = post("resign", {})
    assert status == 400 and "confirm" in document["error"]["message"]
    assert public_players(web_port)["bob"]["seat"] == "playing"


def test_resigning_is_for_good(running):
    tp_port, web_port = running
    refused = client(tp_port, web_port, "bob", "resign")  # no terminal and no --yes
    assert refused.exit_code == 2 and "--yes" in refused.output
    done = client(tp_port, web_port, "bob", "resign", "--yes")
    assert done.exit_code == 0, done.output
    assert "bob: You resigned" in done.output and "to the end of the game" in done.output
    assert public_players(web_port)["bob"]["seat"] == "resigned"
    answer = tp_login(tp_port, "bob")  # they still read their game
    assert isinstance(answer, tp.Okay), answer
    seat = client(tp_port, web_port, "bob", "vacation")  # reading the seat is still theirs
    assert seat.exit_code == 0 and "resigned" in seat.output, seat.output
    again = client(tp_port, web_port, "bob", "vacation", "2")
    assert again.exit_code == 1 and "You resigned from this game." in again.output, again.output
