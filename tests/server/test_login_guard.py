"""Logins under attack (server.guards.login_guard, driven by server.tp.network): growing delays, the
per-address budget, the real player never locked out, unknown names like known ones, the
failed-login log, and the order in which waiting logins get a hashing slot."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock
from twisted.logger import formatEvent, globalLogPublisher

import protocol as tp
from server.config.limits import Limits
from server.game.game import Game
from server.game.passwords import InlineHasher
from server.guards.login_guard import LIFO_AFTER, LoginGuard
from server.model.refusals import BAD_LOGIN, TOO_MANY_FAILED_LOGINS, WRONG_ACCOUNT_PASSWORD
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.tp.login_requests import ACCOUNT_CREATED, ACCOUNT_JOINED
from tests.server.test_limits import PASSWORD, Client, server


class CountingHasher(InlineHasher):
    def __init__(self):
        super().__init__()
        self.verified: list[str | None] = []

    def verify(self, password, stored):
        self.verified.append(stored)
        return super().verify(password, stored)


@pytest.fixture
def log_events():
    events: list[dict] = []
    globalLogPublisher.addObserver(events.append)
    yield events
    globalLogPublisher.removeObserver(events.append)


def with_accounts(**limits):
    factory, game, clock = server(**limits)
    setup = Client(factory, host="10.200.0.1")
    setup.login("ann")
    setup.answer(tp.CreateAccount("bob", PASSWORD, "", ""))
    game.hasher = CountingHasher()
    return factory, game, clock


def connected(factory, host="10.1.2.3") -> Client:
    client = Client(factory, host=host)
    assert isinstance(client.answer(tp.Connect("test")), tp.Okay)
    return client


def answers_after(client: Client, clock: Clock, sequence: int, step: float = 0.25, limit: float = 60):
    """(seconds until the answer to `sequence` came, the answer)."""
    waited = 0.0
    while waited <= limit:
        for s, message in client.read():
            if s == sequence:
                return waited, message
        clock.advance(step)
        waited += step
    raise AssertionError(f"no answer to {sequence} in {limit} s")


# -- one connection -----------------------------------------------------------------------------


def test_failed_logins_are_answered_ever_later_then_the_connection_is_closed():
    factory, game, clock = with_accounts()
    client = connected(factory)
    delays = []
    for attempt in range(5):
        sequence = client.send(tp.Login("ann", f"wrong-{attempt}"))
        waited, answer = answers_after(client, clock, sequence)
        assert (answer.code, answer.message) == (1, BAD_LOGIN.message)
        delays.append(waited)
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert client.closed
    assert len(game.hasher.verified) == 5


def test_requests_after_a_failed_login_wait_for_its_answer_in_order():
    factory, _, clock = with_accounts()
    client = connected(factory)
    login = client.send(tp.Login("ann", "wrong"))
    ping = client.send(tp.Ping())
    assert client.read() == []
    clock.advance(1)
    assert [s for s, _ in client.read()] == [login, ping]


def test_a_correct_login_after_failures_on_the_same_connection_still_works():
    factory, _, clock = with_accounts()
    client = connected(factory)
    sequence = client.send(tp.Login("ann", "wrong"))
    answers_after(client, clock, sequence)
    assert isinstance(client.answer(tp.Login("ann", PASSWORD)), tp.Okay)
    assert isinstance(client.answer(tp.Ping()), tp.Okay) and not client.closed


def test_unknown_names_cost_what_known_names_cost_and_get_the_same_answer():
    factory, game, clock = with_accounts()
    known, unknown = connected(factory), connected(factory, host="10.9.0.1")
    a = answers_after(known, clock, known.send(tp.Login("ann", "wrong")))
    b = answers_after(unknown, clock, unknown.send(tp.Login("nobody-at-all", "wrong")))
    assert a[0] == b[0] == 1.0
    assert (a[1].code, a[1].message) == (b[1].code, b[1].message)
    # both were hashed: the unknown name against the dummy hash
    assert game.hasher.verified[0] is not None and game.hasher.verified[1] is None


# -- one address ------------------------------------------------------------------------------


def flood(factory, clock, failures: int, host="10.1.2.3") -> list[Client]:
    """`failures` wrong logins from `host`, five per connection; the connections that remain."""
    clients = []
    done = 0
    while done < failures:
        client = connected(factory, host)
        clients.append(client)
        for _ in range(min(5, failures - done)):
            if client.closed:
                break
            answers_after(client, clock, client.send(tp.Login("ann", "guess")), step=1)
            done += 1
    return [c for c in clients if not c.closed]


def test_an_address_over_its_budget_is_refused_untried_but_the_real_player_gets_in_at_once():
    factory, game, clock = with_accounts(login_failures_per_address=10, login_failure_window=3600)
    survivors = flood(factory, clock, 8)
    assert survivors, "a connection that failed, still open"
    flood(factory, clock, 3)  # over the budget now (11 > 10)
    hashed = len(game.hasher.verified)
    failed_before = survivors[0]
    sequence = failed_before.send(tp.Login("ann", "one more"))
    waited, answer = answers_after(failed_before, clock, sequence)
    assert (answer.code, answer.message) == (3, TOO_MANY_FAILED_LOGINS.message)
    assert waited == 16.0 and failed_before.closed
    assert len(game.hasher.verified) == hashed  # refused without hashing
    # a fresh connection from the same address, with the right password: answered at once
    real = connected(factory)
    assert isinstance(real.answer(tp.Login("ann", PASSWORD)), tp.Okay)
    # a fresh connection's failure there: tried, answered after the longest delay, closed
    fresh = connected(factory)
    waited, answer = answers_after(fresh, clock, fresh.send(tp.Login("ann", "guess")))
    assert (answer.code, waited, fresh.closed) == (1, 16.0, True)
    # another address is not touched by it
    elsewhere = connected(factory, host="192.0.2.50")
    waited, answer = answers_after(elsewhere, clock, elsewhere.send(tp.Login("bob", "typo")))
    assert (answer.code, waited, elsewhere.closed) == (1, 1.0, False)


def test_the_budget_comes_back_with_time():
    factory, _, clock = with_accounts(login_failures_per_address=4, login_failure_window=60)
    flood(factory, clock, 5)
    clock.advance(120)  # the bucket refills: 4 failures per 60 s
    client = connected(factory)
    waited, answer = answers_after(client, clock, client.send(tp.Login("ann", "typo")))
    assert (answer.code, waited, client.closed) == (1, 1.0, False)


def test_account_creation_takes_a_slot_but_its_refusals_are_not_failed_logins():
    factory, _, clock = with_accounts()
    client = connected(factory)
    for _ in range(10):
        answer = client.answer(tp.CreateAccount("ann", PASSWORD, "", ""))  # exists: refused at once
        assert answer.code == 2
    assert not client.closed and client.connection.login.failures == 0


def test_joining_another_game_with_a_wrong_password_for_the_account_is_a_failed_login():
    factory, game, clock = with_accounts()
    setup = GameSetup("g2", timer=TimerSettings(turn_length=0))
    other = Game(game.store.create_game(setup), setup, setup.initial_state(), game.store, Clock())
    factory.directory.add(other)
    client = connected(factory)
    _, answer = answers_after(
        client, clock, client.send(tp.CreateAccount("ann@g2", "not-anns-password", "", ""))
    )
    assert answer.message == WRONG_ACCOUNT_PASSWORD.message
    assert client.connection.login.failures == 1
    _, joined = answers_after(client, clock, client.send(tp.CreateAccount("ann@g2", PASSWORD, "", "")))
    assert isinstance(joined, tp.Okay) and client.connection.login.failures == 1


def test_joining_games_with_the_account_s_password_is_not_an_account_creation():
    """One account per server: a TP client joins each game by creating `NAME@GAME` with the
    account's password; only a new account counts against `accounts_per_address`."""
    factory, game, clock = with_accounts(accounts_per_address=1)
    for name in ("g2", "g3", "g4"):
        setup = GameSetup(name, timer=TimerSettings(turn_length=0))
        factory.directory.add(
            Game(game.store.create_game(setup), setup, setup.initial_state(), game.store, Clock())
        )
    client = connected(factory, host="10.9.9.9")
    _, made = answers_after(client, clock, client.send(tp.CreateAccount("cat@g2", PASSWORD, "", "")))
    assert made == tp.Okay(ACCOUNT_CREATED)
    for name in ("g3", "g4"):
        _, joined = answers_after(
            client, clock, client.send(tp.CreateAccount(f"cat@{name}", PASSWORD, "", ""))
        )
        assert joined == tp.Okay(ACCOUNT_JOINED), joined
    _, refused = answers_after(client, clock, client.send(tp.CreateAccount("dan@g2", PASSWORD, "", "")))
    assert isinstance(refused, tp.Fail) and "Too many accounts" in refused.message


