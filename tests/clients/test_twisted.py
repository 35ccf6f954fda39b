"""The Twisted transport: a StringTransport wired to the fake server, a task.Clock for time."""

from __future__ import annotations

import pytest
from twisted.internet import task
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.python.failure import Failure

from clients import ColonyKind, ConnectFailed, ConnectionClosed, RequestFailed, RequestTimeout
from clients.twisted_transport import TPClientProtocol, TwistedClient, connect_tcp
from protocol import (
    Connect,
    FailCode,
    GetTimeRemaining,
    Login,
    Okay,
    Order,
    TimeRemaining,
    Version,
)

from .fake_server import FakeConnection, tae_world

TP03, TP04 = Version.TP03, Version.TP04


def result_of(deferred):
    """The result of a fired Deferred (raises its failure's exception)."""
    box = []
    deferred.addBoth(box.append)
    assert box, "the Deferred has not fired"
    if isinstance(box[0], Failure):
        box[0].raiseException()
    return box[0]


class Wire:
    """A TPClientProtocol on a StringTransport; ``flush`` carries bytes both ways until quiet."""

    def __init__(self, version: Version, world=None, *, connect: bool = True) -> None:
        self.clock = task.Clock()
        self.world = world or tae_world()
        self.server = FakeConnection(self.world)
        self.pushed = bytearray()
        self.server.on_push = self.pushed.extend
        self.protocol = TPClientProtocol(version, clock=self.clock, timeout=5)
        self.transport = StringTransport()
        if connect:
            self.protocol.makeConnection(self.transport)

    def flush(self) -> None:
        while True:
            data = self.transport.value()
            self.transport.clear()
            answer = self.server.receive(data) if data else b""
            answer += bytes(self.pushed)
            self.pushed.clear()
            if not answer:
                return
            self.protocol.dataReceived(answer)

    def call(self, deferred):
        self.flush()
        return result_of(deferred)


def test_requests_fire_deferreds():
    wire = Wire(TP04)
    okay = wire.protocol.request(Connect("twisted test"))
    assert wire.call(okay) == Okay("Welcome to the fake server")
    refused = wire.protocol.request(Login("alice", "nope"))
    with pytest.raises(RequestFailed) as caught:
        wire.call(refused)
    assert caught.value.code == FailCode.FRAME
    many = wire.protocol.request_many([GetTimeRemaining(), Login("alice", "nope")])
    first, second = wire.call(many)
    assert first.time == 300 and isinstance(second, RequestFailed)


def test_requests_made_before_the_connection_are_sent_on_connect():
    wire = Wire(TP03, connect=False)
    deferred = wire.protocol.request(Connect("early"))
    assert wire.transport.value() == b""
    wire.protocol.makeConnection(wire.transport)
    assert wire.call(deferred) == Okay("Welcome to the fake server")


@pytest.mark.parametrize("version", [TP03, TP04])
def test_a_turn_with_the_twisted_client(version):
    wire = Wire(version)
    client = TwistedClient(wire.protocol)
    wire.call(client.request(Connect("twisted test")))
    assert wire.call(client.login("bob", "hunter2")) == Okay("Welcome")
    stats = wire.call(client.update())
    assert stats.fetched["objects"] == len(wire.world.objects)
    assert client.game.player_id == 2
    bomber = client.game.my_bombers()[0]
    reply = wire.call(client.insert_order(bomber.id, "Attack", (0, 0)))
    assert isinstance(reply, Order if version == TP04 else Okay)
    assert len(client.game.fleet(bomber.id).orders) == 1
    assert wire.call(client.probe_order(bomber.id, "Attack", (0, 1))).type == 3
    assert wire.call(client.remove_orders(bomber.id)) == (Okay("Order removed"),)
    wire.call(client.finish_turn())
    waiting = client.wait_for_next_turn(poll_interval=60)
    wire.flush()
    assert not waiting.called
    wire.world.end_turn({2: (0, 0, 7, 0, 0)})
    assert wire.call(waiting) == 1  # the push woke it up: no clock advance needed
    assert client.game.scores().people == 7
    assert client.cache.time_remaining.time == wire.world.time_left


def test_waiting_for_the_next_turn_by_polling_and_timeout():
    wire = Wire(TP04)
    client = TwistedClient(wire.protocol)
    wire.call(client.request(Connect("t")))
    wire.call(client.login("alice", "secret"))
    wire.call(client.update())
    waiting = client.wait_for_next_turn(poll_interval=10)
    wire.world.turn += 1  # a turn passes without any push reaching us
    wire.world.touch(wire.world.objects[0])
    wire.clock.advance(10)
    assert wire.call(waiting) == 1
    late = client.wait_for_next_turn(timeout=25, poll_interval=10)
    for _ in range(3):
        wire.clock.advance(10)
        wire.flush()
    with pytest.raises(RequestTimeout):
        result_of(late)


def test_async_frames_go_to_listeners():
    wire = Wire(TP03)
    seen = []
    wire.protocol.add_async_listener(seen.append)
    wire.call(wire.protocol.request(Connect("t")))
    wire.call(wire.protocol.request(Login("alice", "secret")))
    wire.world.end_turn()
    wire.flush()
    assert seen == [TimeRemaining(0), TimeRemaining(300)]


def test_request_timeout_uses_the_clock():
    wire = Wire(TP04)
    deferred = wire.protocol.request(GetTimeRemaining(), timeout=3)
    wire.clock.advance(3.5)
    with pytest.raises(RequestTimeout):
        result_of(deferred)
    wire.flush()  # the late answer is matched and dropped quietly
    assert wire.protocol.session.pending == {}


def test_connection_lost_fails_waiting_requests():
    wire = Wire(TP04)
    deferred = wire.protocol.request(GetTimeRemaining())
    wire.protocol.connectionLost(Failure(ConnectionClosed("gone")))
    with pytest.raises(ConnectionClosed):
        result_of(deferred)
    assert wire.protocol.disconnected.called
    with pytest.raises(ConnectionClosed):
        result_of(wire.protocol.request(GetTimeRemaining()))


def test_connect_tcp_sends_connect_and_reports_refusal():
    reactor = MemoryReactorClock()
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", 6923)
    connecting = connect_tcp(reactor, "127.0.0.1", endpoint=endpoint, version=TP03)
    _host, _port, factory, _timeout, _bind = reactor.tcpClients[0]
    protocol = factory.buildProtocol(None)
    transport = StringTransport()
    protocol.makeConnection(transport)
    server = FakeConnection(tae_world())
    protocol.dataReceived(server.receive(transport.value()))
    connected = result_of(connecting)
    assert isinstance(connected, TPClientProtocol) and connected.version == TP03
    client = TwistedClient(connected)
    assert client.game.my_leaders() == {} and ColonyKind.MERCHANT.resource_id == 4

    refused = connect_tcp(reactor, "127.0.0.1", endpoint=TCP4ClientEndpoint(reactor, "127.0.0.1", 1))
    reactor.tcpClients[1][2].clientConnectionFailed(None, Failure(ConnectionRefusedError()))
    with pytest.raises(ConnectFailed, match="refused"):
        result_of(refused)
