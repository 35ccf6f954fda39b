"""Notifications on a task.Clock: events from snapshots, the outbox, retries, claims, privacy.

The games run on a real database (SQLite and PostgreSQL, fixture `database_url`) through a
`DatabaseStore` whose work runs in the test's thread; the senders are stand-ins that record
what they were given (tests/integration/test_notifications_delivery.py sends for real).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import sqlalchemy as sa
from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import Conflict, Kind, Phase
from server.config.notifications import NotificationSettings, NotificationSettingsError
from server.database import DatabaseStore, SynchronousDatabaseThread, upgrade
from server.database import notification_outbox as outbox_q
from server.game.game import Game
from server.model.changes import TurnEnded
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.notifications import channels, events, rules
from server.notifications.channels import ChannelError, check_address, check_webhook, webhook_body
from server.notifications.confirmation import Confirmation, confirmation_entry
from server.notifications.delivery import DeliveryFailed
from server.notifications.service import Notifications
from server.views.deadline import deadline_iso, deadline_words
from tests.support.deferreds import successResultOf

START = 1_800_000_000.0


class RecordingSender:
    """Stands in for the webhook and the mail sender: records each send, or fails on demand
    (`failures` failures first; `hang` never answers)."""

    def __init__(self, failures: int = 0, permanent: bool = False, hang: bool = False):
        self.sent: list[tuple[str, dict]] = []
        self.tries = 0
        self.failures = failures
        self.permanent = permanent
        self.hang = hang
        self.hanging: list[defer.Deferred] = []

    def send(self, target: str, *rest) -> defer.Deferred:
        payload = rest[-1]
        self.tries += 1
        if self.hang:
            d: defer.Deferred = defer.Deferred()
            self.hanging.append(d)
            return d
        if self.failures > 0:
            self.failures -= 1
            return defer.fail(DeliveryFailed("HTTP 503 Service Unavailable", self.permanent))
        self.sent.append((target, payload))
        return defer.succeed(None)

    def delivered_keys(self, target: str | None = None) -> list[str]:
        return sorted(p["key"] for t, p in self.sent if target is None or t == target)


def settings(**changes) -> NotificationSettings:
    values = {
        "smtp_host": "127.0.0.1",
        "reminder_lead": 120,
        "retry_base": 10,
        "retry_cap": 40,
        "webhook_allow": ["127.0.0.0/8"],  # the tests' receivers
        "gather": 0,  # a turn's start is sent at once (the tests of `gather` set it)
        **changes,
    }
    return NotificationSettings(**values).validate()


def confirmed_email(notifications, game_id: int, player: int, address: str):
    """An e-mail channel, added and confirmed by its owner (the confirmation mail is sent)."""
    sent = []

    def confirm(channel, target):
        sent.append(channel)
        what = Confirmation("g", player, channel, target)
        return "http://x/confirm", confirmation_entry(game_id, what, "http://x/confirm", 0)

    channel = successResultOf(
        defer.ensureDeferred(notifications.add_email(game_id, player, address, confirm))
    )
    assert channel.format == "unconfirmed" and sent == [channel.row]
    assert successResultOf(
        defer.ensureDeferred(notifications.confirm_email(game_id, player, channel.row, address))
    )
    return channel


def service(store, clock, webhooks=None, mail=None, **changes) -> Notifications:
    return Notifications(
        store,
        clock,
        settings(**changes),
        clock=clock,
        name="test-node",
        webhooks=webhooks or RecordingSender(),
        mail=mail or RecordingSender(),
        batch_delay=0,
    )


def new_game(store, clock, name="g", **setup) -> Game:
    setup.setdefault("timer", TimerSettings(turn_length=600))
    game_setup = GameSetup(name, **setup)
    game_id = successResultOf(defer.maybeDeferred(store.create_game, game_setup))
    return Game(game_id, game_setup, game_setup.initial_state(), store, clock)


def join(game: Game, *names: str) -> None:
    for name in names:
        successResultOf(game.create_account(name, name + "-password"))


def deliver(clock: Clock, notifications: Notifications, seconds: float = 0) -> None:
    """Let the outbox be written and the worker claim and send (and write back) what is due."""
    clock.advance(seconds)
    for _ in range(4):
        clock.advance(0)
        notifications.worker.wake()
        clock.advance(0)


def restored(store, clock) -> Game:
    (stored,) = successResultOf(defer.maybeDeferred(store.load_games, None, False))
    game = Game.restore(stored, store, clock)
    game.resume(stored.deadline)
    return game


# -- events ----------------------------------------------------------------------------------


def test_each_event_reaches_each_channel_exactly_once_also_across_a_restart(store):
    clock = Clock()
    clock.advance(START)
    hooks, mail = RecordingSender(), RecordingSender()
    notifications = service(store, clock, hooks, mail)
    game = new_game(store, clock, map_text="A.A\n")  # the first turn ends the game
    notifications.follow(game)
    gid = game.id
    successResultOf(notifications.add_webhook(gid, 1, "https://chat.example/hook", "discord"))
    confirmed_email(notifications, gid, 1, "ann@example.org")
    successResultOf(notifications.add_webhook(gid, 2, "http://127.0.0.1:9/bob"))
    join(game, "ann", "bob")  # two players: the first turn starts
    deliver(clock, notifications)
    assert hooks.delivered_keys() == [f"{gid}:0:turn_started:1", f"{gid}:0:turn_started:2"]
    confirmations = [k for k in mail.delivered_keys() if k.startswith("confirm_email:")]
    assert len(confirmations) == 1  # the mail that asked ann to confirm her address
    assert [k for k in mail.delivered_keys() if k not in confirmations] == [f"{gid}:0:turn_started:1"]
    started = hooks.sent[0][1]
    assert started["deadline"] == deadline_iso(START + 600) and started["seconds_left"] == 600
    assert started["deadline_utc"] == deadline_words(START + 600, START)  # as every page writes it
    assert started["player"] == "ann" and started["turn"] == 0

    deliver(clock, notifications, 480)  # two minutes before the deadline: the reminders
    assert f"{gid}:0:reminder:1" in mail.delivered_keys() and f"{gid}:0:reminder:2" in hooks.delivered_keys()
    successResultOf(game.finish_turn(1))
    deliver(clock, notifications)
    assert hooks.delivered_keys().count(f"{gid}:0:last_one:2") == 1

    # a restart in the middle of the turn derives the turn's events again: nothing twice
    notifications.follower.stop()
    game.close()
    clock2 = Clock()
    clock2.advance(START + 500)
    again = service(store, clock2, hooks, mail)
    game = restored(store, clock2)
    again.follow(game)
    deliver(clock2, again)
    assert successResultOf(defer.maybeDeferred(store.notifications.counts)).pending == 0

    successResultOf(game.finish_turn(2))  # the turn ends, and with it the game
    deliver(clock2, again)
    assert game.snapshot.over
    # turn 0 was the first and last: the game is over with turn 1 counted (the Universe's counter)
    anns = sorted([f"{gid}:0:turn_started:1", f"{gid}:0:reminder:1", f"{gid}:1:game_over:1"])
    assert [k for k in mail.delivered_keys() if not k.startswith("confirm_email:")] == anns
    assert hooks.delivered_keys("https://chat.example/hook") == anns
    assert hooks.delivered_keys("http://127.0.0.1:9/bob") == sorted(
        [f"{gid}:0:turn_started:2", f"{gid}:0:reminder:2", f"{gid}:0:last_one:2", f"{gid}:1:game_over:2"]
    )
    over = next(p for t, p in hooks.sent if p["event"] == "game_over" and p["player"] == "bob")
    assert [row["name"] for row in over["ranking"]] and over["winners"]


def test_a_crash_between_the_commit_and_the_delivery_loses_no_notification(store):
    """The outbox rows are written in the transaction of the change that causes them: a
    process that dies right after the commit has them stored, and the next one delivers them."""
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender(hang=True)  # nothing is delivered before the crash
    notifications = service(store, clock, hooks)
    game = new_game(store, clock, timer=TimerSettings(turn_length=7200))
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 2, "https://chat.example/bob"))
    join(game, "ann", "bob")
    assert notifications.outbox.idle  # nothing waits in memory: it is in the database already
    # the process dies: nothing of it is stopped or drained
    assert successResultOf(defer.maybeDeferred(store.notifications.counts)).pending == 1

    delivered = RecordingSender()
    clock2 = Clock()
    clock2.advance(START + 1000)  # after the claim of the dead process expired
    again = service(store, clock2, delivered)
    again.follow(restored(store, clock2))
    deliver(clock2, again)
    assert delivered.delivered_keys() == [f"{game.id}:0:turn_started:2"]
    assert successResultOf(defer.maybeDeferred(store.notifications.counts)).pending == 0


def test_a_turn_shorter_than_the_reminder_lead_has_no_reminder(store):
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender()
    notifications = service(store, clock, hooks, reminder_lead=900)
    game = new_game(store, clock)
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://chat.example/ann"))
    join(game, "ann", "bob")
    deliver(clock, notifications, 599)
    assert [p["event"] for _, p in hooks.sent] == ["turn_started"]


def test_a_new_turn_is_announced_with_its_deadline_to_every_player_who_acts(store):
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender()
    notifications = service(store, clock, hooks, reminder_lead=0)
    game = new_game(store, clock)
    notifications.follow(game)
    for player in (1, 2):
        successResultOf(notifications.add_webhook(game.id, player, f"https://chat.example/{player}"))
    join(game, "ann", "bob")
    successResultOf(game.finish_turn(1))
    clock.advance(10)
    successResultOf(game.finish_turn(2))
    deliver(clock, notifications)
    second = [p for _, p in hooks.sent if p["turn"] == 1 and p["event"] == "turn_started"]
    assert sorted(p["player"] for p in second) == ["ann", "bob"]
    assert all(p["deadline"] == deadline_iso(START + 10 + 600) for p in second)
    assert "turn 1" in second[0]["text"].lower()


def test_a_turn_that_waits_only_for_me_at_once_is_one_message_not_two(store):
    """Everyone else finishes within the `gather` seconds a turn's start waits (computer
    players, bots): the last player gets "waits only for you" alone; a player whose turn
    started long before gets both."""
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender()
    notifications = service(store, clock, hooks, reminder_lead=0, gather=10)
    game = new_game(store, clock)
    notifications.follow(game)
    for player in (1, 2, 3):
        successResultOf(notifications.add_webhook(game.id, player, f"https://chat.example/{player}"))
    join(game, "ann", "bob", "cid")
    deliver(clock, notifications, 1)
    assert hooks.sent == []  # the turn's start waits its 10 s
    successResultOf(game.finish_turn(1))
    successResultOf(game.finish_turn(2))  # at once: cid is the last one
    deliver(clock, notifications, 10)
    assert sorted((t, p["event"]) for t, p in hooks.sent) == [
        ("https://chat.example/1", "turn_started"),
        ("https://chat.example/2", "turn_started"),
        ("https://chat.example/3", "last_one"),
    ]
    # the next turn: every start is sent (10 s), and the last one minutes later on its own
    successResultOf(game.finish_turn(3))
    deliver(clock, notifications, 10)
    successResultOf(game.finish_turn(1))
    successResultOf(game.finish_turn(3))
    deliver(clock, notifications, 300)
    second = [(t, p["event"]) for t, p in hooks.sent if p["turn"] == 1]
    assert sorted(second) == [
        ("https://chat.example/1", "turn_started"),
        ("https://chat.example/2", "last_one"),
        ("https://chat.example/2", "turn_started"),
        ("https://chat.example/3", "turn_started"),
    ]
    assert successResultOf(defer.maybeDeferred(store.notifications.counts)).pending == 0


def test_every_message_links_to_the_game(store):
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender()
    notifications = service(store, clock, hooks, reminder_lead=0, public_url="https://tae.example.org/")
    game = new_game(store, clock, name="Nebula 7")
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://chat.example/1", "discord"))
    join(game, "ann", "bob")
    deliver(clock, notifications)
    ((_, payload),) = hooks.sent
    assert payload["url"] == "https://tae.example.org/games/Nebula%207"
    assert channels.message_text(payload).endswith("\nhttps://tae.example.org/games/Nebula%207")
    mail = channels.email_message(payload, "tae@example.org", "ann@example.org", START).decode()
    assert "Your game: https://tae.example.org/games/Nebula%207" in mail
    # no web listener and no public_url: no link, and nothing else changes
    assert channels.with_game_link(payload | {"url": None}, None)["url"] is None
    assert "url" not in channels.with_game_link({"game": "g"}, "")


def test_the_game_keeps_its_pace_whatever_the_channels_do(store):
    """A webhook that never answers holds up no turn: the end of a turn takes no longer."""
    clock = Clock()
    clock.advance(START)
    hanging = RecordingSender(hang=True)
    notifications = service(store, clock, hanging)
    game = new_game(store, clock)
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://slow.example/ann"))
    join(game, "ann", "bob")
    deliver(clock, notifications)
    assert hanging.tries == 1
    for turn in range(2, 6):
        successResultOf(game.finish_turn(1))
        successResultOf(game.finish_turn(2))  # answered at once: the turn is resolved and stored
        assert game.snapshot.turn == turn - 1 and not game.busy
        deliver(clock, notifications)
    assert game.snapshot.turn == 4


# -- retries ---------------------------------------------------------------------------------


def outbox_rows(store) -> list:
    with store.engine.connect() as conn:
        table = outbox_q.notification_outbox
        return list(conn.execute(sa.select(table).order_by(table.c.id)))


def test_a_failing_channel_is_retried_with_growing_waits_then_given_up(store):
    clock = Clock()
    clock.advance(START)
    failing = RecordingSender(failures=100)
    notifications = service(store, clock, failing, retry_base=10, retry_cap=40, max_attempts=5)
    game = new_game(store, clock, timer=TimerSettings(turn_length=0))
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://down.example/ann"))
    join(game, "ann", "bob")
    deliver(clock, notifications)
    waits = []
    for _ in range(8):
        (row,) = outbox_rows(store)
        if row.failed is not None:
            break
        waits.append(row.next_attempt - clock.seconds())
        deliver(clock, notifications, row.next_attempt - clock.seconds())
    (row,) = outbox_rows(store)
    assert waits == [10, 20, 40, 40]  # doubled each time, capped
    assert row.attempts == 5 and row.failed is not None and row.delivered is None
    assert "503" in row.last_error
    tries = failing.tries
    deliver(clock, notifications, 3600)
    assert failing.tries == tries  # given up: not tried again


def test_a_channel_that_comes_back_gets_its_notification_once(store):
    clock = Clock()
    clock.advance(START)
    flaky = RecordingSender(failures=2)
    notifications = service(store, clock, flaky)
    game = new_game(store, clock)
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://flaky.example/ann"))
    join(game, "ann", "bob")
    for _ in range(6):
        deliver(clock, notifications, 30)
    assert flaky.delivered_keys() == [f"{game.id}:0:turn_started:1"]
    (row,) = outbox_rows(store)
    assert row.attempts == 3 and row.delivered is not None and row.last_error


def test_a_permanent_refusal_is_not_retried(store):
    clock = Clock()
    clock.advance(START)
    gone = RecordingSender(failures=1, permanent=True)
    notifications = service(store, clock, gone)
    game = new_game(store, clock)
    notifications.follow(game)
    successResultOf(notifications.add_webhook(game.id, 1, "https://gone.example/ann"))
    join(game, "ann", "bob")
    deliver(clock, notifications, 100)
    (row,) = outbox_rows(store)
    assert row.attempts == 1 and row.failed is not None and gone.tries == 1


# -- claims ----------------------------------------------------------------------------------


def entry(game_id: int, player: int, kind: str = "turn_started") -> outbox_q.OutboxEntry:
    key = events.idempotency_key(game_id, 1, kind, player)
    return outbox_q.OutboxEntry(game_id, player, key, kind, {"key": key})


def test_a_row_is_claimed_by_one_worker_until_its_claim_expires(store):
    game = new_game(store, Clock())
    successResultOf(store.notifications.add_channel(game.id, 1, "webhook", "https://x.example/", "json", 4))
    assert successResultOf(store.notifications.enqueue([entry(game.id, 1)] * 2, START)) == 1
    assert successResultOf(store.notifications.enqueue([entry(game.id, 1)], START)) == 0  # same key
    (claimed,) = successResultOf(store.notifications.claim("a", START, 60, 10))
    assert successResultOf(store.notifications.claim("b", START + 1, 60, 10)) == []
    (again,) = successResultOf(store.notifications.claim("b", START + 61, 60, 10))
    assert again.id == claimed.id
    # the first worker's late outcome no longer counts: the row is b's now
    successResultOf(
        store.notifications.record_outcomes("a", [outbox_q.DeliveryOutcome(claimed.id)], START + 62)
    )
    assert outbox_rows(store)[0].delivered is None
    successResultOf(
        store.notifications.record_outcomes("b", [outbox_q.DeliveryOutcome(again.id)], START + 62)
    )
    assert outbox_rows(store)[0].delivered == START + 62


@pytest.mark.postgres
def test_two_nodes_claiming_at_once_never_get_the_same_row(pg_url):
    """FOR UPDATE SKIP LOCKED: a claim in progress hides its rows from the other node's claim."""
    upgrade(pg_url)
    store = DatabaseStore(pg_url, thread=SynchronousDatabaseThread())
    try:
        game = new_game(store, Clock())
        hook = ("webhook", "https://x.example/", "json", 4)
        successResultOf(store.notifications.add_channel(game.id, 1, *hook))
        entries = [entry(game.id, 1, kind) for kind in ("turn_started", "reminder", "last_one", "conflict")]
        successResultOf(store.notifications.enqueue(entries, START))
        with store.engine.connect() as first, store.engine.connect() as second:
            with first.begin():
                mine = outbox_q.thd_claim_due(first, "a", START, 60, 2)
                with second.begin():
                    theirs = outbox_q.thd_claim_due(second, "b", START, 60, 10)
        assert len(mine) == 2 and len(theirs) == 2
        assert not {r.id for r in mine} & {r.id for r in theirs}
    finally:
        store.engine.dispose()


