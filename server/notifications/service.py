"""A server's notifications, put together: the follower, the outbox, the delivery worker, and
what the web API asks of them (a player's channels).

`Notifications.follow(game)` is called for every game this process runs, wherever it came
from (loaded at start, created later, claimed by a cluster node): `server.operating.desk`'s
`restore_game` hands each one over through the desk's `watch`.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass

from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from server.config.notifications import NotificationSettings
from server.database.notification_outbox import EMAIL, WEBHOOK, ChannelRow
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.notifications import events
from server.notifications.channels import (
    ChannelError,
    TooManyChannels,
    check_address,
    check_webhook,
    describe,
)
from server.notifications.confirmation import UNCONFIRMED
from server.notifications.delivery import MailSender, WebhookSender
from server.notifications.follower import GameFollower
from server.notifications.outbox import Outbox
from server.notifications.targets import WebhookTargets
from server.notifications.worker import DeliveryWorker

log = Logger()


@dataclass(frozen=True, slots=True)
class ChannelView:
    """A channel as its player sees it (the API's list, the page): `number` is its place in
    the player's list, 1 to n, oldest first (what `notify off N` and the API's id name);
    `row` is the database's id of it, which the player never sees."""

    number: int
    row: int
    kind: str
    target: str
    format: str

    @classmethod
    def of(cls, number: int, row: ChannelRow) -> ChannelView:
        return cls(number, row.id, row.kind, row.target, row.format)

    def document(self) -> dict:
        return {
            "id": self.number,
            "kind": self.kind,
            "target": self.target,
            "format": self.format,
            "confirmed": self.format != UNCONFIRMED,
            "description": describe(self.kind, self.target, self.format),
        }


def worker_name(node: str | None = None) -> str:
    """Who claims outbox rows: the cluster node's name, or host:pid."""
    return node or f"{socket.gethostname()}:{os.getpid()}"


class Notifications:
    def __init__(
        self,
        store,
        reactor,
        settings: NotificationSettings,
        *,
        clock: IReactorTime | None = None,
        name: str | None = None,
        webhooks=None,
        mail=None,
        poll_interval: float = 1.0,
        batch_delay: float | None = None,
        site_url: Callable[[], str | None] | None = None,
    ):
        self.store = store
        self.reactor = reactor
        self.clock = clock or reactor
        self.settings = settings
        self.targets = WebhookTargets(settings.webhook_allow)
        self.webhooks = webhooks or WebhookSender(reactor, settings.request_timeout, self.targets)
        self.mail = mail or MailSender(reactor, settings)
        self.worker = DeliveryWorker(
            store,
            self.clock,
            settings,
            name=worker_name(name),
            webhooks=self.webhooks,
            mail=self.mail,
            poll_interval=poll_interval,
            site_url=site_url,
        )
        self.outbox = Outbox(store, self.clock, on_stored=self.worker.wake)
        if batch_delay is not None:
            self.outbox.batch_delay = batch_delay
        self.follower = GameFollower(
            self.outbox, self.clock, settings.reminder_lead, wake=self.worker.wake, gather=settings.gather
        )
        self.started = False

    # -- games -----------------------------------------------------------------------------

    def follow(self, game) -> None:
        if self.settings.enabled:
            self.follower.follow(game)

    def forget(self, game_id: int) -> None:
        self.follower.forget(game_id)

    def start(self) -> None:
        if self.settings.enabled and not self.started:
            self.started = True
            self.worker.start()

    async def stop(self) -> None:
        """Stop following games, write the events not yet written, end the sends in flight."""
        self.follower.stop()
        await self.outbox.drain()
        await self.worker.stop()
        close = getattr(self.webhooks, "close", None)
        if close is not None:
            await defer.maybeDeferred(close)

    # -- a player's channels (the web API) -------------------------------------------------

    async def channels(self, game_id: int, player: int) -> list[ChannelView]:
        rows = await self.store.notifications.channels(game_id, player)
        return [ChannelView.of(number, row) for number, row in enumerate(rows, 1)]  # oldest first

    async def add_webhook(self, game_id: int, player: int, url: str, fmt: str = "json") -> ChannelView:
        url, fmt = check_webhook(url, fmt, self.targets)
        return await self._add(game_id, player, WEBHOOK, url, fmt)

    async def add_email(
        self, game_id: int, player: int, address: str, confirm: Callable[[int, str], tuple[str, OutboxEntry]]
    ) -> ChannelView:
        """Add an e-mail channel, unconfirmed (`server.notifications.confirmation`) unless the
        player confirmed that address already; `confirm(channel id, address)` gives the link
        and the mail asking its owner to confirm it, which is sent at once."""
        if not self.settings.email_enabled:
            raise ChannelError("this server sends no e-mail (its operator set no SMTP relay)")
        address = check_address(address)
        for known in await self.channels(game_id, player):
            if known.kind == EMAIL and known.target == address and known.format == EMAIL:
                return known
        channel = await self._add(game_id, player, EMAIL, address, UNCONFIRMED)
        _, entry = confirm(channel.row, address)
        added = await self.store.notifications.enqueue_for_channel(channel.row, entry, self.clock.seconds())
        if added:
            self.worker.wake()
        return channel

    async def confirm_email(self, game_id: int, player: int, channel_id: int, address: str) -> bool:
        """The owner of `address` followed the link: the channel is used from now on (False:
        it is gone, or it is another address now)."""
        for known in await self.channels(game_id, player):
            if known.row == channel_id and known.kind == EMAIL and known.target == address:
                if known.format != EMAIL:
                    await self._add(game_id, player, EMAIL, address, EMAIL)
                return True
        return False

    async def _add(self, game_id: int, player: int, kind: str, target: str, fmt: str) -> ChannelView:
        limit = self.settings.max_channels
        channel, _ = await self.store.notifications.add_channel(game_id, player, kind, target, fmt, limit)
        if channel is None:
            raise TooManyChannels(
                f"you have {limit} channels already, the most this server allows: remove one first"
            )
        return next(view for view in await self.channels(game_id, player) if view.row == channel.id)

    async def remove(self, game_id: int, player: int, number: int | None = None) -> int:
        """Remove the player's channel `number` (1 to n, as listed), or all of them (None);
        how many went."""
        if number is None:
            return int(await self.store.notifications.remove_channels(game_id, player, None))
        for view in await self.channels(game_id, player):
            if view.number == number:
                return int(await self.store.notifications.remove_channels(game_id, player, view.row))
        return 0

    async def test(self, snapshot: GameSnapshot, player: int) -> int:
        """Queue a test notification to each of the player's channels; how many were queued."""
        entry = events.test_message(snapshot, player, self.clock.seconds(), secrets.token_hex(4))
        added = await self.store.notifications.enqueue([entry], self.clock.seconds())
        if added:
            self.worker.wake()
        return int(added)
