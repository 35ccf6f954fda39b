"""The admin listener's limits, on a Clock: connections per address, the login's deadline (not
extended by frames or bytes), the idle timeout, frames per second, and the login guard shared
with TP (a failed login waits, a refused one is a Fail 3 with a text)."""

from __future__ import annotations

from twisted.internet.address import IPv6Address
from twisted.internet.testing import StringTransport
from twisted.logger import LogPublisher

from protocol import Connect, Fail, FailCode, Login, Okay
from protocol.admin import RESULT_FAILED, Command, CommandResult, encode_admin
from server.admin.commands import COMMANDS
from server.admin.live import LiveBackend
from server.admin.network import AdminFactory
from server.config.admin import AdminSettings
from server.config.file import GameConfig
from server.config.limits import Limits
from server.game.passwords import InlineHasher
from server.guards.connections import DescriptorShare
from server.guards.login_guard import LoginGuard
from server.model.refusals import POOL_EXHAUSTED
from server.model.timer_settings import TimerSettings
from tests.admin.wire import ADMIN, PASSWORD, USERS, AdminWire, make_factory
from tests.server.wire import make_directory

LIMITS = dict(
    admin_connections_per_address=2,
    admin_login_seconds=10.0,
    admin_idle_seconds=60.0,
    admin_frames_per_second=2.0,
    admin_frame_burst=3,
    login_failure_delay=1.0,
    login_failure_delay_max=4.0,
    login_failures_per_account=3,
)


def limited_factory(share: DescriptorShare | None = None, **overrides) -> tuple[AdminFactory, LoginGuard]:
    directory, game = make_directory()
    clock = game.clock
    backend = LiveBackend(
        directory, game.store, clock, GameConfig(timer=TimerSettings(turn_length=0)), new_seed=lambda: 42
    )
    limits = Limits(**{**LIMITS, **overrides}).validated()
    guard = LoginGuard(clock, limits, slots=1)
    factory = AdminFactory(
        AdminSettings(users=USERS),
        backend,
        clock,
        InlineHasher(),
        log_publisher=LogPublisher(),
        limits=limits,
        guard=guard,
        share=share,
    )
    factory.doStart()
    return factory, guard


def closed_with(wire: AdminWire, words: str) -> None:
    replies = wire.read()
    assert replies and replies[-1][0] == 0, replies
    fail = replies[-1][1]
    assert isinstance(fail, Fail) and fail.code == FailCode.UNAVAILABLE_TEMPORARILY and words in fail.message
    assert wire.transport.disconnecting


def test_an_address_beyond_its_connections_is_told_and_closed_and_others_are_not_counted():
    factory, _ = limited_factory()
    first, second = AdminWire(factory), AdminWire(factory)
    third = AdminWire(factory)
    closed_with(third, "Too many admin connections from your address (at most 2)")
    assert isinstance(AdminWire(factory, "127.0.0.2").one(Connect("x")), Okay)
    third.connection.connectionLost(None)
    first.connection.connectionLost(None)  # one gone: room for one more
    assert isinstance(AdminWire(factory).one(Connect("x")), Okay)
    assert isinstance(second.one(Connect("x")), Okay)


def test_ipv6_addresses_count_by_their_64():
    factory, _ = limited_factory()
    for host in ("2001:db8:0:1::1", "2001:db8:0:1::2"):
        connection = factory.buildProtocol(IPv6Address("TCP", host, 40000))
        connection.makeConnection(StringTransport(peerAddress=IPv6Address("TCP", host, 40000)))
    third = factory.buildProtocol(IPv6Address("TCP", "2001:db8:0:1:ffff::9", 40000))
    assert third.refusal is not None and "at most 2" in third.refusal
    assert factory.buildProtocol(IPv6Address("TCP", "2001:db8:0:2::1", 40000)).refusal is None


def test_the_listeners_other_than_tp_share_the_descriptors_left_to_them():
    share = DescriptorShare(0.5, ceiling=1)
    assert share.take()  # the web listener holds the only one
    factory, _ = limited_factory(share)
    closed_with(AdminWire(factory), "no room for another admin connection")