# -- what a payload may say ------------------------------------------------------------------


def test_a_conflict_is_told_to_both_sides_and_nobody_else(store):
    clock = Clock()
    clock.advance(START)
    game = new_game(store, clock)
    join(game, "ann", "bob", "cid")
    state = game.state
    ann, bob = state.leader(1, Kind.SCIENTIST).id, state.leader(2, Kind.SCIENTIST).id
    war = Conflict(internal=False, kind=Kind.SCIENTIST, attacker=ann, defender=bob, unification=0)
    snapshot = replace(game.snapshot, state=replace(state, conflicts=(war,)))
    told = events.conflict(snapshot, 2, clock.seconds())
    assert told is not None and told.payload["conflicts"] == [
        {
            "type": "war",
            "leader_kind": "scientist",
            "role": "defender",
            "opponent": "ann",
            "running": False,
            "unification_system": state.board.system_id(0),
        }
    ]
    assert events.conflict(snapshot, 3, clock.seconds()) is None

    # a turn that starts the war: both sides are told, each in one message with the turn's
    # start (the rule stores it with the turn's record); cid, who does not act, in none
    now = clock.seconds()
    fighting = replace(
        game.snapshot,
        serial=game.snapshot.serial + 5,
        state=replace(state, conflicts=(war,), phase=Phase.COMBAT, turn=state.turn + 1),
    )
    ended = TurnEnded(state.turn + 1, Phase.COMBAT.value, None)
    told_now = rules.entries_for(ended, game.snapshot, fighting, now)
    assert sorted((e.payload["player"], e.event) for e in told_now) == [
        ("ann", "turn_started"),
        ("bob", "turn_started"),
    ]
    assert all(e.payload["conflicts"][0]["running"] for e in told_now)
    assert "A war of scientist leaders against bob is fought this turn." in told_now[0].payload["text"]
    # the next turn, the same war: no news
    assert not [e for e in rules.entries_for(ended, fighting, fighting, now) if "conflicts" in e.payload]
    # a queued war of a player who does not act in the turn: a message of its own
    cid = state.leader(3, Kind.SCIENTIST).id
    other = Conflict(internal=False, kind=Kind.SCIENTIST, attacker=cid, defender=ann, unification=0)
    queued = replace(fighting, state=replace(fighting.state, conflicts=(war, other)))
    alone = [e for e in rules.entries_for(ended, fighting, queued, now) if e.payload["player"] == "cid"]
    assert [e.event for e in alone] == ["conflict"]


