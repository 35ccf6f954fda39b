"""Connection limits (server.config.limits, enforced by server.tp.network): connections per address, the
listen backlog, frames per second, idle time before login, unread output. Each test checks the
clear answer the client gets and that nothing acknowledged before the limit struck is lost."""

from __future__ import annotations

import pytest
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

import protocol as tp
from protocol import Deframer, Version
from ruleset import OrderType
from server.config.limits import Limits
from server.guards.login_guard import LoginGuard
from server.guards.rates import TokenBucket, address_key
from server.tp.network import TPFactory
from server.views.tp import catalogue
from tests.server.test_session import colonist_of
from tests.server.wire import make_directory

PASSWORD = "a-good-password"


class BufferedTransport(StringTransport):
    """A StringTransport that, like a TCP transport, pauses its producer once more than
    `bufferSize` bytes wait to be sent (here: everything not yet `drain`ed)."""

    bufferSize = 2**16

    def write(self, data: bytes) -> None:
        super().write(data)
        if self.producer is not None and len(self.value()) > self.bufferSize:
            self.producer.pauseProducing()

    def drain(self) -> bytes:
        data = self.value()
        self.clear()
        return data


class Client:
    """One connection to a factory, in memory."""

    def __init__(self, factory: TPFactory, host: str = "10.1.2.3", port: int = 40000):
        address = (IPv6Address if ":" in host else IPv4Address)("TCP", host, port)
        self.connection = factory.buildProtocol(address)
        self.transport = BufferedTransport(peerAddress=address)
        self.connection.makeConnection(self.transport)
        self.deframer = Deframer()
        self.sequence = 0
        self.received: list[tuple[int, tp.Message]] = []

    def send(self, message) -> int:
        self.sequence += 1
        self.connection.dataReceived(tp.encode(message, Version.TP04, self.sequence))
        return self.sequence

    def read(self) -> list[tuple[int, tp.Message]]:
        self.deframer.feed(self.transport.drain())
        out = []
        while (frame := self.deframer.next_frame()) is not None:
            message = tp.decode(frame, object_descs=catalogue.OBJECT_DESCS, order_descs=catalogue.ORDER_DESCS)
            out.append((frame.sequence, message))
        self.received += out
        return out

    def answer(self, message):
        """Send and return the one answer (everything already written is read first)."""
        self.read()
        sequence = self.send(message)
        answers = [m for s, m in self.read() if s == sequence]
        assert len(answers) == 1, answers
        return answers[0]

    def login(self, name: str, create: bool = True) -> None:
        assert isinstance(self.answer(tp.Connect("test")), tp.Okay)
        if create:
            assert isinstance(self.answer(tp.CreateAccount(name, PASSWORD, "", "")), tp.Okay)
        assert isinstance(self.answer(tp.Login(name, PASSWORD)), tp.Okay)

    @property
    def closed(self) -> bool:
        return self.transport.disconnecting

    def lose(self) -> None:
        self.connection.connectionLost(None)


def an_order(game, player: int = 1) -> tuple[int, tp.InsertOrder]:
    """A colonist's Colonize order that the ruleset accepts: (fleet id, request)."""
    fleet = colonist_of(game, player)
    target = game.state.board.system_id(game.state.board.cell_at(0, 0))
    return fleet.id, tp.InsertOrder(fleet.id, -1, OrderType.COLONIZE, (tp.ObjectArg(target),))


def server(**limits):
    clock = Clock()
    directory, game = make_directory(name="tae")
    settings = Limits(**limits)
    factory = TPFactory(directory, limits=settings, guard=LoginGuard(clock, settings), clock=clock)
    return factory, game, clock


# -- connections per address -------------------------------------------------------------------


