"""Sending one notification: a webhook POST (twisted.web's Agent) or an e-mail (twisted.mail).

Each send returns a Deferred that fires with None once the receiver took the notification, or
fails with `DeliveryFailed` (a one-line reason; `permanent` when trying again cannot help, such
as an HTTP 404 or a relay that refuses the address). Every send has a time limit
(`request_timeout`): the connection, and the whole exchange.
"""

from __future__ import annotations

from io import BytesIO

from twisted.internet import defer
from twisted.internet.error import ConnectError, ConnectionRefusedError, DNSLookupError, TimeoutError
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.web.client import Agent, FileBodyProducer, HTTPConnectionPool, ResponseFailed
from twisted.web.http_headers import Headers

from server.config.notifications import NotificationSettings
from server.notifications.channels import email_message, webhook_body
from server.notifications.targets import CheckedEndpoints, TargetRefused, WebhookTargets

log = Logger()

USER_AGENT = b"tpserver-tae notifications"
MAX_ANSWER = 64 * 1024


class DeliveryFailed(Exception):
    """One attempt failed: `str()` is the reason, `permanent` says whether to give up now."""

    def __init__(self, reason: str, permanent: bool = False):
        super().__init__(reason)
        self.permanent = permanent


def _reason(failure) -> str:
    if failure.check(DeliveryFailed):
        return str(failure.value)
    if failure.check(TargetRefused):
        return str(failure.value)
    if failure.check(ResponseFailed):  # also ResponseNeverReceived: the reasons are inside
        reasons = getattr(failure.value, "reasons", None) or []
        if reasons:
            return _reason(reasons[0])
    if failure.check(defer.TimeoutError, TimeoutError, defer.CancelledError):
        return "no answer in time"
    if failure.check(ConnectionRefusedError):
        return "connection refused"
    if failure.check(DNSLookupError):
        return "the host name is unknown"
    if failure.check(ConnectError):
        return f"cannot connect: {failure.getErrorMessage()}"
    message = failure.getErrorMessage().strip().splitlines()
    return f"{failure.type.__name__}: {message[0] if message else ''}".strip(": ")


class WebhookSender:
    """POSTs over a pool of persistent connections (many notifications go to one chat server),
    each to an address the webhook rule allows (`server.notifications.targets`: never the
    server's own network unless the operator allows it), never following a redirect."""

    def __init__(self, reactor, timeout: float, targets: WebhookTargets | None = None, resolve=None):
        self.reactor = reactor
        self.timeout = timeout
        self.pool = HTTPConnectionPool(reactor, persistent=True)
        self.pool.maxPersistentPerHost = 64
        self.pool.retryAutomatically = False
        endpoints = CheckedEndpoints(reactor, targets or WebhookTargets(), timeout, resolve)
        self.agent = Agent.usingEndpointFactory(reactor, endpoints, pool=self.pool)

    def send(self, url: str, fmt: str, payload: dict) -> defer.Deferred:
        body = webhook_body(fmt, payload)
        headers = Headers(
            {
                b"content-type": [b"application/json"],
                b"user-agent": [USER_AGENT],
                b"idempotency-key": [str(payload.get("key", "")).encode("ascii", "replace")],
            }
        )
        d = self.agent.request(b"POST", url.encode("utf-8"), headers, FileBodyProducer(BytesIO(body)))
        d.addCallback(self._answered)
        d.addTimeout(self.timeout, self.reactor)
        return d.addErrback(lambda failure: _fail(failure))

    def _answered(self, response) -> defer.Deferred:
        code = response.code
        done: defer.Deferred = defer.Deferred()
        response.deliverBody(_Discard(done))

        def judged(_: object) -> None:
            if 200 <= code < 300:
                return None
            if 300 <= code < 400:
                raise DeliveryFailed(f"HTTP {code}: webhooks are not redirected", permanent=True)
            permanent = 400 <= code < 500 and code not in (408, 425, 429)
            raise DeliveryFailed(f"HTTP {code} {response.phrase.decode('latin-1', 'replace')}", permanent)

        return done.addCallback(judged)

    def close(self) -> defer.Deferred:
        return self.pool.closeCachedConnections()