def test_a_payload_shows_nothing_of_the_opponents_hands_or_scores(store):
    clock = Clock()
    clock.advance(START)
    game = new_game(store, clock)
    join(game, "ann", "bob")
    scored = replace(
        game.snapshot,
        state=replace(
            game.state,
            players=tuple(replace(p, scores=(17, 23, 29, 31, 37)) for p in game.state.players),
        ),
    )
    for build in (events.turn_started, events.reminder, events.last_one):
        payload = build(scored, 1, clock.seconds()).payload
        text = str(payload)
        assert "scores" not in text and "17" not in text.replace(str(int(START)), "")
        assert not {"fleets", "colonists", "hand", "state"} & set(payload)
        assert payload["player"] == "ann" and "bob" not in text


# -- channels and settings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.org/x", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("https://user:pw@example.org/", "user name"),
        ("https:///nohost", "no host"),
        ("https://example.org/a b", "without spaces"),
        ("http://example.org:99999/", "cannot be read"),
        ("", "without spaces"),
    ],
)
def test_a_webhook_url_must_be_http_or_https_to_a_host(url, why):
    with pytest.raises(ChannelError, match=why):
        check_webhook(url)


def test_webhook_formats_and_addresses():
    assert check_webhook(" https://discord.com/api/webhooks/1/x ", "discord") == (
        "https://discord.com/api/webhooks/1/x",
        "discord",
    )
    with pytest.raises(ChannelError, match="json, discord, slack"):
        check_webhook("https://example.org/", "xml")
    assert check_address("ann@example.org") == "ann@example.org"
    for bad in ("ann", "ann@", "Ann <ann@example.org>", "a@b@c", "ann@example.org\nBcc: x@y"):
        with pytest.raises(ChannelError):
            check_address(bad)