# -- the log ----------------------------------------------------------------------------------


def test_failed_logins_are_logged_with_address_and_name_never_the_password(log_events):
    factory, _, clock = with_accounts(failed_login_log_lines=3, login_failures_per_address=0)
    secret = "hunter2-the-secret"
    name = "mallory\n" + "x" * 5000
    flood_clients = [connected(factory) for _ in range(3)]
    for client in flood_clients:
        answers_after(client, clock, client.send(tp.Login(name, secret)))
        answers_after(client, clock, client.send(tp.Login("ann", secret)))
    lines = [e for e in log_events if "failed login" in str(e.get("log_format", ""))]
    rendered = [formatEvent(e) for e in lines]
    assert len(rendered) == 3
    assert rendered[0].startswith("failed login from 10.1.2.3 for 'mallory\\n") and rendered[0].endswith("…'")
    assert len(rendered[0]) < 120
    assert all(secret not in text and secret not in repr(e) for text, e in zip(rendered, lines, strict=True))
    clock.advance(60)  # the window ends: the rest in one line
    summaries = [formatEvent(e) for e in log_events if "more failed logins" in str(e.get("log_format", ""))]
    assert len(summaries) == 1
    assert summaries[0].startswith(
        "3 more failed logins from 10.1.2.3 in the last 60 s, not logged one by one"
    )
    assert "'ann'" in summaries[0] and "'mallory\\nxxx" in summaries[0]
    assert all(secret not in formatEvent(e) for e in log_events)


