"""`login(create=True)`: the CreateAccount refusal is reported when the Login fails too."""

import pytest

from clients import RequestFailed
from server.model.writes import StoreAccount, StoreFinished
from tests.benchmarks.bench_bot import loopback_client, make_game
from tests.support.stores import on_writes_with


def test_a_refused_creation_is_the_error_not_bad_username_or_password():
    directory, _game = make_game(seed=1)
    client = loopback_client(directory)
    with pytest.raises(RequestFailed) as refused:
        client.login("ann", "", create=True)  # an empty password is refused
    assert refused.value.request.__class__.__name__ == "CreateAccount"
    assert "password" in refused.value.fail.message.lower()


def test_an_existing_account_with_a_wrong_password_is_a_bad_login():
    directory, _game = make_game(seed=1)
    loopback_client(directory).login("ann", "secret-pw", create=True)
    with pytest.raises(RequestFailed) as refused:
        loopback_client(directory).login("ann", "wrong-pw", create=True)
    assert refused.value.request.__class__.__name__ == "Login"
    assert "bad username or password" in refused.value.fail.message


def test_a_temporary_refusal_is_tried_again(monkeypatch):
    """A game whose database is away for a moment (Fail 3) lets the account in on a later try."""
    from twisted.internet import defer

    from server.model.store import StoreUnavailable

    directory, game = make_game(seed=1)
    calls: list[int] = []

    def away_once(write, *args):
        calls.append(1)
        if len(calls) == 1:
            return defer.fail(StoreUnavailable("the database is away"))
        return write(*args)

    on_writes_with(monkeypatch, game.store, StoreAccount, away_once)
    monkeypatch.setattr("clients.blocking.time.sleep", lambda seconds: None)
    loopback_client(directory).login("ann", "secret-pw", create=True)
    assert len(calls) == 2 and game.player_id("ann") is not None


def test_a_lasting_temporary_refusal_is_raised_after_the_retries(monkeypatch):
    from twisted.internet import defer

    from clients.blocking import LOGIN_RETRY_DELAYS
    from server.model.store import StoreUnavailable

    directory, game = make_game(seed=1)
    on_writes_with(monkeypatch, game.store, StoreAccount, lambda *a: defer.fail(StoreUnavailable("away")))
    waited: list[float] = []
    monkeypatch.setattr("clients.blocking.time.sleep", waited.append)
    with pytest.raises(RequestFailed) as refused:
        loopback_client(directory).login("ann", "secret-pw", create=True)
    assert refused.value.fail.code == 3 and waited == list(LOGIN_RETRY_DELAYS)


def test_a_request_refused_with_try_again_shortly_is_sent_again(monkeypatch):
    """A database outage during the game: the bot and the library try again, they do not stop."""
    from twisted.internet import defer

    import protocol as tp
    from clients.blocking import SHORTLY_RETRY_DELAYS
    from server.model.store import StoreUnavailable

    directory, game = make_game(seed=1)
    for name in ("ann", "bob"):
        game.create_account(name, "secret-pw")
    client = loopback_client(directory)
    client.login("ann", "secret-pw")
    calls: list[int] = []

    def away_twice(write, *args):
        calls.append(1)
        if len(calls) <= 2:
            return defer.fail(StoreUnavailable("connection to server at 10.0.0.5 failed"))
        return write(*args)

    store_write = game.store.write
    on_writes_with(monkeypatch, game.store, StoreFinished, away_twice)
    waited: list[float] = []
    monkeypatch.setattr("clients.blocking.time.sleep", waited.append)
    assert isinstance(client.request(tp.FinishedTurn()), tp.Okay)
    assert len(calls) == 3 and waited == list(SHORTLY_RETRY_DELAYS[:2])
    # a lasting outage is raised after the retries, with the server's words
    monkeypatch.setattr(game.store, "write", store_write)
    on_writes_with(monkeypatch, game.store, StoreFinished, lambda *a: defer.fail(StoreUnavailable("away")))
    waited.clear()
    bob = loopback_client(directory)
    bob.login("bob", "secret-pw")
    with pytest.raises(RequestFailed) as refused:
        bob.request(tp.FinishedTurn())
    assert "try again shortly" in refused.value.fail.message.lower()
    assert waited == list(SHORTLY_RETRY_DELAYS)
