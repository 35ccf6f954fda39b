"""The login brake's budgets beyond the per-address one (server.guards.login_guard): per account
from unknown places, globally, every password hash, account creations; driven directly, with a
clock (the TP listener drives it in test_login_guard.py, the web listener in tests/web)."""

from __future__ import annotations

from twisted.internet.task import Clock

from server.config.limits import Limits
from server.guards.login_guard import LoginGuard, account_key
from server.model.refusals import (
    TOO_MANY_ACCOUNT_FAILURES,
    TOO_MANY_ACCOUNTS,
    TOO_MANY_FAILED_LOGINS,
    TOO_MANY_PASSWORD_CHECKS,
    Refused,
)


def attempt(guard: LoginGuard, address: str, name: str, ok: bool, new_account: bool = True, **kwargs):
    """One login on a fresh client: ("ok" | "failed" | the refusal, the client)."""
    client = guard.client(address)
    results: list = []
    guard_d = client.admit(name, **kwargs)
    guard_d.addCallbacks(results.append, results.append)
    guard.clock.advance(17)  # past any delay before a refusal (login_failure_delay_max)
    (outcome,) = results
    if isinstance(getattr(outcome, "value", None), Refused):
        return outcome.value.problem, client
    outcome.done(ok, new_account=new_account)
    return ("ok" if ok else "failed"), client


def guard(**limits) -> LoginGuard:
    clock = Clock()
    clock.advance(1_000_000)
    return LoginGuard(clock, Limits(**limits), default_game=lambda: "tae")


def test_the_account_key_is_the_prepared_name_and_its_game():
    assert account_key("Ann", "tae") == account_key("ａｎｎ@tae") == "ann@tae"
    assert account_key("ann@other", "tae") == "ann@other"


def test_an_account_guessed_from_many_addresses_is_refused_from_unknown_places_only():
    brake = guard(login_failures_per_account=5, login_account_window=900)
    assert attempt(brake, "198.51.100.1", "ann", ok=True)[0] == "ok"  # ann's usual place
    for n in range(5):
        assert attempt(brake, f"203.0.113.{n}", "ann", ok=False)[0] == "failed"
    assert attempt(brake, "203.0.113.77", "ann", ok=False)[0] == TOO_MANY_ACCOUNT_FAILURES
    assert attempt(brake, "203.0.113.78", "ann@tae", ok=True)[0] == TOO_MANY_ACCOUNT_FAILURES
    assert attempt(brake, "198.51.100.1", "ann", ok=True)[0] == "ok"  # known: tried, let in
    assert attempt(brake, "203.0.113.79", "bob", ok=True)[0] == "ok"  # another account: untouched
    brake.clock.advance(900)
    assert attempt(brake, "203.0.113.80", "ann", ok=True)[0] == "ok"  # the budget came back


def test_past_the_global_ceiling_only_fresh_or_known_clients_are_tried():
    brake = guard(login_failures_global=4, login_failure_window=3600, login_failures_per_account=0)
    for n in range(4):
        assert attempt(brake, f"203.0.113.{n}", f"user{n}", ok=False)[0] == "failed"
    # a client that failed before is refused untried; a fresh one is still tried
    client = brake.client("203.0.113.50")
    client.failures = 1
    refused: list = []
    client.admit("carol").addErrback(lambda f: refused.append(f.value.problem))
    brake.clock.advance(17)
    assert refused == [TOO_MANY_FAILED_LOGINS] and client.must_close
    assert attempt(brake, "203.0.113.51", "carol", ok=True)[0] == "ok"


def test_every_password_check_counts_per_address_and_per_account():
    brake = guard(password_hashes_per_address=3, password_hashes_per_account=0, password_hash_window=600)
    for _ in range(3):
        assert attempt(brake, "192.0.2.1", "ann", ok=True)[0] == "ok"  # correct ones count too
    assert attempt(brake, "192.0.2.1", "bob", ok=True)[0] == TOO_MANY_PASSWORD_CHECKS
    assert attempt(brake, "192.0.2.2", "bob", ok=True)[0] == "ok"
    per_account = guard(password_hashes_per_account=2, password_hash_window=600)
    for n in range(2):
        assert attempt(per_account, f"192.0.2.{n + 10}", "dan", ok=False)[0] == "failed"
    assert attempt(per_account, "192.0.2.30", "dan", ok=True)[0] == TOO_MANY_PASSWORD_CHECKS


def test_account_creations_are_counted_per_address_when_they_succeed():
    brake = guard(accounts_per_address=2, login_account_window=900)
    assert attempt(brake, "192.0.2.1", "a", ok=True, creating=True)[0] == "ok"
    assert attempt(brake, "192.0.2.1", "b", ok=False, creating=True)[0] == "failed"  # refused: free
    assert attempt(brake, "192.0.2.1", "c", ok=True, creating=True)[0] == "ok"
    assert attempt(brake, "192.0.2.1", "d", ok=True, creating=True)[0] == TOO_MANY_ACCOUNTS
    assert attempt(brake, "192.0.2.1", "a", ok=True)[0] == "ok"  # logging in is not creating
    assert attempt(brake, "192.0.2.9", "e", ok=True, creating=True)[0] == "ok"


def test_a_creation_that_joined_an_existing_account_is_not_counted_as_one():
    brake = guard(accounts_per_address=1, login_account_window=900)
    for _ in range(3):  # the same account joins three games
        assert attempt(brake, "192.0.2.1", "a", ok=True, creating=True, new_account=False)[0] == "ok"
    assert attempt(brake, "192.0.2.1", "b", ok=True, creating=True)[0] == "ok"
    assert attempt(brake, "192.0.2.1", "c", ok=True, creating=True)[0] == TOO_MANY_ACCOUNTS