def test_discord_and_slack_get_the_bodies_they_accept():
    import json

    payload = {"key": "1:2:turn_started:1", "title": "g: turn 2 has started", "text": "<@everyone> & co"}
    discord = json.loads(webhook_body("discord", payload))
    assert discord["content"].startswith("g: turn 2") and discord["allowed_mentions"] == {"parse": []}
    slack = json.loads(webhook_body("slack", payload))
    assert slack == {"text": "g: turn 2 has started\n&lt;@everyone&gt; &amp; co"}
    assert json.loads(webhook_body("json", payload)) == payload


def test_a_player_has_at_most_the_channels_the_server_allows(store):
    clock = Clock()
    notifications = service(store, clock, max_channels=2)
    game = new_game(store, clock)
    successResultOf(notifications.add_webhook(game.id, 1, "https://a.example/"))
    successResultOf(notifications.add_webhook(game.id, 1, "https://a.example/", "slack"))  # a change
    confirmed_email(notifications, game.id, 1, "ann@example.org")
    d = defer.ensureDeferred(notifications.add_webhook(game.id, 1, "https://b.example/"))
    assert "most this server allows" in str(d.result.value)
    d.addErrback(lambda _: None)
    channels = successResultOf(defer.ensureDeferred(notifications.channels(game.id, 1)))
    assert [(c.kind, c.format) for c in channels] == [("webhook", "slack"), ("email", "email")]
    assert successResultOf(defer.ensureDeferred(notifications.remove(game.id, 1, channels[0].number))) == 1
    assert successResultOf(defer.ensureDeferred(notifications.remove(game.id, 1))) == 1


