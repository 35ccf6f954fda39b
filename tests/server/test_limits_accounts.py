"""Accounts: names unique without regard to case and limited in length (refusals that do not echo
them whole), the password policy, password changes by players and operators (with or without a
running server), and hashes made stronger at the next correct login."""

from __future__ import annotations

import time

import pytest
from twisted.internet import defer

import protocol as tp
from server.database import SyncDatabase, upgrade
from server.game.game import Game
from server.game.passwords import InlineHasher, PasswordPolicy, hash_cost, hash_password, verify_password
from server.model.refusals import (
    ACCOUNT_EXISTS,
    BAD_LOGIN,
    BAD_NAME,
    EMPTY_PASSWORD,
    LONG_PASSWORD,
    MAX_NAME,
    NO_SUCH_PLAYER,
    Refused,
)
from server.model.store import Account
from server.operating import on_database as operations
from tests.server.test_operations import WallClock, queue, result, setup, start_desk
from tests.server.wire import Wire, make_directory
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import logs_in
from tests.support.operator import operate

STRICT = PasswordPolicy(min_length=8, n=2**10)


def strict_game(new_game):
    store, game = new_game()
    game.hasher = InlineHasher(policy=STRICT)
    return store, game


def refused(d: defer.Deferred) -> Refused:
    return failureResultOf(d, Refused).value


# -- names ------------------------------------------------------------------------------------


def test_names_are_unique_without_regard_to_case_and_log_in_in_any_case(new_game):
    store, game = strict_game(new_game)
    assert successResultOf(game.create_account("Alice", "alice-password")) == 1
    for other in ("alice", "ALICE", "aLiCe"):
        assert refused(game.create_account(other, "another-password")).problem == ACCOUNT_EXISTS
    assert len(store.games[game.id].accounts) == 1
    assert logs_in(game, "ALICE", "alice-password") == 1 and logs_in(game, "alice", "wrong-password") is None
    assert game.player_id("alice") == 1


def test_a_database_from_before_keeps_names_that_differ_only_in_case(new_game):
    store, game = new_game()
    stored = store.games[game.id]  # as an older server stored them
    stored.accounts += [
        Account("bob", hash_password("one", n=16), 1),
        Account("BOB", hash_password("two", n=16), 2, owner="BOB~tae"),  # as revision 0007a keeps it
    ]
    game = Game.restore(stored, store, game.clock)
    assert logs_in(game, "bob", "one") == 1 and logs_in(game, "BOB", "two") == 2
    assert logs_in(game, "Bob", "one") is None  # ambiguous: no account
    # the same password would prove both, but one account has one seat in a game: they stay two
    successResultOf(game.set_password("BOB", "one"))
    assert logs_in(game, "bob", "one") == 1 and dict(game.snapshot.owners) == {1: "bob", 2: "BOB~tae"}
    assert refused(game.create_account("Bob", "three")).problem == ACCOUNT_EXISTS


@pytest.mark.parametrize(
    "name", ["", " ann", "ann ", "a@b", "x" * (MAX_NAME + 1), "x" * 5000, "new\nline", "tab\there", "\x00"]
)
def test_bad_names_are_refused_without_echoing_them(new_game, name):
    store, game = new_game()
    problem = refused(game.create_account(name, "password")).problem
    assert problem == BAD_NAME and len(problem.message) < 150
    assert (name not in problem.message) or not name
    assert store.games[game.id].accounts == []


def test_long_names_over_tp_get_short_answers():
    directory, game = make_directory()
    wire = Wire(directory)
    assert isinstance(wire.one(tp.Connect("t")), tp.Okay)
    long = "y" * 5000
    for request in (
        tp.CreateAccount(long, "password", "", ""),
        tp.CreateAccount(f"ann@{long}", "password", "", ""),
        tp.Login(long, "password"),
        tp.Login(f"ann@{long}", "password"),
    ):
        answer = wire.one(request)
        assert isinstance(answer, tp.Fail) and len(answer.message) < 150, answer.message
    assert game.snapshot.usernames == {}


# -- passwords --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "password, message",
    [
        ("", EMPTY_PASSWORD.message),
        ("short", "A password must have at least 8 characters."),
        ("x" * 2000, LONG_PASSWORD.message),
    ],
)
def test_the_password_policy_refuses_with_a_clear_message(new_game, password, message):
    store, game = strict_game(new_game)
    assert refused(game.create_account("ann", password)).message == message
    assert store.games[game.id].accounts == [] and game.snapshot.usernames == {}
    successResultOf(game.create_account("bob", "long-enough"))
    assert refused(game.change_password("bob", "long-enough", password)).message == message
    assert logs_in(game, "bob", "long-enough") == 1


def test_an_auto_added_login_with_a_short_password_is_refused_over_tp():
    directory, game = make_directory(auto_add=True)
    game.hasher = InlineHasher(policy=STRICT)
    wire = Wire(directory)
    assert isinstance(wire.one(tp.Connect("t")), tp.Okay)
    answer = wire.one(tp.Login("newcomer", "abc"))
    assert (answer.code, answer.message) == (1, "A password must have at least 8 characters.")
    assert game.snapshot.usernames == {}
    assert isinstance(wire.one(tp.Login("newcomer", "abcdefgh")), tp.Okay)


def test_the_server_policy_refuses_short_passwords_by_default():
    assert PasswordPolicy().min_length == 6
    assert PasswordPolicy().problem("12345") is not None and PasswordPolicy().problem("123456") is None


# -- changing a password ---------------------------------------------------------------------


