"""The JSON API of a player's notification channels: who may, what is refused, and how."""

from __future__ import annotations

import json

import pytest
from twisted.internet import defer

from server.config.notifications import NotificationSettings
from server.database import DatabaseStore, SynchronousDatabaseThread, upgrade
from server.model.store import GameSetup
from server.notifications.service import Notifications
from server.web import make_site
from tests.support.deferreds import successResultOf

from .helpers import WEB_TEST_LIMITS, Client, FakeDirectory, world
from .test_api import basic


class Sender:
    def __init__(self):
        self.sent: list[tuple[str, dict]] = []

    def send(self, target, *rest):
        self.sent.append((target, rest[-1]))
        return defer.succeed(None)


@pytest.fixture
def site(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    upgrade(url)
    store = DatabaseStore(url, thread=SynchronousDatabaseThread())
    assert successResultOf(defer.maybeDeferred(store.create_game, GameSetup("Nebula"))) == 1
    clock, game, _ = world()
    settings = NotificationSettings(smtp_host="relay.invalid", max_channels=2).validate()
    sender = Sender()
    notifications = Notifications(
        store, clock, settings, clock=clock, name="t", webhooks=sender, mail=sender, batch_delay=0
    )
    site = make_site(
        FakeDirectory(game),
        None,
        clock,
        secret=b"test-secret",
        notifications=notifications,
        limits=WEB_TEST_LIMITS,
    )
    yield Client(site), clock, notifications, sender
    store.engine.dispose()


def put(client: Client, document, user="alice"):
    return client.request(
        "PUT",
        "/api/games/Nebula/notifications",
        json.dumps(document).encode(),
        {"Content-Type": "application/json", **basic(user, user + "-pw")},
    )


def test_a_player_lists_adds_changes_and_removes_their_channels(site):
    client, _, _, _ = site
    answer = client.get("/api/games/Nebula/notifications", headers=basic("alice", "alice-pw"))
    assert answer.status == 200 and answer.json()["channels"] == []
    assert answer.json()["formats"] == ["json", "discord", "slack"] and answer.json()["email"] is True
    assert put(client, {"webhook": "https://chat.example/h"}).status == 200
    listing = put(client, {"webhook": "https://chat.example/h", "format": "slack"}).json()
    assert [(c["kind"], c["format"]) for c in listing["channels"]] == [("webhook", "slack")]
    listing = put(client, {"email": "alice@example.org"}).json()
    assert [(c["id"], c["kind"]) for c in listing["channels"]] == [(1, "webhook"), (2, "email")]
    # bob sees only his own
    bobs = client.get("/api/games/Nebula/notifications", headers=basic("bob", "bob-pw")).json()
    assert bobs["channels"] == []
    first = listing["channels"][0]["id"]
    assert (
        client.request(
            "DELETE", f"/api/games/Nebula/notifications/{first}", headers=basic("bob", "bob-pw")
        ).status
        == 404
    )
    gone = client.request(
        "DELETE", f"/api/games/Nebula/notifications/{first}", headers=basic("alice", "alice-pw")
    )
    assert [(c["id"], c["kind"]) for c in gone.json()["channels"]] == [(1, "email")]  # numbered anew
    replaced = put(
        client, {"channels": [{"kind": "webhook", "target": "https://hooks.example/x", "format": "discord"}]}
    )
    assert [(c["target"], c["format"]) for c in replaced.json()["channels"]] == [
        ("https://hooks.example/x", "discord")
    ]
    cleared = client.request("DELETE", "/api/games/Nebula/notifications", headers=basic("alice", "alice-pw"))
    assert cleared.json()["channels"] == []


@pytest.mark.parametrize(
    ("document", "status", "words"),
    [
        ({"webhook": "javascript:alert(1)"}, 400, "http:// or https://"),
        ({"webhook": "https://x.example/", "format": "xml"}, 400, "json, discord, slack"),
        ({"email": "not an address"}, 400, "not an e-mail address"),
        ({"carrier_pigeon": "yes"}, 400, '{"webhook": URL}'),
        ({"channels": "all"}, 400, "a list"),
        ({"webhook": "http://127.0.0.1:6925/"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://[::1]/"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://169.254.169.254/latest/meta-data"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://10.0.0.8/"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://[::ffff:127.0.0.1]/"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://224.0.0.1/"}, 400, "loopback, private, link-local"),
        ({"webhook": "http://-bücher.example/"}, 400, "cannot be used"),
        ({"email": "a@b@c"}, 400, "not an e-mail address"),
        ({"channels": [{"kind": "webhook", "target": "http://192.168.1.1/"}]}, 400, "loopback"),
    ],
)
def test_what_cannot_be_used_is_refused_in_one_line(site, document, status, words):
    client, _, _, _ = site
    answer = put(client, document)
    assert answer.status == status
    error = answer.json()["error"]
    assert words in error["message"] and "\n" not in error["message"] and error["name"] == "FRAME"


def test_credentials_are_needed_and_the_limit_holds(site):
    client, _, _, _ = site
    anonymous = client.request(
        "PUT",
        "/api/games/Nebula/notifications",
        b'{"webhook": "https://x.example/"}',
        {"Content-Type": "application/json"},
    )
    assert anonymous.status == 401
    assert put(client, {"webhook": "https://x.example/a"}, user="bob").status == 200
    assert put(client, {"webhook": "https://x.example/b"}, user="bob").status == 200
    third = put(client, {"webhook": "https://x.example/c"}, user="bob")
    assert third.status == 409 and "most this server allows" in third.json()["error"]["message"]


def confirm_link(sender) -> str:
    """The path of the link in the last confirmation mail sent."""
    (payload,) = [p for _, p in sender.sent if p.get("event") == "confirm_email"][-1:]
    return "/" + payload["text"].split("http://", 1)[1].split("\n", 1)[0].split("/", 1)[1]


def test_an_internationalised_webhook_host_is_kept_in_its_ascii_form(site):
    client, _, _, _ = site
    listing = put(client, {"webhook": "https://bücher.example/hook"}).json()
    assert listing["channels"][0]["target"] == "https://xn--bcher-kva.example/hook"


def test_an_email_channel_is_used_once_its_owner_confirmed_it(site):
    client, clock, notifications, sender = site
    put(client, {"webhook": "https://x.example/a"})
    listing = put(client, {"email": "alice@example.org"}).json()
    assert [c["confirmed"] for c in listing["channels"]] == [True, False]
    assert "not confirmed yet" in listing["channels"][1]["description"]
    clock.advance(0)
    notifications.worker.wake()
    clock.advance(0)
    ((to, mail),) = [(t, p) for t, p in sender.sent if p.get("event") == "confirm_email"]
    assert to == "alice@example.org" and "/games/Nebula/notifications/confirm/" in mail["text"]
    test = {"Content-Type": "application/json", **basic("alice", "alice-pw")}
    answer = client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test)
    assert answer.status == 202 and answer.json() == {"queued": 1}  # the webhook only
    # the owner follows the link: a page with a button (a mail scanner confirms nothing)
    owner = Client(client.site)
    link = confirm_link(sender)
    page = owner.get(link)
    assert page.status == 200 and "Confirm alice@example.org" in page.text
    listing = client.get("/api/games/Nebula/notifications", headers=basic("alice", "alice-pw")).json()
    assert listing["channels"][1]["confirmed"] is False  # opening the page confirmed nothing
    forged = owner.post_form(link[:-3] + "AAA", {"csrf": owner.csrf(link)})
    assert forged.status == 404 and "not valid" in forged.text
    done = owner.post_form(link, {"csrf": owner.csrf(link)})
    assert done.status == 200 and "Address confirmed" in done.text
    listing = client.get("/api/games/Nebula/notifications", headers=basic("alice", "alice-pw")).json()
    assert all(c["confirmed"] for c in listing["channels"])
    sender.sent.clear()
    answer = client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test)
    assert answer.status == 202 and answer.json() == {"queued": 2}
    clock.advance(0)
    notifications.worker.wake()
    clock.advance(0)
    assert sorted(t for t, _ in sender.sent) == ["alice@example.org", "https://x.example/a"]
    assert all(p["event"] == "test" and p["player"] == "alice" for _, p in sender.sent)


def test_test_notifications_are_rate_limited_per_player(site):
    client, clock, _, _ = site
    put(client, {"webhook": "https://x.example/a"})
    test = {"Content-Type": "application/json", **basic("alice", "alice-pw")}
    for _ in range(6):  # notification_tests_per_hour
        assert client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test).status == 202
    refused = client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test)
    assert refused.status == 429 and int(refused.header("retry-after")) > 0
    assert "Too many test notifications" in refused.json()["error"]["message"]
    clock.advance(600)  # one more every 10 minutes
    assert client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test).status == 202