def test_a_connection_beyond_the_address_share_gets_a_clear_fail_and_is_closed():
    factory, _, clock = server(connections_per_address=2)
    first, second = Client(factory), Client(factory)
    first.login("ann")
    third = Client(factory)
    answer = third.answer(tp.Connect("one too many"))
    assert isinstance(answer, tp.Fail) and answer.code == 3
    assert answer.message == "Too many connections from your address (at most 2); close one and try again."
    assert third.closed
    # the others go on; an order acknowledged before is kept
    assert isinstance(second.answer(tp.Connect("second")), tp.Okay)
    assert isinstance(first.answer(tp.Ping()), tp.Okay) and not first.closed
    # another address has a share of its own; a closed connection frees a place
    assert isinstance(Client(factory, host="10.9.9.9").answer(tp.Connect("other")), tp.Okay)
    second.lose()
    assert isinstance(Client(factory).answer(tp.Connect("again")), tp.Okay)


def test_a_refused_connection_that_sends_nothing_is_closed_soon():
    factory, _, clock = server(connections_per_address=1)
    Client(factory)
    silent = Client(factory)
    clock.advance(4)
    assert not silent.closed
    clock.advance(2)
    assert silent.closed and silent.transport.value() == b""


def test_ipv6_addresses_count_by_their_64_network_and_mapped_ipv4_as_ipv4():
    assert address_key("2001:db8:1:2::5") == address_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::5") != address_key("2001:db8:1:2::5")
    assert address_key("::ffff:10.0.0.7") == "10.0.0.7"
    assert address_key("") == "local"
    factory, _, _ = server(connections_per_address=1)
    Client(factory, host="2001:db8:1:2::5")
    same_site = Client(factory, host="2001:db8:1:2::77")
    assert isinstance(same_site.answer(tp.Connect("x")), tp.Fail)
    other_site = Client(factory, host="2001:db8:1:3::5")
    assert isinstance(other_site.answer(tp.Connect("x")), tp.Okay)


def test_the_default_share_admits_a_7000_connection_load_test_from_one_address():
    from twisted.internet import reactor  # a real heap of timers (task.Clock sorts a list)

    directory, _ = make_directory(name="tae")
    factory = TPFactory(directory, limits=Limits(), guard=LoginGuard(reactor, Limits()), clock=reactor)
    clients = [Client(factory, port=10000 + i) for i in range(7000)]
    try:
        assert factory.connections["10.1.2.3"] == 7000
        assert all(c.connection.refusal is None for c in clients)
        assert isinstance(clients[-1].answer(tp.Connect("last")), tp.Okay)
    finally:
        for client in clients:
            client.lose()  # cancels their timers
    assert factory.connections == {}


# -- frames per second ------------------------------------------------------------------------


def test_frames_beyond_the_rate_wait_in_order_and_none_is_lost():
    factory, game, clock = server(frames_per_second=10, frame_burst=5)
    client = Client(factory)
    client.login("ann")  # 3 frames of the burst
    clock.advance(1)  # the bucket is full again
    fleet, order = an_order(game)
    sequences = [client.send(tp.Ping()) for _ in range(12)]
    sequences.append(client.send(order))
    answered = [s for s, _ in client.read()]
    assert answered == sequences[:5]  # the burst
    clock.advance(0.5)  # five more tokens
    assert [s for s, _ in client.read()] == sequences[5:10]
    clock.advance(1)
    rest = client.read()
    assert [s for s, _ in rest] == sequences[10:]
    assert isinstance(rest[-1][1], tp.Order)
    assert [q.order.type for q in game.queue(fleet)] == [OrderType.COLONIZE]
    assert not client.closed


def test_token_bucket_refills_at_its_rate_up_to_its_burst():
    bucket = TokenBucket(rate=2, burst=4, now=0)
    assert all(bucket.take(0) for _ in range(4)) and not bucket.take(0)
    assert bucket.wait(0) == pytest.approx(0.5)
    assert bucket.take(0.5) and not bucket.take(0.5)
    assert bucket.available(100) == 4
    bucket.spend(100, 6)
    assert bucket.available(100) == -2 and bucket.wait(100) == pytest.approx(1.5)


