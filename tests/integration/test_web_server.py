"""The web listener of a real `tae-server serve` process, beside its TP listener, on 127.0.0.1.

Orders given on the web and over TP are the same orders, a refusal says the same over both,
the event stream announces a new turn, and the configured secret keeps API tokens valid across
a restart.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

import protocol as tp
from tests.support.openapi_check import checked
from tests.support.servers import ROOT, free_port, serve_process, wait_for_port

from .tp_client import TPClient


class Web:
    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method: str, path: str, document=None, user: str | None = None, token: str | None = None):
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{user}-pw".encode()).decode()
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None if document is None else json.dumps(document).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, checked(method, path, answer)
        except urllib.error.HTTPError as error:
            return error.code, checked(method, path, error)


def serve_args(tp_port: int, web_port: int, *extra: str) -> list[str]:
    return [
        "--listen",
        f"tcp:{tp_port}:interface=127.0.0.1",
        "--web",
        f"tcp:{web_port}:interface=127.0.0.1",
        "--turn-length",
        "0",
        *extra,
    ]


@pytest.fixture
def running(tmp_path):
    tp_port, web_port = free_port(), free_port()
    # a fixed seed: ann's hand holds three colonists that are not miners (the tests give three
    # Colonize orders; a random seed gave her four miners now and then)
    with serve_process(tmp_path, serve_args(tp_port, web_port, "--seed", "1"), tp_port) as process:
        wait_for_port(web_port, process)
        yield tp_port, Web(web_port), process


def test_orders_given_on_the_web_and_over_tp_are_the_same_orders(running):
    tp_port, web, _ = running
    assert web.call("POST", "/api/games/tae/accounts", {"username": "ann", "password": "ann-pw"})[0] == 201
    assert web.call("POST", "/api/games/tae/accounts", {"username": "bob", "password": "bob-pw"})[0] == 201
    _, me = web.call("GET", "/api/games/tae/me", user="ann")
    _, public = web.call("GET", "/api/games/tae")
    free = [s["id"] for s in public["systems"] if s["terrain"] == "habitable" and s["colony"] is None]
    settlers = [f for f in me["hand"] if f["kind"] != "mining"]
    status, placed = web.call(
        "POST", "/api/games/tae/orders", {"fleet": settlers[0]["fleet"], "target": free[0]}, user="ann"
    )
    assert status == 201, placed
    client = TPClient(tp_port)
    try:
        client.connect()
        client.login("ann", "ann-pw")
        assert client.queue(settlers[0]["fleet"]) == [(1, free[0])]  # the web's order, seen over TP
        reply = client.one(client.insert_order(settlers[1]["fleet"], 1, free[5]))
        assert isinstance(reply, tp.Order), reply
        _, orders = web.call("GET", "/api/games/tae/orders", user="ann")
        assert [(o["fleet"], o["target"]) for o in orders["orders"]] == [
            (settlers[0]["fleet"], free[0]),
            (settlers[1]["fleet"], free[5]),
        ]
        # a third order: over TP and on the web the same refusal, same code and text
        over_tp = client.one(client.insert_order(settlers[2]["fleet"], 1, free[9]))
        status, on_web = web.call(
            "POST", "/api/games/tae/orders", {"fleet": settlers[2]["fleet"], "target": free[9]}, user="ann"
        )
        assert isinstance(over_tp, tp.Fail)
        assert (on_web["error"]["code"], on_web["error"]["message"]) == (int(over_tp.code), over_tp.message)
        assert status == 409
        assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
    finally:
        client.close()
    assert web.call("POST", "/api/games/tae/finish", {}, user="bob")[0] == 200
    _, after = web.call("GET", "/api/games/tae")
    assert after["turn"] == 1
    assert len(after["last_turn"]["lines"]) == 2


def test_my_games_over_the_api_of_a_real_server(running):
    _, web, _ = running
    assert web.call("POST", "/api/games/tae/accounts", {"username": "ann", "password": "ann-pw"})[0] == 201
    status, mine = web.call("GET", "/api/me", user="ann")
    assert status == 200 and mine["account"] == "ann"
    assert [(g["game"], g["player"], g["turn"], g["place"]) for g in mine["games"]] == [("tae", 1, 0, None)]
    assert web.call("POST", "/api/games/tae/join", {}, user="ann")[0] == 409  # already plays it
    assert web.call("GET", "/api/me", user="bob")[0] == 401


def test_the_event_stream_announces_the_new_turn(running):
    _, web, _ = running
    for name in ("ann", "bob"):
        web.call("POST", "/api/games/tae/accounts", {"username": name, "password": name + "-pw"})
    stream = socket.create_connection(("127.0.0.1", int(web.base.rsplit(":", 1)[1])), timeout=10)
    try:
        stream.sendall(b"GET /games/tae/events HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
        received = b""
        while b": connected" not in received:
            received += stream.recv(4096)
        assert b"text/event-stream" in received and b"content-encoding" not in received.lower()
        web.call("POST", "/api/games/tae/finish", {}, user="ann")
        web.call("POST", "/api/games/tae/finish", {}, user="bob")
        while b'"turn": 1' not in received:
            chunk = stream.recv(4096)
            assert chunk, "the stream closed"
            received += chunk
        assert b"event: change" in received
    finally:
        stream.close()


def test_pages_are_compressed_and_carry_their_security_headers(running):
    _, web, _ = running
    request = urllib.request.Request(web.base + "/games/tae", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Content-Encoding"] == "gzip"
        assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]


def test_a_restart_keeps_api_tokens_with_a_secret_file_and_reads_the_history_back(tmp_path):
    (tmp_path / "tae.toml").write_text('web_secret_file = "web-secret"\n')
    tp_port, web_port = free_port(), free_port()
    args = serve_args(tp_port, web_port, "--config", "tae.toml")
    with serve_process(tmp_path, args, tp_port) as process:
        wait_for_port(web_port, process)
        web = Web(web_port)
        for name in ("ann", "bob"):
            web.call("POST", "/api/games/tae/accounts", {"username": name, "password": name + "-pw"})
        token = web.call("POST", "/api/games/tae/token", {}, user="ann")[1]["token"]
        _, me = web.call("GET", "/api/games/tae/me", user="ann")
        _, public = web.call("GET", "/api/games/tae")
        target = next(
            s["id"] for s in public["systems"] if s["terrain"] == "habitable" and s["colony"] is None
        )
        colonist = next(f for f in me["hand"] if f["kind"] != "mining")
        web.call("POST", "/api/games/tae/orders", {"fleet": colonist["fleet"], "target": target}, token=token)
        web.call("POST", "/api/games/tae/finish", {}, user="ann")
        web.call("POST", "/api/games/tae/finish", {}, user="bob")
    assert (tmp_path / "web-secret").stat().st_mode & 0o077 == 0
    with serve_process(tmp_path, args, tp_port) as process:
        wait_for_port(web_port, process)
        web = Web(web_port)
        status, me = web.call("GET", "/api/games/tae/me", token=token)
        assert status == 200 and me["player"]["name"] == "ann"
        assert [point["turn"] for point in me["score_history"]] == [0]  # the scores after turn 0
        (turn,) = web.call("GET", "/api/games/tae/history")[1]["turns"]
        assert turn["turn"] == 0
        assert turn["lines"] == [f"ann placed a {colonist['kind']} colony on " + _name(public, target) + "."]
        assert web.call("GET", "/api/games/tae/turns/0")[0] == 200
        assert web.call("GET", "/api/games/tae/turns/1")[0] == 404


def _name(public, system_id: int) -> str:
    system = next(s for s in public["systems"] if s["id"] == system_id)
    return f"{system['x']}, {system['y']}"


def test_an_unusable_web_endpoint_is_a_one_line_error(tmp_path):
    tp_port = free_port()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--listen",
            f"tcp:{tp_port}",
            "--web",
            "nonsense:1",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "web: 'nonsense:1' is not a usable endpoint" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