def test_the_login_deadline_is_not_extended_by_frames_or_bytes():
    factory, _ = limited_factory()
    clock = factory.reactor
    wire = AdminWire(factory)
    assert isinstance(wire.one(Connect("x")), Okay)
    login = encode_admin(Login(ADMIN, PASSWORD), 9)
    for index in range(9):
        clock.advance(1.0)
        wire.raw(login[index : index + 1])
        assert not wire.transport.disconnecting
    clock.advance(1.0)
    closed_with(wire, "No login within 10 s of connecting")


def test_a_login_in_time_lifts_the_deadline_and_the_idle_timeout_follows():
    factory, _ = limited_factory()
    clock = factory.reactor
    wire = AdminWire(factory)
    clock.advance(9.0)
    wire.login()
    clock.advance(59.0)
    assert not wire.transport.disconnecting
    assert isinstance(wire.one(Connect("x")), Fail)  # any request: not idle
    clock.advance(59.0)
    assert not wire.transport.disconnecting
    clock.advance(1.5)
    closed_with(wire, "No request for 60 s")


def test_frames_beyond_the_rate_wait_and_none_is_lost():
    factory, _ = limited_factory()
    clock = factory.reactor
    wire = AdminWire(factory)
    replies = wire.send(*[Connect("x") for _ in range(7)])
    assert len(replies) == 3  # the burst
    clock.advance(0.5)
    assert len(wire.read()) == 1
    clock.advance(1.5)
    assert [sequence for sequence, _ in wire.read()] == [5, 6, 7]


def test_a_failed_login_waits_and_an_account_guessed_at_is_refused_but_not_where_its_admin_was():
    factory, guard = limited_factory()
    clock = factory.reactor
    AdminWire(factory).login()  # the admin logs in from 127.0.0.1: a place the account knows
    guesser = AdminWire(factory, "127.0.0.9")
    assert isinstance(guesser.one(Connect("x")), Okay)
    assert guesser.send(Login(ADMIN, "guess-1")) == []  # the answer waits for the delay
    clock.advance(1.0)
    [(_, bad)] = guesser.read()
    assert isinstance(bad, Fail) and bad.message == "Admin Login Error - bad username or password"
    for n in range(2):
        other = AdminWire(factory, f"127.0.1.{n}")
        other.send(Connect("x"), Login(ADMIN, "guess"))
        clock.advance(4.0)
    fresh = AdminWire(factory, "127.0.0.10")
    fresh.send(Connect("x"))
    refused = fresh.one(Login(ADMIN, PASSWORD))  # the right password, from a stranger
    assert isinstance(refused, Fail) and refused.code == FailCode.UNAVAILABLE_TEMPORARILY
    assert "Too many failed logins on this account" in refused.message
    AdminWire(factory).login()  # the admin, where they logged in before, is let in
    assert guard.failure_log is not None


def test_a_player_account_and_an_admin_account_of_one_name_are_two_accounts_to_the_guard():
    factory, guard = limited_factory()
    clock = factory.reactor
    for n in range(3):
        wire = AdminWire(factory, f"127.0.2.{n}")
        wire.send(Connect("x"), Login(ADMIN, "guess"))
        clock.advance(4.0)
    assert guard._account_failures is not None
    assert guard._account_failures.empty(guard.account_key(f"{ADMIN}@tae"), clock.seconds()) is False


def test_add_player_to_a_game_whose_pool_cannot_deal_a_hand_is_a_clear_failure():
    directory, game = make_directory()
    for n in range(25):  # the standard pool deals 25 hands of 6
        game.create_account(f"p{n}", "password")
    wire = AdminWire(make_factory(directory, game))
    wire.login()
    add_player = next(command for command in COMMANDS if command.name == "add-player")
    result = wire.one(Command(add_player.id, ("tae", "late", "late-password")))
    expected = f"cannot add 'late' to game 'tae': {POOL_EXHAUSTED.message}"
    assert result == CommandResult(RESULT_FAILED, expected)
    assert len(game.state.players) == 25


def test_an_admin_that_does_not_read_gets_no_more_answers_until_it_does():
    factory, _ = limited_factory(admin_frames_per_second=0.0)
    wire = AdminWire(factory)
    wire.login()
    wire.connection.pauseProducing()  # what the transport does when its buffer is full
    assert wire.send(*[Connect("x") for _ in range(5)]) == []
    assert len(wire.connection.pump.pending) == 5  # they wait; none is lost
    wire.connection.resumeProducing()
    assert [sequence for sequence, _ in wire.read()] == [3, 4, 5, 6, 7]
