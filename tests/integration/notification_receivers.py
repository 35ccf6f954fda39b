"""A local webhook receiver and SMTP server for the notification tests, run as a subprocess.

    python -m tests.integration.notification_receivers --http PORT --smtp PORT --silent PORT --out FILE

* HTTP on 127.0.0.1:PORT (twisted.web): every POST is answered 200 and written to FILE as
  `{"channel": "webhook", "path", "key" (the Idempotency-Key header), "body"}`; a POST to
  /status/NNN is answered with status NNN instead (and not written).
* SMTP on 127.0.0.1:PORT (twisted.mail's ESMTP server, any sender and recipient): every message
  is written as `{"channel": "email", "to", "key" (the X-TAE-Idempotency-Key header), "subject"}`.
* --silent PORT: a TCP port that accepts connections and never answers (a hung webhook).

Each line is flushed before the request is answered, so what the file says was received was
taken. Killing the process is the receiver being down; starting it again on the same ports is
it coming back.
"""

from __future__ import annotations

import argparse
import json
import os
from email import message_from_bytes

from twisted.internet import defer, protocol, reactor
from twisted.mail import smtp
from twisted.web import resource, server
from zope.interface import implementer


class Journal:
    def __init__(self, path: str):
        self.file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process's life)

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())


class Hooks(resource.Resource):
    isLeaf = True

    def __init__(self, journal: Journal):
        super().__init__()
        self.journal = journal

    def render_POST(self, request):
        body = request.content.read()
        if request.path.startswith(b"/status/"):  # answered with that status, not kept
            request.setResponseCode(int(request.path.split(b"/")[2]))
            return b"as asked"
        self.journal.write(
            {
                "channel": "webhook",
                "path": request.path.decode(),
                "key": (request.getHeader(b"idempotency-key") or b"").decode(),
                "content_type": (request.getHeader(b"content-type") or b"").decode(),
                "body": json.loads(body),
            }
        )
        request.setHeader(b"content-type", b"text/plain")
        return b"ok"


@implementer(smtp.IMessage)
class Message:
    def __init__(self, journal: Journal, recipient: str):
        self.journal = journal
        self.recipient = recipient
        self.lines: list[bytes] = []

    def lineReceived(self, line: bytes) -> None:
        self.lines.append(line)

    def eomReceived(self):
        parsed = message_from_bytes(b"\n".join(self.lines))
        self.journal.write(
            {
                "channel": "email",
                "to": self.recipient,
                "key": parsed.get("X-TAE-Idempotency-Key", ""),
                "subject": parsed.get("Subject", ""),
                "from": parsed.get("From", ""),
                "text": str(parsed.get_payload(decode=True) or b"", "utf-8", "replace"),
            }
        )
        return defer.succeed(None)

    def connectionLost(self) -> None:
        self.lines = []


@implementer(smtp.IMessageDelivery)
class Delivery:
    def __init__(self, journal: Journal):
        self.journal = journal

    def receivedHeader(self, helo, origin, recipients):
        return b"Received: by the test relay"

    def validateFrom(self, helo, origin):
        return origin

    def validateTo(self, user):
        recipient = str(user.dest)
        return lambda: Message(self.journal, recipient)


class Relay(smtp.SMTPFactory):
    protocol = smtp.ESMTP

    def __init__(self, journal: Journal):
        super().__init__()
        self.delivery = Delivery(journal)

    def buildProtocol(self, addr):
        p = super().buildProtocol(addr)
        p.delivery = self.delivery
        p.challengers = {}
        return p


class Silent(protocol.Protocol):
    def dataReceived(self, data: bytes) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, required=True)
    parser.add_argument("--smtp", type=int, required=True)
    parser.add_argument("--silent", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    journal = Journal(args.out)
    reactor.listenTCP(args.http, server.Site(Hooks(journal)), interface="127.0.0.1")  # type: ignore[arg-type]
    reactor.listenTCP(args.smtp, Relay(journal), interface="127.0.0.1")
    if args.silent:
        silent = protocol.Factory.forProtocol(Silent)
        reactor.listenTCP(args.silent, silent, interface="127.0.0.1")  # type: ignore[arg-type]
    print("ready", flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
