"""The admin listener over real sockets, in a server process with a database: what an operator
does with tpadmin-cpp, seen from both sides (the admin connection and players' TP clients)."""

from __future__ import annotations

import json
import sys

import pytest

from protocol import Fail, FailCode, FinishedTurn, Okay
from protocol.admin import CommandResult
from server.game.passwords import hash_password
from tests.integration.server_process import ServerProcess
from tests.integration.test_tls import make_certificate
from tests.integration.tp_client import TPClient

from .admin_client import AdminClient

pytestmark = pytest.mark.timeout(120)

USER, PASSWORD = "tpadm", "secret7"


class AdminServerProcess(ServerProcess):
    def __init__(self, database: str, admin_endpoint: str):
        super().__init__(database)
        self.admin_endpoint = admin_endpoint

    def command(self) -> list[str]:
        return [sys.executable, "-m", "tests.admin.admin_server", self.database, self.admin_endpoint]

    def start_both(self, monkeypatch) -> tuple[int, int]:
        monkeypatch.setenv("TAE_TEST_ADMIN_USERS", json.dumps({USER: hash_password(PASSWORD)}))
        port = self.start()
        event = self.wait_for(lambda e: e.get("listener") == "admin")
        return port, int(event["port"])


@pytest.fixture
def server(tmp_path, monkeypatch):
    process = AdminServerProcess(f"sqlite:///{tmp_path / 'tae.db'}", "tcp:0:interface=127.0.0.1")
    ports = process.start_both(monkeypatch)
    try:
        yield process, *ports
    finally:
        process.kill()


def test_an_operator_session_over_tcp(server, monkeypatch):
    process, game_port, admin_port = server
    admin = AdminClient(admin_port)
    assert admin.start(USER, PASSWORD) == Okay("Welcome")
    assert set(admin.commands) >= {"list-games", "status", "create-game", "add-player", "end-turn"}

    assert admin.run("create-game", "duel").status == 0
    assert admin.run("add-player", "duel", "ann", "pw1") == CommandResult(
        1, "A password must have at least 6 characters."
    ), "the server's password policy, as for tae-server add-player"
    assert admin.run("add-player", "duel", "ann", "annpass1").status == 0
    assert admin.run("add-player", "duel", "ben", "benpass2").status == 0
    players = []
    for name, password in (("ann", "annpass1"), ("ben", "benpass2")):
        client = TPClient(game_port)
        client.connect()
        client.login(f"{name}@duel", password)
        players.append(client)
    status = admin.run("status", "duel")
    assert status.status == 0 and "waiting for: ann, ben" in status.text

    assert admin.run("end-turn", "duel") == CommandResult(0, "turn 0 of game 'duel' ended; turn 1 begins")
    admin.wait_for_log(lambda text: "game duel: turn 0 ended" in text)
    assert players[0].time_remaining().turn == 1
    assert "turn 1 open" in admin.run("status", "duel").text

    # A wrong password on another connection: told, and the connection stays usable.
    other = AdminClient(admin_port)
    assert other.start(USER, "wrong") == Fail(FailCode.FRAME, "Admin Login Error - bad username or password")
    assert other.start(USER, PASSWORD) == Okay("Welcome")

    # tpserver-cpp dies when an admin hangs up while it logs (spec §6): this one carries on.
    admin.close()
    assert isinstance(players[1].one(FinishedTurn()), Okay)
    listing = other.run("list-games")
    assert listing.status == 0 and "duel" in listing.text and "tae" in listing.text
    for client in players:
        client.close()
    other.close()

    # What the admin did was stored: after a restart the game and its players are there.
    assert process.terminate() == 0
    _, admin_port = process.start_both(monkeypatch)
    again = AdminClient(admin_port)
    assert again.start(USER, PASSWORD) == Okay("Welcome")
    status = again.run("status", "duel")
    assert "turn 1 open" in status.text and "ann" in status.text and "ben" in status.text
    again.close()


def test_the_admin_listener_over_tls(tmp_path, monkeypatch):
    key, cert = make_certificate(tmp_path)
    process = AdminServerProcess(
        f"sqlite:///{tmp_path / 'tae.db'}", f"ssl:0:privateKey={key}:certKey={cert}:interface=127.0.0.1"
    )
    _, admin_port = process.start_both(monkeypatch)
    try:
        event = process.wait_for(lambda e: e.get("listener") == "admin")
        assert event["tls"] is True and "for the admin protocol (TLS)" in event["message"]
        admin = AdminClient(admin_port, tls=True)
        assert admin.start(USER, PASSWORD) == Okay("Welcome")
        assert "tae" in admin.run("list-games").text
        admin.close()
    finally:
        process.kill()
