"""The blocking transport over real loopback TCP, against a thread-per-connection fake server."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from clients import (
    BlockingClient,
    ColonyKind,
    ConnectFailed,
    ConnectionClosed,
    RequestFailed,
    RequestTimeout,
    StreamBroken,
    connect,
)
from protocol import FailCode, GetTimeRemaining, Okay, Order, TimeRemaining, Version

from .fake_server import ThreadedFakeServer, tae_world
from .helpers import rig

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("version", [Version.TP03, Version.TP04])
def test_a_turn_over_tcp(version):
    world = tae_world()
    with ThreadedFakeServer(world) as server:
        with BlockingClient.connect("127.0.0.1", server.port, version=version, timeout=5) as client:
            assert client.login("alice@fake", "secret") == Okay("Welcome")
            if version == Version.TP04:
                (game,) = client.games()
                assert game.rule == "TaE"
            client.update()
            leader = client.game.my_leaders()[ColonyKind.SETTLER]
            reply = client.insert_order(leader.id, "Move", (0, 0))
            assert isinstance(reply, Order if version == Version.TP04 else Okay)
            assert len(client.game.fleet(leader.id).orders) == 1
            client.finish_turn()
            world.end_turn({1: (0, 1, 0, 0, 0)})
            assert client.wait_for_next_turn(timeout=5, poll_interval=2) == 1
            assert client.game.scores().technology == 1
            assert client.cache.time_remaining.time == world.time_left


def test_pipelined_requests_over_tcp():
    with ThreadedFakeServer(tae_world()) as server:
        connection = connect("127.0.0.1", server.port, version=Version.TP03, timeout=5)
        with connection:
            outcomes = connection.request_many([GetTimeRemaining()] * 20)
            assert outcomes == [TimeRemaining(300)] * 20  # not logged in is fine for this one


def test_refused_connection_is_a_clean_error():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nobody listens there now
    started = time.monotonic()
    with pytest.raises(ConnectFailed, match="refused"):
        connect("127.0.0.1", port, timeout=2)
    assert time.monotonic() - started < 2


def test_bad_login_is_a_request_failure():
    with ThreadedFakeServer(tae_world()) as server:
        with BlockingClient.connect("127.0.0.1", server.port, timeout=5) as client:
            with pytest.raises(RequestFailed) as caught:
                client.login("alice", "wrong")
            assert caught.value.code == FailCode.FRAME
            assert client.login("alice", "secret") == Okay("Welcome")


def test_a_silent_server_times_out():
    with ThreadedFakeServer(tae_world()) as server:
        connection = connect("127.0.0.1", server.port, timeout=5)
        server.silent = True
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            connection.request(GetTimeRemaining(), timeout=0.2)
        assert time.monotonic() - started < 2
        connection.close()


def _one_shot_server(answer: bytes):
    """A server that reads the first bytes, writes ``answer`` and closes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve():
        conn, _ = listener.accept()
        with conn:
            conn.recv(1024)
            if answer:
                conn.sendall(answer)
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def test_a_server_that_hangs_up_closes_the_connection():
    port, thread = _one_shot_server(b"")
    with pytest.raises(ConnectionClosed, match="closed the connection"):
        connect("127.0.0.1", port, timeout=2)
    thread.join(2)


def test_a_server_that_is_not_tp_is_a_broken_stream():
    port, thread = _one_shot_server(b"You are not running the correct protocol\n")
    with pytest.raises(StreamBroken, match="not running the correct protocol"):
        connect("127.0.0.1", port, timeout=2)
    thread.join(2)


def test_poll_reads_pushed_frames_and_the_cache_notes_them():
    r = rig(Version.TP04)
    assert r.client.poll() == []
    r.world.end_turn()
    pushed = r.client.poll()
    assert [m.time for m in pushed] == [0, r.world.time_left]
    assert r.client.cache.time_remaining == pushed[-1]
    assert list(r.client.connection.async_messages) == pushed
