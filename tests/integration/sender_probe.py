"""Run the notification senders once against local receivers and print what each send came to.

    python -m tests.integration.sender_probe HTTP_PORT SMTP_PORT SILENT_PORT CLOSED_PORT

One JSON line per case: `{"case", "ok", "error", "permanent"}` (a process of its own: each
test gets a fresh reactor).
"""

from __future__ import annotations

import json
import sys

from twisted.internet import defer, reactor

from server.config.notifications import NotificationSettings
from server.notifications.delivery import MailSender, WebhookSender
from server.notifications.targets import WebhookTargets


async def probe(http: int, smtp: int, silent: int, closed: int) -> None:
    payload = {"key": "9:1:test:1", "event": "test", "title": "probe", "text": "a probe"}
    hooks = WebhookSender(reactor, timeout=1.5, targets=WebhookTargets(["127.0.0.1"]))
    guarded = WebhookSender(reactor, timeout=1.5)  # the default rule: not the local network
    relay = NotificationSettings(smtp_host="127.0.0.1", smtp_port=smtp, request_timeout=2)
    cases = [
        ("webhook ok", hooks.send(f"http://127.0.0.1:{http}/ok", "json", payload)),
        ("webhook 404", hooks.send(f"http://127.0.0.1:{http}/status/404", "json", payload)),
        ("webhook 503", hooks.send(f"http://127.0.0.1:{http}/status/503", "slack", payload)),
        ("webhook 429", hooks.send(f"http://127.0.0.1:{http}/status/429", "discord", payload)),
        ("webhook hung", hooks.send(f"http://127.0.0.1:{silent}/x", "json", payload)),
        ("webhook refused", hooks.send(f"http://127.0.0.1:{closed}/x", "json", payload)),
        ("webhook loopback", guarded.send(f"http://localhost:{http}/ok", "json", payload)),
        ("mail ok", MailSender(reactor, relay).send("ann@test.invalid", payload)),
        (
            "mail starttls",
            MailSender(reactor, NotificationSettings(**{**_fields(relay), "smtp_starttls": True})).send(
                "ann@test.invalid", payload
            ),
        ),
        (
            "mail login",
            MailSender(
                reactor,
                NotificationSettings(**{**_fields(relay), "smtp_username": "u", "smtp_password": "p"}),
            ).send("ann@test.invalid", payload),
        ),
        (
            "mail refused",
            MailSender(reactor, NotificationSettings(**{**_fields(relay), "smtp_port": closed})).send(
                "ann@test.invalid", payload
            ),
        ),
        ("mail off", MailSender(reactor, NotificationSettings()).send("ann@test.invalid", payload)),
    ]
    for name, d in cases:
        try:
            await d
            print(json.dumps({"case": name, "ok": True}), flush=True)
        except Exception as error:
            permanent = getattr(error, "permanent", None)
            print(
                json.dumps({"case": name, "ok": False, "error": str(error), "permanent": permanent}),
                flush=True,
            )
    await hooks.close()


def _fields(settings: NotificationSettings) -> dict:
    import msgspec

    return msgspec.structs.asdict(settings)


def main() -> None:
    ports = [int(a) for a in sys.argv[1:5]]
    d = defer.ensureDeferred(probe(*ports))
    d.addErrback(lambda failure: print(json.dumps({"case": "crash", "error": failure.getTraceback()})))
    d.addBoth(lambda _: reactor.stop())
    reactor.run()


if __name__ == "__main__":
    main()
