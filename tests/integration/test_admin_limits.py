"""The admin listener's limits, black-box over real sockets against a `tae-server serve` process
with an admin listener (and TP's account creation per address, which the same brake counts).

Every attack comes from its own loopback address (127.0.0.N: Linux routes all of 127/8 to the
loopback interface); after each, a TP player and an admin on 127.0.0.1 are still answered
within their usual time (`witnesses_answer`), and at the end the server's log holds no
traceback and no critical line.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import protocol as tp
from protocol import Connect, Deframer, Fail, FailCode, Login, Okay, Version, encode_header
from protocol.admin import AdminFrameType, CommandResult, decode_admin, encode_admin
from protocol.deframer import NOT_TP_TEXT
from server.game.passwords import hash_password
from server.model.refusals import POOL_EXHAUSTED
from tests.admin.admin_client import AdminClient
from tests.fuzz_web import bad_log_lines
from tests.support.servers import ROOT, free_port, wait_for_port

from .tp_client import TPClient

USUAL_S = 2.0
ADMIN, PASSWORD = "tpadm", "secret7"
LIMITS = [
    "admin_connections_per_address=3",
    "admin_login_seconds=3",
    "admin_idle_seconds=4",
    "admin_frames_per_second=20",
    "admin_frame_burst=20",
    "login_failure_delay=0.05",
    "login_failure_delay_max=0.3",
    "accounts_per_address=3",
]


class Server:
    def __init__(self, tp_port: int, admin_port: int, process, log_path: Path):
        self.tp_port = tp_port
        self.admin_port = admin_port
        self.process = process
        self.log_path = log_path
        self.web_port = 0
        self.tp = TPClient(tp_port, timeout=USUAL_S * 3)
        self.tp.connect()
        assert isinstance(self.tp.create_account("wit", "wit-password"), tp.Okay)
        self.tp.login("wit", "wit-password")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("admin-limits")
    tp_port, admin_port, web_port = free_port(), free_port(), free_port()
    (workdir / "tae.toml").write_text(
        "[game]\nmax_players = 0\n\n"  # as many as the pool can deal a hand
        f'[admin]\nlisten = "tcp:{admin_port}:interface=0.0.0.0"\n\n'
        f'[admin.users]\n{ADMIN} = "{hash_password(PASSWORD, n=2**4)}"\n'
    )
    args = ["--config", str(workdir / "tae.toml"), "--listen", f"tcp:{tp_port}:interface=127.0.0.1"]
    args += ["--web", f"tcp:{web_port}:interface=127.0.0.1"]
    args += ["--turn-length", "0", "--database", f"sqlite:///{workdir / 'tae.db'}"]
    for limit in LIMITS:
        args += ["--limit", limit]
    log_path = workdir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", *args],
            cwd=workdir,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(tp_port, process)
        wait_for_port(admin_port, process)
        wait_for_port(web_port, process)
        # the admin logs in once from 127.0.0.1: from then on a place the account is known at
        admin = AdminClient(admin_port, timeout=10)
        assert isinstance(admin.start(ADMIN, PASSWORD), Okay)
        admin.close()
        running = Server(tp_port, admin_port, process, log_path)
        running.web_port = web_port
        yield running
        running.tp.close()
        assert process.poll() is None, "the server died"
        bad = bad_log_lines(log_path)
        assert not bad, bad[:5]
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def witnesses_answer(server: Server) -> None:
    """A TP player and an admin from 127.0.0.1 are answered, each within their usual time."""
    started = time.monotonic()
    assert isinstance(server.tp.one(tp.GetTimeRemaining()), tp.TimeRemaining)
    assert time.monotonic() - started < USUAL_S
    started = time.monotonic()
    admin = AdminClient(server.admin_port, timeout=10)
    try:
        assert isinstance(admin.start(ADMIN, PASSWORD), Okay)
        assert isinstance(admin.run("list-games"), CommandResult)
    finally:
        admin.close()
    assert time.monotonic() - started < USUAL_S * 2  # a login hashes (the test's cheap hash)


def raw(server: Server, source: str) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", server.admin_port))
    return sock


def frames_until_closed(sock: socket.socket, limit_s: float = 10) -> list[tuple[int, Any]]:
    """Every (sequence, message) the server sends until it closes the connection."""
    deframer, got = Deframer(), list[tuple[int, Any]]()
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not data:
            return got
        deframer.feed(data)
        while (frame := deframer.next_frame()) is not None:
            got.append((frame.sequence, decode_admin(frame)))
    raise AssertionError(f"not closed within {limit_s} s; got {got}")


def last_answer(sock: socket.socket, settle_s: float = 1.0) -> object:
    """The last frame the server sends before it closes or falls silent for `settle_s`."""
    deframer, got = Deframer(), list[Any]()
    sock.settimeout(settle_s)
    for _ in range(100):
        try:
            data = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not data:
            break
        deframer.feed(data)
        while (frame := deframer.next_frame()) is not None:
            got.append(decode_admin(frame))
    assert got, "no answer"
    return got[-1]


def test_connections_beyond_an_address_share_are_refused_with_a_fail(server):
    held = [AdminClient(server.admin_port, timeout=10, source="127.0.0.3") for _ in range(3)]
    for client in held:
        assert isinstance(client.request(Connect("test")), Okay)
    fourth = raw(server, "127.0.0.3")
    [(sequence, refusal)] = frames_until_closed(fourth)
    assert sequence == 0 and isinstance(refusal, Fail) and refusal.code == FailCode.UNAVAILABLE_TEMPORARILY
    assert "Too many admin connections from your address (at most 3)" in refusal.message
    fourth.close()
    witnesses_answer(server)  # another address is not counted with them
    held.pop().close()
    time.sleep(0.3)
    again = AdminClient(server.admin_port, timeout=10, source="127.0.0.3")
    assert isinstance(again.request(Connect("test")), Okay)
    for client in [again, *held]:
        client.close()


def test_a_connection_that_never_logs_in_is_closed_at_its_deadline(server):
    started = time.monotonic()
    silent = raw(server, "127.0.0.4")
    trickle = raw(server, "127.0.0.4")
    trickle.sendall(encode_admin(Connect("test"), 1))
    login = encode_admin(Login(ADMIN, "wrong-password"), 2)
    for byte in login[:-1]:  # slow bytes do not extend the deadline
        try:
            trickle.sendall(bytes([byte]))
        except OSError:  # closed (at the deadline)
            break
        time.sleep(0.1)
    got = frames_until_closed(trickle)
    assert isinstance(got[0][1], Okay)
    assert got[-1][0] == 0 and "No login within 3 s" in got[-1][1].message
    assert "No login within 3 s" in frames_until_closed(silent)[-1][1].message
    assert time.monotonic() - started < 8
    witnesses_answer(server)


def test_a_logged_in_admin_who_sends_nothing_is_closed_after_the_idle_timeout(server):
    admin = AdminClient(server.admin_port, timeout=10, source="127.0.0.1")
    assert isinstance(admin.start(ADMIN, PASSWORD), Okay)
    started = time.monotonic()
    got = frames_until_closed(admin.sock)
    fails = [message for sequence, message in got if isinstance(message, Fail)]
    assert fails and "No request for 4 s" in fails[-1].message
    assert 3.5 < time.monotonic() - started < 9


def test_frames_beyond_the_rate_wait_and_none_is_lost(server):
    admin = AdminClient(server.admin_port, timeout=10, source="127.0.0.5")
    assert isinstance(admin.request(Connect("test")), Okay)
    started = time.monotonic()
    admin.sock.sendall(b"".join(encode_admin(Connect("again"), 100 + n) for n in range(60)))
    answers = [admin.receive(100 + n) for n in range(60)]  # in order, every one
    elapsed = time.monotonic() - started
    assert all(isinstance(answer, Okay) for answer in answers)
    assert elapsed > 1.5  # 20 at once, then 20 a second (60 would take 2 s)
    admin.close()
    witnesses_answer(server)


def test_a_password_guessing_flood_is_stopped_and_the_admin_still_gets_in(server):
    tried = refused = 0
    started = time.monotonic()
    for n in range(250):
        client = AdminClient(server.admin_port, timeout=10, source="127.0.0.6")
        try:
            assert isinstance(client.request(Connect("guesser")), Okay)
            answer = client.request(Login(ADMIN, f"guess-{n}"))
        except ConnectionError:
            refused += 1  # closed after a refusal
            continue
        finally:
            client.close()
        assert isinstance(answer, Fail), answer
        if answer.code == FailCode.UNAVAILABLE_TEMPORARILY:
            refused += 1
            assert "Too many failed logins" in answer.message
        else:
            assert answer.message == "Admin Login Error - bad username or password"
            tried += 1
    assert tried <= 21 and refused >= 229, (tried, refused, time.monotonic() - started)
    # the admin, on a fresh connection from where they logged in before, is let in
    witnesses_answer(server)
    # from a place the account never logged in from, the right password waits too (Fail 3)
    stranger = AdminClient(server.admin_port, timeout=10, source="127.0.0.7")
    answer = stranger.start(ADMIN, PASSWORD)
    stranger.close()
    assert isinstance(answer, Fail) and answer.code == FailCode.UNAVAILABLE_TEMPORARILY


def test_malformed_admin_frames_get_a_fail_with_a_text(server):
    cases = [
        b"TP\x04\x00\x00\x00\x00\x01\x00\x00\x00\x03\xff\xff\xff\xff",  # a huge length
        encode_admin(Connect("x"), 1)[:-1] + b"\x00" * 40,
        b"TP\x04\x00\x00\x00\x00\x01\x00\x00\x03\xee\x00\x00\x00\x02ab",  # GetCommandTypes, cut
    ]
    for data in cases:
        sock = raw(server, "127.0.0.8")
        sock.sendall(data)
        answer = last_answer(sock)
        sock.close()
        assert isinstance(answer, Fail) and answer.message, (data, answer)
    # not the protocol at all: a line of text, as tpserver-cpp says it, and the door closed
    sock = raw(server, "127.0.0.8")
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = sock.recv(4096)
    assert answer.startswith(NOT_TP_TEXT.encode()[:20]) and sock.recv(4096) == b""
    sock.close()
    # a logged-in admin's command with arguments of the wrong kind
    admin = AdminClient(server.admin_port, timeout=10)
    assert isinstance(admin.start(ADMIN, PASSWORD), Okay)
    desc = admin.commands["add-player"]
    assert desc.params
    for body in (desc.id.to_bytes(4, "big"), desc.id.to_bytes(4, "big") + b"\x00\x00\x00\x01\xff" * 3):
        admin.sequence += 1
        admin.sock.sendall(
            encode_header(Version.TP04, admin.sequence, AdminFrameType.COMMAND, len(body)) + body
        )
        answer = admin.receive(admin.sequence)
        refused = (isinstance(answer, Fail) and answer.message) or (
            isinstance(answer, CommandResult) and answer.status == 1 and answer.text
        )
        assert refused, answer
    assert isinstance(admin.run("list-games"), CommandResult)  # the connection goes on
    admin.close()
    witnesses_answer(server)


def test_tp_account_creation_is_limited_per_address(server):
    answers = []
    for n in range(5):
        client = TPClient(server.tp_port, timeout=10, source="127.0.0.9")
        client.connect()
        answers.append(client.create_account(f"new{n}", "new-password"))
        client.close()
    assert [type(a).__name__ for a in answers] == ["Okay", "Okay", "Okay", "Fail", "Fail"], answers
    assert answers[3].message == "Too many accounts created from your address; try again later."
    assert answers[3].code == FailCode.UNAVAILABLE_TEMPORARILY
    # another address still may
    client = TPClient(server.tp_port, timeout=10, source="127.0.0.10")
    client.connect()
    assert isinstance(client.create_account("elsewhere", "new-password"), tp.Okay)
    client.close()
    witnesses_answer(server)


def test_every_way_to_join_refuses_a_player_the_pool_cannot_deal_a_hand(server):
    """(The last test here: it fills the game.) The operator's add-player, TP's CreateAccount and
    the API's sign-up all answer the same clear refusal, and the game does not break."""
    admin = AdminClient(server.admin_port, timeout=30)
    assert isinstance(admin.start(ADMIN, PASSWORD), Okay)
    for n in range(30):
        result = admin.run("add-player", "tae", f"fill{n}", "fill-password")
        if result.status == 1:
            break
    assert result.text == f"cannot add 'fill{n}' to game 'tae': {POOL_EXHAUSTED.message}", result
    assert n < 25
    client = TPClient(server.tp_port, timeout=10, source="127.0.0.11")
    client.connect()
    refused = client.create_account("late", "late-password")
    client.close()
    assert isinstance(refused, tp.Fail) and refused.message == POOL_EXHAUSTED.message
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.web_port}/api/games/tae/accounts",
        json.dumps({"username": "later", "password": "later-password"}).encode(),
        {"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=10)
    assert 400 <= answer.value.code < 500
    assert json.load(answer.value)["error"]["message"] == POOL_EXHAUSTED.message
    assert "turn 0" in admin.run("status", "tae").text
    admin.close()
    witnesses_answer(server)