# -- who hashes next ----------------------------------------------------------------------------


class Slots:
    """A guard with one slot and tickets in hand, for the order of admissions."""

    def __init__(self, **limits):
        self.clock = Clock()
        self.guard = LoginGuard(self.clock, Limits(**limits), slots=1)
        self.order: list[str] = []
        self.tickets: list = []

    def wait(self, label: str, address: str = "10.1.2.3", failures: int = 0):
        client = self.guard.client(address)
        client.failures = failures
        d = client.admit(label)
        d.addCallback(lambda ticket: (self.order.append(label), self.tickets.append(ticket)))
        return client

    def release(self) -> None:
        self.tickets.pop(0).done(True)


def test_clean_connections_go_before_failed_ones_and_addresses_take_turns():
    slots = Slots()
    slots.wait("holder")
    slots.wait("a-failed", failures=1)
    slots.wait("a-clean-1")
    slots.wait("b-clean", address="192.0.2.1")
    slots.wait("a-clean-2")
    for _ in range(4):
        slots.release()
    assert slots.order == ["holder", "a-clean-1", "b-clean", "a-clean-2", "a-failed"]


def test_when_many_wait_at_one_address_the_newest_goes_first():
    slots = Slots()
    slots.wait("holder")
    for i in range(LIFO_AFTER + 4):
        slots.wait(f"flood-{i}")
    slots.wait("real player")
    slots.release()
    assert slots.order == ["holder", "real player"]


def test_a_login_whose_connection_is_gone_is_never_hashed():
    slots = Slots()
    slots.wait("holder")
    gone = slots.wait("gone")
    slots.wait("next")
    gone.lost()
    slots.release()
    assert slots.order == ["holder", "next"]


def test_a_failed_connection_over_budget_is_refused_without_a_slot():
    slots = Slots(login_failures_per_address=2)
    client = slots.guard.client("10.1.2.3")
    for _ in range(2):
        ticket = []
        client.admit("ann").addCallback(ticket.append)
        ticket[0].done(False)
    refused = []
    client.admit("ann").addErrback(refused.append)
    assert refused == []  # answered only after the longest delay
    slots.clock.advance(16)
    assert refused[0].value.problem == TOO_MANY_FAILED_LOGINS and client.must_close
    assert slots.guard.busy == 0


@pytest.mark.parametrize("succeeded", [True, False])
def test_a_ticket_is_given_back_once(succeeded):
    slots = Slots()
    slots.wait("holder")
    ticket = slots.tickets[0]
    ticket.done(succeeded)
    ticket.done(succeeded)
    assert slots.guard.busy == 0


def test_the_guard_hashes_at_most_its_slots_at_once():
    clock = Clock()
    guard = LoginGuard(clock, Limits(hashing_threads=3))
    admitted = []
    for i in range(10):
        guard.client(f"10.0.0.{i}").admit("x").addCallback(admitted.append)
    assert len(admitted) == 3 and guard.busy == 3
    admitted[0].done(True)
    assert len(admitted) == 4