def test_a_server_without_notifications_says_so():
    clock, game, _ = world()
    site = make_site(FakeDirectory(game), None, clock, secret=b"test-secret")
    answer = Client(site).get("/api/games/Nebula/notifications", headers=basic("alice", "alice-pw"))
    assert answer.status == 409 and answer.json()["error"]["message"] == "This server sends no notifications."


def test_the_players_page_lists_adds_and_removes_channels(site):
    from .helpers import log_in

    client, _, notifications, _ = site
    browser = log_in(client.site, "Nebula", "alice", "alice-pw")
    page = browser.get("/games/Nebula/play").text
    assert 'id="notifications"' in page and "No channels yet." in page
    token = browser.csrf("/games/Nebula/play")
    fields = {"csrf": token, "kind": "webhook", "target": "https://chat.example/<b>", "format": "discord"}
    answer = browser.post_form("/games/Nebula/play/notify", fields)
    assert answer.status == 303 and answer.header("location").endswith("/play#notifications")
    page = browser.get("/games/Nebula/play").text
    assert "webhook (discord) https://chat.example/&lt;b&gt;" in page  # escaped
    assert "https://chat.example/<b>" not in page
    refused = browser.post_form("/games/Nebula/play/notify", {**fields, "target": "ftp://x/"})
    assert refused.status == 303
    assert "must start with http:// or https://" in browser.get("/games/Nebula/play").text
    (channel,) = successResultOf(defer.ensureDeferred(notifications.channels(1, 1)))
    browser.post_form("/games/Nebula/play/notify-remove", {"csrf": token, "channel": str(channel.number)})
    assert successResultOf(defer.ensureDeferred(notifications.channels(1, 1))) == []
    forged = Client(client.site).post_form("/games/Nebula/play/notify", fields)
    assert forged.status in (303, 400, 403)
    stale = browser.post_form("/games/Nebula/play/notify", {**fields, "csrf": "stale"})
    assert stale.status == 303  # back to the page, with the reason, not a 500
    assert "This form has expired" in browser.get("/games/Nebula/play").text
    stale = browser.post_form("/games/Nebula/play/notify-remove", {"csrf": "stale", "channel": "1"})
    assert stale.status == 303
    assert "This form has expired" in browser.get("/games/Nebula/play").text
    assert successResultOf(defer.ensureDeferred(notifications.channels(1, 1))) == []


