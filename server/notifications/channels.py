"""A player's channels: what a webhook URL or an e-mail address must look like, and the bodies.

A webhook is a JSON POST; its body is one of three formats, chosen per hook:

* "json": the event's payload itself (`server.notifications.events`), with its idempotency key;
* "discord": `{"content": TEXT, "allowed_mentions": {"parse": []}}` (a Discord webhook posts
  it as a message; nobody is pinged by what a game name or a player name says);
* "slack": `{"text": TEXT}` (a Slack incoming webhook), with `&`, `<`, `>` escaped as Slack asks.

The idempotency key also travels as the `Idempotency-Key` header. An e-mail is plain text with
the event's title as its subject and the key as a `X-TAE-Idempotency-Key` header.
"""

from __future__ import annotations

import json
import re
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import quote, urlsplit

import idna

from server.database.notification_outbox import EMAIL, WEBHOOK
from server.model.refusals import clipped
from server.notifications.targets import TargetRefused, WebhookTargets
from server.views.web.paths import game_url

WEBHOOK_FORMATS = ("json", "discord", "slack")
MAX_URL = 2048
MAX_ADDRESS = 254
_ADDRESS = re.compile(r"^[^@\s<>,;\"'()\[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.?)*[A-Za-z0-9]$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# What a player can be told (server.notifications.events), as the API lists it.
EVENT_KINDS = ("turn_started", "reminder", "last_one", "conflict", "game_over")


class ChannelError(ValueError):
    """A channel that cannot be used; the message says why in one line."""


class TooManyChannels(ChannelError):
    """The player has as many channels as the server allows."""


def _utf8(text: str, what: str) -> str:
    """`text`, if it can be sent at all (no unpaired surrogate); ChannelError otherwise."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ChannelError(f"that {what} contains characters that cannot be sent") from None
    return text


def _ascii_host(host: str, what: str) -> str:
    """A host name as DNS has it: an internationalised name (bücher.example) in its IDNA
    A-label form (xn--bcher-kva.example); ChannelError for one that cannot be."""
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        raise ChannelError(f"the host name of that {what} cannot be used") from None


def check_webhook(url: str, fmt: str = "json", targets: WebhookTargets | None = None) -> tuple[str, str]:
    """(url, format) of a usable webhook (its host in ASCII); ChannelError otherwise. A host
    written as an address `targets` does not allow (loopback, private, ...) is refused."""
    if fmt not in WEBHOOK_FORMATS:
        raise ChannelError(f"the webhook format must be one of {', '.join(WEBHOOK_FORMATS)}, not {fmt!r}")
    url = _utf8(url.strip(), "webhook URL")
    if not url or len(url) > MAX_URL or _CONTROL.search(url) or " " in url:
        raise ChannelError("a webhook needs a URL of at most 2048 characters, without spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise ChannelError(f"that webhook URL cannot be read: {error}") from None
    if parts.scheme not in ("http", "https"):
        raise ChannelError(f"a webhook URL must start with http:// or https://, not {parts.scheme or url!r}")
    if not parts.hostname:
        raise ChannelError("that webhook URL names no host")
    if parts.username or parts.password:
        raise ChannelError("a webhook URL cannot carry a user name or password")
    if port == 0:
        raise ChannelError("that webhook URL names port 0")
    if not parts.netloc.isascii():
        host = _ascii_host(parts.hostname, "webhook URL")
        netloc = host if ":" not in host else f"[{host}]"
        if port is not None:
            netloc += f":{port}"
        url = parts._replace(netloc=netloc).geturl()
    if not url.isascii():  # the path and query: percent-encoded, as a browser sends them
        url = quote(url, safe=":/?#[]@!$&'()*+,;=%~")
    try:
        (targets or WebhookTargets()).check_literal(parts.hostname)
    except TargetRefused as error:
        raise ChannelError(str(error)) from None
    return url, fmt


def check_address(address: str) -> str:
    """A usable e-mail address (one, without a display name); ChannelError otherwise."""
    address = _utf8(address.strip(), "e-mail address")
    local, at, domain = address.rpartition("@")
    if at and local.isascii() and not domain.isascii():
        address = f"{local}@{_ascii_host(domain, 'e-mail address')}"
    if not address or len(address) > MAX_ADDRESS or not address.isascii() or not _ADDRESS.match(address):
        raise ChannelError(f"{clipped(address, 60)} is not an e-mail address (like name@example.org)")
    return address


def describe(kind: str, target: str, fmt: str) -> str:
    """One line for a player's list of channels."""
    if kind == WEBHOOK:
        return f"webhook ({fmt}) {target}"
    if fmt != EMAIL:
        return f"e-mail {target} (not confirmed yet: follow the link in the mail sent to it)"
    return f"e-mail {target}"


def with_game_link(payload: dict[str, Any], base: str | None) -> dict[str, Any]:
    """`payload` with `url`, the game's page on the web listener at `base` (when the server
    has one, and the event is of a game): every message links to the game it is about."""
    game = payload.get("game")
    if not base or not isinstance(game, str) or not game:
        return payload
    return {**payload, "url": game_url(base, game)}


def message_text(payload: dict[str, Any]) -> str:
    """The event as one short message (Discord, Slack, the e-mail body's first line), with
    the link to the game as its last line."""
    text = f"{payload.get('title', '')}\n{payload.get('text', '')}".strip()
    return f"{text}\n{payload['url']}" if payload.get("url") else text


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def webhook_body(fmt: str, payload: dict[str, Any]) -> bytes:
    """The JSON body a webhook of format `fmt` gets for this event."""
    document: dict[str, Any]
    if fmt == "discord":
        document = {"content": message_text(payload)[:2000], "allowed_mentions": {"parse": []}}
    elif fmt == "slack":
        document = {"text": _slack_escape(message_text(payload))}
    else:
        document = payload
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def email_message(payload: dict[str, Any], sender: str, recipient: str, now: float) -> bytes:
    """The e-mail of this event, as the bytes an SMTP relay is given."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = recipient
    message["Subject"] = _CONTROL.sub(" ", str(payload.get("title", "Thousand Parsec")))[:200]
    message["Date"] = formatdate(now, usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message["X-TAE-Idempotency-Key"] = _CONTROL.sub(" ", str(payload.get("key", "")))
    # The text is the whole message; a game_over's holds the final standing, one line a place.
    lines = [str(payload.get("text", ""))]
    if payload.get("url"):
        lines += ["", f"Your game: {payload['url']}"]
    lines += ["", "--", "To stop these e-mails: tae-client notify off"]
    message.set_content("\n".join(lines))
    return message.as_bytes()


__all__ = [
    "EMAIL",
    "WEBHOOK",
    "WEBHOOK_FORMATS",
    "EVENT_KINDS",
    "ChannelError",
    "TooManyChannels",
    "check_address",
    "check_webhook",
    "describe",
    "email_message",
    "message_text",
    "webhook_body",
    "with_game_link",
]
