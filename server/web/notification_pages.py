"""The "Notifications" box of a player's own page (/games/NAME/play): their channels, a form to
add a webhook or an e-mail address, and a button to remove each (docs/notifications.md).

The forms post to /games/NAME/play/notify and /games/NAME/play/notify-remove with the page's
CSRF token, like the page's other forms, and come back to the page with a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.model.refusals import Refused
from server.model.snapshot import GameSnapshot
from server.model.store import StoreError
from server.notifications.channels import WEBHOOK_FORMATS, ChannelError
from server.web.browser import Browser, game_path
from server.web.contract import ServedGame
from server.web.routing import Router
from server.web.website import WebSite

#: The game and player a browser is logged in as (`server.web.pages.Pages.player`).
PlayerOf = Callable[[Browser, str], tuple[ServedGame, int]]


async def channel_box(web: WebSite, snapshot: GameSnapshot, player: int) -> dict[str, Any] | None:
    """What the box shows; None when the server sends no notifications."""
    service = web.notifications
    if service is None or not service.settings.enabled:
        return None
    try:
        channels = [c.document() for c in await service.channels(snapshot.game_id, player)]
    except StoreError:
        channels = []
    return {
        "channels": channels,
        "formats": WEBHOOK_FORMATS,
        "email": service.settings.email_enabled,
        "full": len(channels) >= service.settings.max_channels,
    }


class NotificationForms:
    def __init__(self, web: WebSite, player: PlayerOf):
        self.web = web
        self.player = player

    async def add(self, request, name: str) -> bytes:
        browser = Browser(self.web, request)
        game, player = self.player(browser, name)
        try:
            fields = browser.form()
        except Refused as refused:
            browser.notify("error", refused.message)
            return self._back(request, name)
        service = self.web.notifications
        try:
            if service is None or not service.settings.enabled:
                raise ChannelError("This server sends no notifications.")
            target = fields.get("target", "")
            if fields.get("kind") == "email":
                await service.add_email(game.snapshot.game_id, player, target)
                browser.notify("ok", f"E-mail to {target} added.")
            else:
                fmt = fields.get("format") or "json"
                await service.add_webhook(game.snapshot.game_id, player, target, fmt)
                browser.notify("ok", f"Webhook ({fmt}) added.")
        except ChannelError as error:
            browser.notify("error", str(error))
        except StoreError:
            browser.notify("error", "The server cannot reach its database; try again soon.")
        return self._back(request, name)

    async def remove(self, request, name: str) -> bytes:
        browser = Browser(self.web, request)
        game, player = self.player(browser, name)
        try:
            fields = browser.form()
        except Refused as refused:
            browser.notify("error", refused.message)
            return self._back(request, name)
        service = self.web.notifications
        try:
            channel = int(fields.get("channel", ""))
        except ValueError:
            channel = -1
        if service is None or channel < 0:
            browser.notify("error", "No such channel.")
        else:
            try:
                removed = await service.remove(game.snapshot.game_id, player, channel)
                browser.notify(
                    "ok" if removed else "error", "Channel removed." if removed else "No such channel."
                )
            except StoreError:
                browser.notify("error", "The server cannot reach its database; try again soon.")
        return self._back(request, name)

    @staticmethod
    def _back(request, name: str) -> bytes:
        request.setResponseCode(303)
        request.setHeader(b"location", (game_path(name, "play") + "#notifications").encode())
        return b""


def register(router: Router, web: WebSite, player: PlayerOf) -> None:
    forms = NotificationForms(web, player)
    router.add("POST", "/games/{name}/play/notify", forms.add)
    router.add("POST", "/games/{name}/play/notify-remove", forms.remove)