def test_the_settings_are_checked_with_one_line_errors(tmp_path):
    from server.config.errors import ConfigError
    from server.config.file import load_config

    assert settings().retry_delay(1) == 10 and settings().retry_delay(9) == 40
    with pytest.raises(NotificationSettingsError, match="retry_cap"):
        NotificationSettings(retry_base=10, retry_cap=5).validate()
    path = tmp_path / "tae.toml"
    path.write_text('[notifications]\nsmtp_host = "relay"\nsmtp_port = 70000\n')
    with pytest.raises(ConfigError, match=r"^notifications\.smtp_port: 70000 is not a TCP port$"):
        load_config(str(path))
    path.write_text("[notifications]\nreminder_lead = 'soon'\n")
    with pytest.raises(ConfigError, match=r"notifications\.reminder_lead: expected float, not str"):
        load_config(str(path))
    path.write_text("[notifications]\nsmtp_hots = 'relay'\n")
    with pytest.raises(ConfigError, match="notifications: unknown setting 'smtp_hots'"):
        load_config(str(path))
    path.write_text('[notifications]\nsmtp_host = "relay.example.org"\nreminder_lead = 600\n')
    loaded = load_config(str(path)).notifications
    assert loaded.smtp_host == "relay.example.org" and loaded.reminder_lead == 600