def test_a_player_changes_their_password(new_game):
    store, game = strict_game(new_game)
    successResultOf(game.create_account("ann", "first-password"))
    assert refused(game.change_password("ann", "not-the-password", "second-password")).problem == BAD_LOGIN
    assert refused(game.change_password("nobody", "first-password", "second-password")).problem == BAD_LOGIN
    assert successResultOf(game.change_password("ANN", "first-password", "second-password")) == 1
    assert logs_in(game, "ann", "first-password") is None and logs_in(game, "ann", "second-password") == 1
    stored = store.games[game.id].accounts[0].password_hash
    assert verify_password("second-password", stored)
    restored = Game.restore(store.games[game.id], store, game.clock)
    assert logs_in(restored, "ann", "second-password") == 1


def test_a_password_change_gives_the_player_a_new_credential_mark_that_a_restart_keeps(new_game):
    store, game = strict_game(new_game)
    successResultOf(game.create_account("ann", "first-password"))
    successResultOf(game.create_account("bob", "bobs-password"))
    before = dict(game.snapshot.credential_marks)
    assert set(before) == {1, 2} and before[1] != before[2]
    assert all(len(mark) == 12 for mark in before.values())
    hashes = [account.password_hash for account in store.games[game.id].accounts]
    assert not any(mark in digest for mark in before.values() for digest in hashes)  # not the hash
    logs_in(game, "ann", "first-password")
    assert dict(game.snapshot.credential_marks) == before  # a login changes nothing
    successResultOf(game.change_password("ann", "first-password", "second-password"))
    after = dict(game.snapshot.credential_marks)  # published at once: the web sees it
    assert after[1] != before[1] and after[2] == before[2]
    restored = Game.restore(store.games[game.id], store, game.clock)
    assert dict(restored.snapshot.credential_marks) == after


def test_an_operator_sets_a_password(new_game):
    store, game = strict_game(new_game)
    successResultOf(game.create_account("ann", "first-password"))
    assert refused(game.set_password("nobody", "whatever-pw")).problem == NO_SUCH_PLAYER
    assert refused(game.set_password("ann", "short")).message.startswith("A password must have")
    assert successResultOf(game.set_password("ann", password_hash=hash_password("operator-set", n=16))) == 1
    assert logs_in(game, "ann", "operator-set") == 1 and logs_in(game, "ann", "first-password") is None


# -- stronger hashes --------------------------------------------------------------------------


def test_a_weaker_hash_is_made_stronger_at_the_next_correct_login(new_game):
    store, game = new_game()
    game.hasher = InlineHasher(policy=PasswordPolicy(min_length=1, n=2**10))
    successResultOf(game.create_account("ann", "secret"))
    assert hash_cost(store.games[game.id].accounts[0].password_hash) == (2**10, 8, 1)
    game.hasher = InlineHasher(policy=PasswordPolicy(min_length=1, n=2**12))
    assert logs_in(game, "ann", "wrong") is None
    assert hash_cost(store.games[game.id].accounts[0].password_hash) == (2**10, 8, 1)  # not on failure
    assert logs_in(game, "ann", "secret") == 1
    upgraded = store.games[game.id].accounts[0].password_hash
    assert hash_cost(upgraded) == (2**12, 8, 1) and verify_password("secret", upgraded)
    assert logs_in(game, "ann", "secret") == 1
    assert store.games[game.id].accounts[0].password_hash == upgraded  # once


def test_policy_knows_which_hashes_are_weaker():
    policy = PasswordPolicy(n=2**14)
    assert policy.needs_upgrade(hash_password("x", n=2**10))
    assert not policy.needs_upgrade(hash_password("x", n=2**14))
    assert not policy.needs_upgrade("not-a-hash")


# -- the operator's command, with and without a running server ---------------------------------


@pytest.fixture
def db(sqlite_url):
    upgrade(sqlite_url)
    database = SyncDatabase(sqlite_url)
    yield database
    database.close()


def test_set_password_without_a_server_changes_the_database(db):
    operations.create_game(db, setup("one"), wallclock=time.time)
    operate(db, "add-player", "one", "ann", "first-password", wallclock=time.time)
    text = operate(db, "set-password", "one", "ANN", "second-password", wallclock=time.time).text
    assert text == "password of player 'ann' (player 1) of game 'one' changed"
    with pytest.raises(operations.OperationError, match="no player named 'zed'"):
        operate(db, "set-password", "one", "zed", "second-password", wallclock=time.time)
    stored = db.load_games()[0].accounts[0].password_hash
    assert verify_password("second-password", stored) and not verify_password("first-password", stored)


def test_set_password_with_a_server_running_is_a_request(sqlite_url, db):
    game_id = db.create_game(setup("one"))
    store, desk, directory, clock = start_desk(sqlite_url, wallclock=WallClock())
    game = directory.find("one")
    successResultOf(game.create_account("ann", "first-password"))
    change = queue(
        db, game_id, "set_password", {"username": "ann", "password_hash": hash_password("new-one", n=16)}
    )
    unknown = queue(
        db, game_id, "set_password", {"username": "zed", "password_hash": hash_password("x", n=16)}
    )
    result(desk.poll())
    assert db.requests.get(change).status == "done" and "changed" in db.requests.get(change).result
    assert (
        db.requests.get(unknown).status == "failed"
        and "no player named 'zed'" in db.requests.get(unknown).result
    )
    assert logs_in(game, "ann", "new-one") == 1 and logs_in(game, "ann", "first-password") is None
    assert verify_password("new-one", db.load_games()[0].accounts[0].password_hash)
    result(defer.ensureDeferred(desk.stop()))
    result(store.close())