class _Discard(Protocol):
    """Reads an answer's body and drops it (at most MAX_ANSWER bytes: then the answer is cut
    off); `done` fires when the body ended, however it ended: the status alone decides."""

    def __init__(self, done: defer.Deferred):
        self.done = done
        self.size = 0

    def dataReceived(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > MAX_ANSWER and self.transport is not None:
            self.transport.stopProducing()  # type: ignore[attr-defined]

    def connectionLost(self, reason=None) -> None:
        if not self.done.called:
            self.done.callback(None)


def _fail(failure):
    if failure.check(DeliveryFailed):
        return failure
    refused = failure.check(ResponseFailed) and any(
        r.check(TargetRefused) for r in getattr(failure.value, "reasons", None) or []
    )
    raise DeliveryFailed(_reason(failure), permanent=bool(failure.check(TargetRefused) or refused))


class MailSender:
    """E-mail through the configured SMTP relay, one session per message."""

    def __init__(self, reactor, settings: NotificationSettings):
        self.reactor = reactor
        self.settings = settings

    def send(self, address: str, payload: dict) -> defer.Deferred:
        from twisted.mail.smtp import (
            AUTHDeclinedError,
            AUTHRequiredError,
            ESMTPSenderFactory,
            SMTPConnectError,
            SMTPDeliveryError,
            TLSRequiredError,
        )

        s = self.settings
        if not s.email_enabled:
            return defer.fail(DeliveryFailed("this server sends no e-mail (no smtp_host)", permanent=True))
        message = email_message(payload, s.smtp_from, address, self.reactor.seconds())
        connector = None

        def cancel(d: defer.Deferred) -> None:
            factory.sendFinished = True
            if factory.currentProtocol is not None and factory.currentProtocol.transport is not None:
                factory.currentProtocol.transport.abortConnection()
            elif connector is not None:
                connector.disconnect()

        d: defer.Deferred = defer.Deferred(cancel)
        factory = ESMTPSenderFactory(
            s.smtp_username.encode() or None,
            s.smtp_password.encode() or None,
            s.smtp_from,
            [address],
            BytesIO(message),
            d,
            retries=0,
            timeout=int(max(1, s.request_timeout)),
            heloFallback=True,
            requireAuthentication=bool(s.smtp_username),
            requireTransportSecurity=s.smtp_starttls,
            hostname=s.smtp_host,
        )
        factory.noisy = False
        connector = self.reactor.connectTCP(s.smtp_host, s.smtp_port, factory, timeout=s.request_timeout)
        d.addTimeout(s.request_timeout * 2, self.reactor)

        relay = f"{s.smtp_host}:{s.smtp_port}"

        def refused(failure):
            if failure.check(TLSRequiredError):
                raise DeliveryFailed(f"the relay {relay} offers no STARTTLS (smtp_starttls is true)")
            if failure.check(AUTHRequiredError):
                raise DeliveryFailed(f"the relay {relay} offers no login (smtp_username is set)")
            if failure.check(AUTHDeclinedError):
                raise DeliveryFailed(f"the relay {relay} refused smtp_username/smtp_password")
            if failure.check(SMTPConnectError):
                raise DeliveryFailed(f"cannot connect to the relay {relay}")
            if failure.check(SMTPDeliveryError):
                code = getattr(failure.value, "code", 0) or 0
                text = failure.getErrorMessage().strip().splitlines()
                raise DeliveryFailed(
                    f"the relay refused it: {text[0] if text else code}", permanent=500 <= code < 600
                )
            return _fail(failure)

        return d.addCallbacks(lambda _: None, refused)
