"""Sessions, CSRF tokens, API tokens and the login brake."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock
from twisted.logger import formatEvent, globalLogPublisher

from server.guards.failed_login_log import FailedLoginLog
from server.web.sessions import LoginBrake, SessionStore


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


def test_the_brake_counts_failures_per_address_in_a_window():
    clock = Clock()
    brake = LoginBrake(clock, limit=3, window=60)
    for _ in range(3):
        assert not brake.blocked("1.2.3.4", "alice")
        brake.failed("1.2.3.4", "alice")
    assert brake.blocked("1.2.3.4", "alice") and not brake.blocked("5.6.7.8", "alice")
    clock.advance(61)
    assert not brake.blocked("1.2.3.4", "alice")


@pytest.fixture
def log_events():
    events: list[dict] = []
    globalLogPublisher.addObserver(events.append)
    yield events
    globalLogPublisher.removeObserver(events.append)


def _lines(events, text):
    return [formatEvent(e) for e in events if text in str(e.get("log_format", ""))]


def test_the_brake_logs_failures_and_refusals_rate_limited_like_tp(log_events):
    clock = Clock()
    shared = FailedLoginLog(clock, window=60, lines=3)
    brake = LoginBrake(clock, limit=2, window=600, failure_log=shared)
    brake.failed("10.0.0.1", "alice")
    brake.failed("10.0.0.1", "bob\n")
    assert brake.blocked("10.0.0.1", "carol")
    assert _lines(log_events, "failed login") == [
        "failed login from 10.0.0.1 for 'alice' (web)",
        "failed login from 10.0.0.1 for 'bob\\n' (web)",
        "failed login from 10.0.0.1 for 'carol' (web; refused untried: too many failures from this address)",
    ]
    for _ in range(4):  # past the lines of the window: counted, summed up at its end
        brake.blocked("10.0.0.1", "dave")
    assert len(_lines(log_events, "failed login from")) == 3
    clock.advance(60)
    assert _lines(log_events, "more failed logins") == [
        "4 more failed logins from 10.0.0.1 in the last 60 s, not logged one by one (names: 'dave')"
    ]


def test_a_sealed_session_is_known_wherever_the_secret_is():
    clock = Clock()
    here, there = SessionStore(clock, b"shared", lifetime=100), SessionStore(clock, b"shared", lifetime=100)
    session = here.create()
    session.logins["Game ü"] = (2, "ann")
    cookie = here.seal(session)
    found = there.get(cookie)  # another node, or this one after a restart
    assert found is not None and found.id == session.id and found.logins == {"Game ü": (2, "ann")}
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