# -- idle before login ------------------------------------------------------------------------


def test_a_connection_that_does_not_log_in_is_closed_with_a_fail():
    factory, _, clock = server(login_idle_seconds=30)
    client = Client(factory)
    assert isinstance(client.answer(tp.Connect("idle")), tp.Okay)
    clock.advance(20)
    assert isinstance(client.answer(tp.Ping()), tp.Okay)  # a frame: the wait starts again
    clock.advance(29)
    assert not client.closed
    clock.advance(2)
    pushed = client.read()
    assert [(s, type(m), m.code, m.message) for s, m in pushed] == [
        (0, tp.Fail, 3, "No login for 30 s; the connection is closed.")
    ]
    assert client.closed


def test_a_silent_connection_is_closed_and_a_logged_in_one_is_not():
    factory, _, clock = server(login_idle_seconds=30)
    silent = Client(factory)
    player = Client(factory)
    player.login("ann")
    clock.advance(31)
    assert silent.closed and silent.transport.value() == b""  # no version known: no frame
    assert not player.closed
    clock.advance(3600)
    assert isinstance(player.answer(tp.Ping()), tp.Okay)


# -- replies the client does not read --------------------------------------------------------


def test_a_client_that_does_not_read_is_cut_off_and_its_orders_are_kept():
    factory, game, clock = server(pending_output_bytes=20_000)
    client = Client(factory)
    client.login("ann")
    assert client.transport.bufferSize == 20_000
    fleet, order = an_order(game)
    assert isinstance(client.answer(order), tp.Order)
    ids = tuple(game.snapshot.state.fleets)
    # never read again: ask for the whole universe, over and over
    for _ in range(200):
        client.send(tp.GetObjectsByID(ids))
        if client.closed:
            break
    assert client.closed and client.transport.disconnected  # aborted, not flushed
    assert client.connection.closing
    assert [q.order.type for q in game.queue(fleet)] == [OrderType.COLONIZE]
    # the server goes on with everyone else
    other = Client(factory, host="10.7.7.7")
    other.login("bob")
    assert isinstance(other.answer(tp.Ping()), tp.Okay)


def test_a_client_that_reads_its_replies_is_never_cut_off():
    factory, game, _ = server(pending_output_bytes=20_000)
    client = Client(factory)
    client.login("ann")
    ids = tuple(game.snapshot.state.fleets)
    for _ in range(200):
        client.send(tp.GetObjectsByID(ids))
        assert len(client.read()) == 1 + len(ids)
    assert not client.closed


def test_limits_off_means_no_limit():
    factory, _, clock = server(
        connections_per_address=0, frames_per_second=0, login_idle_seconds=0, pending_output_bytes=0
    )
    clients = [Client(factory) for _ in range(3)]
    clock.advance(10_000)
    assert not any(c.closed for c in clients)
    assert clients[0].transport.producer is None
    sequences = [clients[0].send(tp.Connect("x"))] + [clients[0].send(tp.Ping()) for _ in range(2000)]
    assert [s for s, _ in clients[0].read()] == sequences


# -- the listen backlog -----------------------------------------------------------------------


def test_listeners_get_the_backlog_unless_they_name_one():
    from server.services.listeners import with_backlog

    assert with_backlog("tcp:6923", 1024) == "tcp:6923:backlog=1024"
    assert with_backlog("tcp:6923:interface=127.0.0.1", 64) == "tcp:6923:interface=127.0.0.1:backlog=64"
    assert with_backlog("ssl:6924:privateKey=k.pem", 8) == "ssl:6924:privateKey=k.pem:backlog=8"
    assert with_backlog("tcp:6923:backlog=10", 1024) == "tcp:6923:backlog=10"
    assert with_backlog("tcp:6923", 0) == "tcp:6923"
    assert with_backlog("systemd:domain=INET:index=0", 1024) == "systemd:domain=INET:index=0"
