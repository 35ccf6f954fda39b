"""Sessions, CSRF tokens and API tokens (the login brake: test_logins.py)."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from server.web.sessions import SessionStore, same


def test_sessions_expire_when_unused():
    clock = Clock()
    store = SessionStore(clock, b"k", lifetime=100)
    session = store.create()
    clock.advance(60)
    assert store.get(session.id) is session  # use renews it
    clock.advance(99)
    assert store.get(session.id) is session
    clock.advance(101)
    assert store.get(session.id) is None
    assert store.get("made-up") is None and store.get(None) is None


def test_a_csrf_token_belongs_to_one_browser_and_one_session():
    store = SessionStore(Clock(), b"k")
    session = store.create()
    token = store.csrf_token("cookie-a", session)
    assert store.csrf_ok("cookie-a", session, token)
    assert not store.csrf_ok("cookie-b", session, token)
    assert not store.csrf_ok("cookie-a", None, token)
    assert not store.csrf_ok("cookie-a", store.create(), token)
    assert not store.csrf_ok("", session, token) and not store.csrf_ok("cookie-a", session, None)


def test_tokens_are_signed_with_the_secret():
    clock = Clock()
    store = SessionStore(clock, b"secret-1")
    token = store.issue_token("Game ü", 3, "mark-1")
    assert store.read_token(token) == ("Game ü", 3, "mark-1")
    assert SessionStore(clock, b"secret-1").read_token(token) == ("Game ü", 3, "mark-1")  # survives a restart
    assert SessionStore(clock, b"secret-2").read_token(token) is None
    body, _, signature = token.partition(".")
    assert store.read_token(body + "." + signature[::-1]) is None
    assert store.read_token("garbage") is None and store.read_token("") is None


def test_a_sealed_session_is_known_wherever_the_secret_is():
    clock = Clock()
    here, there = SessionStore(clock, b"shared", lifetime=100), SessionStore(clock, b"shared", lifetime=100)
    session = here.create()
    session.logins["Game ü"] = (2, "ann", "mark")
    cookie = here.seal(session)
    found = there.get(cookie)  # another node, or this one after a restart
    assert found is not None and found.id == session.id and found.logins == {"Game ü": (2, "ann", "mark")}
    assert SessionStore(clock, b"other").get(cookie) is None
    forged = cookie.rsplit(".", 1)[0] + "." + "A" * 43
    assert SessionStore(clock, b"shared").get(forged) is None
    here.drop(session.id)
    assert here.get(cookie) is None  # dropped here: refused here even with a good seal
    clock.advance(101)
    assert SessionStore(clock, b"shared").get(cookie) is None  # expired


def test_a_token_made_before_tokens_carried_a_credential_mark_is_refused():
    import base64
    import json

    clock = Clock()
    store = SessionStore(clock, b"secret-1")
    body = base64.urlsafe_b64encode(json.dumps(["G", 1, int(clock.seconds())]).encode()).rstrip(b"=").decode()
    assert store.read_token(f"{body}.{store._sign(body)}") is None  # signed, but without a mark


@pytest.mark.parametrize("given", ["ü", "\udc80", "x" * 5000, "", "é" * 43])
def test_anything_a_client_sends_compares_as_a_mismatch_never_an_error(given):
    clock = Clock()
    store = SessionStore(clock, b"k")
    session = store.create()
    assert not same(given, store.csrf_token("cookie", session))
    assert not store.csrf_ok("cookie", session, given) and not store.csrf_ok(given, session, "x")
    assert store.read_token(given) is None and store.read_token("a." + given) is None
    assert store.get(given) is None and store.get(f"madeup.{given}.{given}") is None
