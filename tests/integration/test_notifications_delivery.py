"""Notifications for real: a `tae-server serve` process, a local webhook receiver and SMTP server.

Players join and set their channels over the JSON API; turns start and end; the receivers go
down for a while (turns go on meanwhile, at full speed, with a hung webhook among the
channels), the server is stopped and started again on the same database while they are down,
then the receivers come back. Every event reaches every configured channel exactly once, on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from tests.support.json_schemas import json_answer
from tests.support.openapi_check import checked
from tests.support.servers import free_port, wait_for_port

from .server_process import ROOT, ServerProcess

pytestmark = pytest.mark.timeout(180)

PLAYERS = ("ann", "bob", "cid")


class Web:
    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method: str, path: str, document=None, user: str | None = None):
        headers = {"Content-Type": "application/json"}
        if user is not None:
            headers["Authorization"] = (
                "Basic " + base64.b64encode(f"{user}:{user}-password".encode()).decode()
            )
        data = None if document is None else json.dumps(document).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, checked(method, path, answer)
        except urllib.error.HTTPError as error:
            return error.code, checked(method, path, error)


class Receivers:
    """The receivers subprocess (tests.integration.notification_receivers)."""

    def __init__(self, journal: Path):
        self.journal = journal
        self.http, self.smtp, self.silent = free_port(), free_port(), free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.integration.notification_receivers",
                *("--http", str(self.http), "--smtp", str(self.smtp), "--silent", str(self.silent)),
                *("--out", str(self.journal)),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready"
        wait_for_port(self.http, self.process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def received(self) -> list[dict]:
        if not self.journal.exists():
            return []
        return [json.loads(line) for line in self.journal.read_text().splitlines() if line.strip()]

    def wait_for(self, keys: Counter, timeout: float = 60) -> Counter:
        """Wait until every (channel, key) of `keys` was received; what was received."""
        deadline = time.monotonic() + timeout
        while True:
            got = Counter(received_keys(self.received()))
            if all(got[k] >= n for k, n in keys.items()) or time.monotonic() > deadline:
                return got
            time.sleep(0.1)


def received_keys(records: list[dict]) -> list[tuple[str, str]]:
    out = []
    for record in records:
        where = record["path"] if record["channel"] == "webhook" else record["to"]
        out.append((where, record["key"]))
    return out


def config_file(tmp_path: Path, receivers: Receivers) -> Path:
    path = tmp_path / "tae.toml"
    path.write_text(
        "[game]\n"
        "turn_length = 3600\n"
        "turn_players_min = 3\n"
        "[notifications]\n"
        f'smtp_host = "127.0.0.1"\nsmtp_port = {receivers.smtp}\n'
        'smtp_from = "tae@test.invalid"\n'
        "reminder_lead = 0\nretry_base = 0.3\nretry_cap = 1.0\nmax_attempts = 1000\n"
        "request_timeout = 2\ngather = 0.5\n"
        'webhook_allow = ["127.0.0.1"]\n'  # the receivers run here
    )
    return path


def confirm_email(web_port: int, receivers: Receivers, address: str) -> None:
    """Follow the link of the confirmation mail sent to `address` and press its button."""
    import http.cookiejar
    import re
    import urllib.parse

    deadline = time.monotonic() + 30
    mails: list[dict] = []
    while not mails and time.monotonic() < deadline:
        mails = [r for r in receivers.received() if r.get("to") == address and "confirm_email" in r["key"]]
        time.sleep(0.05)
    assert mails, f"no confirmation mail to {address}"
    link = re.search(r"http://\S+/notifications/confirm/\S+", mails[-1]["text"])
    assert link, mails[-1]
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page = browser.open(link.group(0), timeout=10).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf, page
    form = urllib.parse.urlencode({"csrf": csrf.group(1)}).encode()
    done = browser.open(urllib.request.Request(link.group(0), data=form, method="POST"), timeout=10).read()
    assert b"Address confirmed" in done


def start_server(database: str, config: Path, web_port: int) -> ServerProcess:
    server = ServerProcess(database, "--config", str(config), "--web", f"tcp:{web_port}:interface=127.0.0.1")
    server.start()
    wait_for_port(web_port, server.process)
    return server


def game_id(web: Web) -> int:
    return 1  # the open game is the database's first


def test_every_event_reaches_every_channel_once_through_restarts_and_outages(tmp_path, database_url):
    receivers = Receivers(tmp_path / "received.jsonl")
    receivers.start()
    config = config_file(tmp_path, receivers)
    web_port = free_port()
    server = start_server(database_url, config, web_port)
    web = Web(web_port)
    try:
        hook = f"http://127.0.0.1:{receivers.http}"
        for name in PLAYERS[:2]:
            status, _ = web.call(
                "POST", "/api/games/tae/accounts", {"username": name, "password": name + "-password"}
            )
            assert status == 201
        assert (
            web.call("PUT", "/api/games/tae/notifications", {"webhook": f"{hook}/ann"}, user="ann")[0] == 200
        )
        assert (
            web.call("PUT", "/api/games/tae/notifications", {"email": "ann@test.invalid"}, user="ann")[0]
            == 200
        )
        confirm_email(web_port, receivers, "ann@test.invalid")
        status, listing = web.call(
            "PUT", "/api/games/tae/notifications", {"webhook": f"{hook}/bob", "format": "discord"}, user="bob"
        )
        assert status == 200 and [c["format"] for c in listing["channels"]] == ["discord"]
        bad = web.call("PUT", "/api/games/tae/notifications", {"webhook": "ftp://x/"}, user="bob")
        assert bad[0] == 400 and "http://" in bad[1]["error"]["message"]
        # the third player starts the game (turn_players_min = 3), and hangs a silent webhook
        web.call("POST", "/api/games/tae/accounts", {"username": "cid", "password": "cid-password"})
        silent = f"http://127.0.0.1:{receivers.silent}/cid"
        assert web.call("PUT", "/api/games/tae/notifications", {"webhook": silent}, user="cid")[0] == 200

        g = game_id(web)
        first = Counter(
            {("/ann", f"{g}:0:turn_started:1"): 1, ("ann@test.invalid", f"{g}:0:turn_started:1"): 1}
        )
        first[("/bob", f"{g}:0:turn_started:2")] = 1
        got = receivers.wait_for(first)
        assert all(got[k] == 1 for k in first), got
        discord = next(r for r in receivers.received() if r.get("path") == "/bob")
        assert (
            set(discord["body"]) == {"content", "allowed_mentions"} and "turn 0" in discord["body"]["content"]
        )
        # every message links to the game, on the web listener's own address (no public_url)
        assert discord["body"]["content"].endswith(f"\nhttp://127.0.0.1:{web_port}/games/tae")

        # the receivers go down once the server knows they took these (a receiver that journals a
        # message and is killed before its answer leaves makes the server send it again: a real
        # repeat, but of the test's making)
        wait_for_deliveries(database_url, [f"{hook}/ann", "ann@test.invalid", f"{hook}/bob"])
        # the turns go on at full speed (a hung webhook among them)
        receivers.stop()
        for turn in (1, 2):
            for name in PLAYERS:
                started = time.monotonic()
                status, answer = web.call("POST", "/api/games/tae/finish", {}, user=name)
                assert status == 200, answer
                assert time.monotonic() - started < 2.0
            status, me = web.call("GET", "/api/games/tae", None)
            assert me["turn"] == turn
        time.sleep(1.0)  # some attempts fail meanwhile

        # a restart while they are down, then they come back
        assert server.terminate() == 0
        server = start_server(database_url, config, web_port)
        receivers.start()
        expected = Counter()
        for turn in (0, 1, 2):  # turns as every tool numbers them: the game starts at turn 0
            expected[("/ann", f"{g}:{turn}:turn_started:1")] = 1
            expected[("ann@test.invalid", f"{g}:{turn}:turn_started:1")] = 1
            expected[("/bob", f"{g}:{turn}:turn_started:2")] = 1
        got = receivers.wait_for(expected)
        time.sleep(1.5)  # longer than retry_cap: any repeat would have come by now
        got = Counter(received_keys(receivers.received()))
        assert {k: got[k] for k in expected} == dict(expected), got
        assert all(n == 1 for n in got.values()), [k for k, n in got.items() if n > 1]
        # the hung webhook's notifications wait for another try, each attempt cut off in time
        deadline = time.monotonic() + 15
        while silent_errors(database_url, silent) != {"no answer in time"} and time.monotonic() < deadline:
            time.sleep(0.2)
        assert silent_errors(database_url, silent) == {"no answer in time"}
    finally:
        server.kill()
        receivers.stop()


def wait_for_deliveries(url: str, targets: list[str], timeout: float = 30) -> None:
    """Wait until every notification to `targets` is marked delivered in the store."""
    import sqlalchemy as sa

    from server.database import SyncDatabase
    from server.database.notification_outbox import notification_channels, notification_outbox

    query = (
        sa.select(sa.func.count())
        .select_from(notification_outbox)
        .join(notification_channels, notification_channels.c.id == notification_outbox.c.channel_id)
        .where(notification_channels.c.target.in_(targets), notification_outbox.c.delivered.is_(None))
    )
    deadline = time.monotonic() + timeout
    with SyncDatabase(url) as db:
        while (waiting := db.run(lambda conn: conn.execute(query).scalar())) and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not waiting, f"{waiting} notifications to {targets} not delivered in {timeout} s"


def silent_errors(url: str, target: str) -> set[str]:
    import sqlalchemy as sa

    from server.database import SyncDatabase
    from server.database.notification_outbox import notification_channels, notification_outbox

    query = (
        sa.select(notification_outbox.c.last_error, notification_outbox.c.delivered)
        .join(notification_channels, notification_channels.c.id == notification_outbox.c.channel_id)
        .where(notification_channels.c.target == target)
    )
    with SyncDatabase(url) as db:
        rows = db.run(lambda conn: list(conn.execute(query)))
    # a turn's start that a "waits only for you" replaced before it was tried is closed as
    # sent with that one; every other row of the silent hook is still waiting
    rows = [row for row in rows if not (row.last_error or "").startswith("sent with ")]
    assert rows and all(row.delivered is None for row in rows)
    return {row.last_error for row in rows if row.last_error}


def tae_client(web_port: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "--user", "ann", "--password", "ann-password"]
        + ["--web-url", f"http://127.0.0.1:{web_port}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_tae_client_notify_sets_tests_and_removes_channels(tmp_path, sqlite_url):
    receivers = Receivers(tmp_path / "received.jsonl")
    receivers.start()
    web_port = free_port()
    server = start_server(sqlite_url, config_file(tmp_path, receivers), web_port)
    web = Web(web_port)
    try:
        web.call("POST", "/api/games/tae/accounts", {"username": "ann", "password": "ann-password"})
        hook = f"http://127.0.0.1:{receivers.http}/ann-slack"
        added = tae_client(web_port, "notify", "webhook", hook, "--format", "slack")
        assert added.returncode == 0 and "webhook (slack)" in added.stdout, added.stderr
        emailed = json_answer(tae_client(web_port, "notify", "email", "ann@test.invalid", "--json").stdout)
        assert [c["kind"] for c in emailed["channels"]] == ["webhook", "email"]
        confirm_email(web_port, receivers, "ann@test.invalid")
        refused = tae_client(web_port, "notify", "webhook", "gopher://example.org/")
        assert refused.returncode != 0 and "http:// or https://" in refused.stderr
        assert "Traceback" not in refused.stderr
        refusal = json_answer(
            tae_client(web_port, "notify", "webhook", "gopher://example.org/", "--json").stdout
        )
        assert refusal["error"]["code"] == "refused" and "http:// or https://" in refusal["error"]["message"]
        listing = json_answer(tae_client(web_port, "notify", "show", "--json").stdout)
        assert [(c["kind"], c["format"]) for c in listing["channels"]] == [
            ("webhook", "slack"),
            ("email", "email"),
        ]
        shown = tae_client(web_port, "notify", "show").stdout
        assert hook in shown and "ann@test.invalid" in shown

        assert "2 channel(s)" in tae_client(web_port, "notify", "test").stdout
        deadline = time.monotonic() + 30
        while (
            len([r for r in receivers.received() if ":test:" in r["key"]]) < 2 and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        tests = [r for r in receivers.received() if ":test:" in r["key"]]
        assert sorted(r["channel"] for r in tests) == ["email", "webhook"]
        slack = next(r for r in tests if r["channel"] == "webhook")
        assert set(slack["body"]) == {"text"} and "test notification" in slack["body"]["text"]

        listing = json_answer(tae_client(web_port, "notify", "off", hook, "--json").stdout)
        assert [c["kind"] for c in listing["channels"]] == ["email"]
        missing = json_answer(tae_client(web_port, "notify", "off", "99", "--json").stdout)
        assert missing["error"]["code"] == "usage"
        assert json_answer(tae_client(web_port, "notify", "off", "--json").stdout)["channels"] == []
        assert json_answer(tae_client(web_port, "notify", "show", "--json").stdout)["channels"] == []
    finally:
        server.kill()
        receivers.stop()


def test_the_senders_against_real_receivers_say_what_went_wrong(tmp_path):
    receivers = Receivers(tmp_path / "received.jsonl")
    receivers.start()
    try:
        ports = [receivers.http, receivers.smtp, receivers.silent, free_port()]
        run = subprocess.run(
            [sys.executable, "-m", "tests.integration.sender_probe", *map(str, ports)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        results = {r["case"]: r for r in map(json.loads, run.stdout.splitlines())}
    finally:
        receivers.stop()
    assert "crash" not in results, results.get("crash")
    assert results["webhook ok"]["ok"] and results["mail ok"]["ok"]
    assert results["webhook 404"] == {
        "case": "webhook 404",
        "ok": False,
        "error": "HTTP 404 Not Found",
        "permanent": True,
    }
    assert (
        results["webhook 503"]["error"] == "HTTP 503 Service Unavailable"
        and not results["webhook 503"]["permanent"]
    )
    assert not results["webhook 429"]["permanent"]
    assert results["webhook hung"]["error"] == "no answer in time"
    assert results["webhook refused"]["error"] == "connection refused"
    # a name that resolves to the loopback address is refused when sent, for good
    loopback = results["webhook loopback"]
    assert "loopback, private" in loopback["error"] and loopback["permanent"] is True
    assert "offers no STARTTLS" in results["mail starttls"]["error"]
    assert "offers no login" in results["mail login"]["error"]
    assert "cannot connect to the relay" in results["mail refused"]["error"]
    assert results["mail off"]["permanent"] is True
    kept = receivers.received()
    assert [r["path"] for r in kept if r["channel"] == "webhook"] == ["/ok"]
    (mail,) = [r for r in kept if r["channel"] == "email"]
    assert mail["to"] == "ann@test.invalid" and mail["key"] == "9:1:test:1" and mail["subject"] == "probe"