def test_an_outbox_write_that_fails_is_tried_again_with_what_came_meanwhile():
    from server.model.store import StoreUnavailable
    from server.notifications.outbox import Outbox

    clock = Clock()
    written: list[list[str]] = []

    class Flaky:
        down = True

        def enqueue(self, entries, now):
            if self.down:
                return defer.fail(StoreUnavailable("the database is away"))
            written.append([e.key for e in entries])
            return defer.succeed(len(entries))

    from types import SimpleNamespace

    flaky = Flaky()
    outbox = Outbox(SimpleNamespace(notifications=flaky), clock, retry=5, batch_delay=0.05)
    outbox.add([entry(1, 1)])
    clock.advance(0.05)
    assert written == [] and not outbox.idle
    outbox.add([entry(1, 2)])
    flaky.down = False
    clock.advance(5)
    assert written == [["1:1:turn_started:1", "1:1:turn_started:2"]] and outbox.idle


@pytest.mark.postgres
def test_nodes_claiming_in_parallel_share_the_rows_without_overlap(pg_url):
    """Four threads (four nodes' workers) claim from one outbox at once, until it is empty:
    each row is claimed by exactly one of them."""
    import threading

    from server.database import in_transaction

    upgrade(pg_url)
    store = DatabaseStore(pg_url, thread=SynchronousDatabaseThread())
    try:
        game = new_game(store, Clock())
        for player in range(1, 5):
            hook = ("webhook", f"https://x.example/{player}", "json", 4)
            successResultOf(store.notifications.add_channel(game.id, player, *hook))
        entries = [
            outbox_q.OutboxEntry(
                game.id, player, f"{game.id}:{turn}:turn_started:{player}", "turn_started", {}
            )
            for turn in range(1, 101)
            for player in range(1, 5)
        ]
        assert successResultOf(store.notifications.enqueue(entries, START)) == 400
        claimed: dict[str, list[int]] = {}

        def node(name: str) -> None:
            mine = claimed.setdefault(name, [])
            while True:
                rows = in_transaction(store.engine, outbox_q.thd_claim_due, name, START, 600, 7)
                if not rows:
                    return
                mine.extend(r.id for r in rows)

        threads = [threading.Thread(target=node, args=(f"node-{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        every = [row for rows in claimed.values() for row in rows]
        assert len(every) == 400 and len(set(every)) == 400
        assert sum(1 for rows in claimed.values() if rows) >= 2  # they did share the work
    finally:
        store.engine.dispose()


def test_the_last_one_is_told_also_when_the_others_leave_the_turn_to_the_stand_in(store):
    clock = Clock()
    clock.advance(START)
    hooks = RecordingSender()
    notifications = service(store, clock, hooks, reminder_lead=0)
    game = new_game(store, clock, vacation_days_max=7)
    notifications.follow(game)
    for player in (1, 2, 3):
        successResultOf(notifications.add_webhook(game.id, player, f"https://chat.example/{player}"))
    join(game, "ann", "bob", "cid")
    successResultOf(game.finish_turn(1))
    deliver(clock, notifications)
    assert not [p for _, p in hooks.sent if p["event"] == "last_one"]
    successResultOf(game.start_vacation(3, 2))  # cid leaves: the stand-in plays the seat
    deliver(clock, notifications)
    assert [p["player"] for _, p in hooks.sent if p["event"] == "last_one"] == ["bob"]
