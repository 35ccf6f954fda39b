"""`login(create=True)`: the CreateAccount refusal is reported when the Login fails too."""

import pytest

from clients import RequestFailed
from tests.benchmarks.bench_bot import loopback_client, make_game


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
