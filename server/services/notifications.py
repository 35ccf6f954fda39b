"""The server's notifications: made before the games are loaded, delivering once it serves.

`NotificationsService` makes the `Notifications` (when they are on and the store keeps an
outbox) before the games come to life, so that the operator desk hands every game to them; it
stops them after the games have stopped, so that the events of the last turns stored are in the
outbox and the sends in flight end. `NotificationDelivery` starts the delivery worker only when
the server serves: a start that fails sends nothing.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import Service

from server.config.file import ServerConfig
from server.services.listeners import Listeners, first_web_url
from server.services.ordered import AsyncService
from server.services.store import StoreService


def keeps_operations(store: Any) -> bool:
    """Whether `store` is a database store, with the operator desk's lease and request queue
    (a store made in memory, for tests, has neither desk nor notifications)."""
    return store.requests is not None


class NotificationsService(AsyncService):
    """The server's `Notifications` (`notifications`, once started; None when there are none)."""

    def __init__(self, config: ServerConfig, reactor, store: StoreService, web: Listeners | None = None):
        self.setName("notifications")
        self.config = config
        self.reactor = reactor
        self._store = store
        self._web = web
        self.notifications: Any = None  # server.notifications.service.Notifications

    async def start(self) -> None:
        store = self._store.store
        settings = self.config.notifications
        if not settings.enabled or not keeps_operations(store) or store.notifications is None:
            return
        from server.notifications.service import Notifications

        node = self.config.node
        self.notifications = Notifications(
            store, self.reactor, settings, name=node.node if node else None, site_url=self.site_url
        )

    def site_url(self) -> str | None:
        """Where players reach the web pages, for the link in every message: the operator's
        `[notifications] public_url`, else this server's first web listener (None: no pages)."""
        return self.config.notifications.public_url or first_web_url(self._web)

    async def stop(self) -> None:
        notifications, self.notifications = self.notifications, None
        if notifications is not None:
            await notifications.stop()


class NotificationDelivery(Service):
    """Delivers the notifications (starts their worker) while the server serves."""

    def __init__(self, notifications: NotificationsService):
        self.setName("notification delivery")
        self._notifications = notifications

    def startService(self) -> None:
        super().startService()
        if self._notifications.notifications is not None:
            self._notifications.notifications.start()