def test_the_page_numbers_the_channels_and_tests_them_with_a_button(site):
    from .helpers import log_in

    client, _, notifications, sent = site
    browser = log_in(client.site, "Nebula", "alice", "alice-pw")
    assert "Send a test message" not in browser.get("/games/Nebula/play").text  # nothing to test
    token = browser.csrf("/games/Nebula/play")
    for n in (1, 2):
        fields = {"csrf": token, "kind": "webhook", "target": f"https://chat.example/{n}", "format": "json"}
        assert browser.post_form("/games/Nebula/play/notify", fields).status == 303
    page = browser.get("/games/Nebula/play").text
    assert '<li value="1">webhook (json) https://chat.example/1' in page
    assert '<li value="2">webhook (json) https://chat.example/2' in page
    answer = browser.post_form("/games/Nebula/play/notify-test", {"csrf": token})
    assert answer.status == 303 and answer.header("location").endswith("/play#notifications")
    assert "A test message is on its way to 2 channels." in browser.get("/games/Nebula/play").text
    # the page's button and the API share one limit
    for _ in range(10):
        browser.post_form("/games/Nebula/play/notify-test", {"csrf": token})
    assert "Too many test notifications" in browser.get("/games/Nebula/play").text
    test = {"Content-Type": "application/json", **basic("alice", "alice-pw")}
    assert client.request("POST", "/api/games/Nebula/notifications/test", b"{}", test).status == 429


def test_no_e_mail_is_offered_by_a_server_without_a_relay(tmp_path):
    from .helpers import log_in

    url = f"sqlite:///{tmp_path / 'tae.db'}"
    upgrade(url)
    store = DatabaseStore(url, thread=SynchronousDatabaseThread())
    successResultOf(defer.maybeDeferred(store.create_game, GameSetup("Nebula")))
    clock, game, _ = world()
    settings = NotificationSettings(smtp_host="").validate()
    notifications = Notifications(store, clock, settings, clock=clock, name="t", batch_delay=0)
    site = make_site(FakeDirectory(game), None, clock, secret=b"test-secret", notifications=notifications)
    browser = log_in(site, "Nebula", "alice", "alice-pw")
    box = browser.get("/games/Nebula/play").text.split('id="notifications"')[1]
    assert "Send to the webhook" in box and "e-mail" not in box and "name@example.org" not in box
    store.engine.dispose()
