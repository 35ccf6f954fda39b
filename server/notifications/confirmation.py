"""An e-mail channel is used only once its owner confirmed the address.

Anyone can type anyone's address; without confirmation the server would send game mail (and
test mails, on demand) to people who never asked for it. So a new e-mail channel is stored
*unconfirmed* (its format is `UNCONFIRMED` instead of "email": the outbox writes no row for it)
and one mail goes to the address: a link to `/games/GAME/notifications/confirm/TOKEN` on the
web listener. The token is signed with the web secret and names the game, the player, the
channel and the address, and expires after `CONFIRM_FOR_S`; following it (and pressing the
button on the page, so that a mail scanner that opens links confirms nothing) makes the
channel an "email" channel.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

from server.model.outbox_entry import OutboxEntry

UNCONFIRMED = "unconfirmed"
CONFIRM = "confirm_email"
CONFIRM_FOR_S = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What a confirmation link confirms."""

    game: str
    player: int
    channel: int
    address: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _sign(secret: bytes, body: str) -> str:
    return _b64(hmac.new(secret, f"confirm|{body}".encode(), hashlib.sha256).digest())


def confirmation_token(secret: bytes, what: Confirmation, now: float) -> str:
    body = _b64(
        json.dumps(
            [what.game, what.player, what.channel, what.address, int(now + CONFIRM_FOR_S)],
            separators=(",", ":"),
        ).encode()
    )
    return f"{body}.{_sign(secret, body)}"


def read_confirmation(secret: bytes, token: str, now: float) -> Confirmation | None:
    """The confirmation a token names; None for a forged, malformed or expired one."""
    body, _, signature = token.partition(".")
    if not body or not hmac.compare_digest(
        _sign(secret, body).encode(), signature.encode("utf-8", "surrogatepass")
    ):
        return None
    try:
        game, player, channel, address, until = json.loads(
            base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        )
    except (ValueError, TypeError, UnicodeError):
        return None
    if not (
        isinstance(game, str)
        and isinstance(player, int)
        and isinstance(channel, int)
        and isinstance(address, str)
        and isinstance(until, int)
    ):
        return None
    if until < now:
        return None
    return Confirmation(game, player, channel, address)


def confirmation_entry(game_id: int, what: Confirmation, link: str, now: float) -> OutboxEntry:
    """The mail that asks the address's owner to confirm it."""
    key = f"{CONFIRM}:{game_id}:{what.player}:{what.channel}:{int(now)}"
    title = f"{what.game}: confirm your address for game notifications"
    text = (
        f"Someone (we hope you) asked for notifications of the Thousand Parsec game {what.game} "
        f"to be sent to {what.address}.\n\nTo confirm, open this link and press the button:\n{link}\n\n"
        "If it was not you, ignore this mail: nothing more will be sent to you."
    )
    payload = {"key": key, "event": CONFIRM, "game": what.game, "title": title, "text": text}
    return OutboxEntry(game_id, what.player, key, CONFIRM, payload)
