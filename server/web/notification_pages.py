"""The "Notifications" box of a player's own page (/games/NAME/play): their channels, numbered,
a form to add a webhook (or an e-mail address, when the server has an SMTP relay), a button to
remove each and one to send a test message to them all (docs/notifications.md).

The forms post to /games/NAME/play/notify, .../notify-remove and .../notify-test with the page's
CSRF token, like the page's other forms, and come back to the page with a notice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from server.model.refusals import Refused
from server.model.snapshot import GameSnapshot
from server.model.store import StoreError
from server.notifications.channels import WEBHOOK_FORMATS, ChannelError
from server.notifications.confirmation import (
    UNCONFIRMED,
    Confirmation,
    confirmation_entry,
    confirmation_token,
    read_confirmation,
)
from server.views.web.paths import game_path
from server.web.browser import HTML, Browser
from server.web.contract import ServedGame
from server.web.relay import is_secure
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
                confirm = confirmer(self.web, request, game.snapshot, player)
                channel = await service.add_email(game.snapshot.game_id, player, target, confirm)
                if channel.format == UNCONFIRMED:
                    browser.notify(
                        "ok", f"A mail went to {channel.target}: follow its link to confirm the address."
                    )
                else:
                    browser.notify("ok", f"E-mail to {channel.target} added.")
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

    async def test(self, request, name: str) -> bytes:
        """The box's Test button: a test message to each of the player's channels."""
        browser = Browser(self.web, request)
        game, player = self.player(browser, name)
        try:
            browser.form()
        except Refused as refused:
            browser.notify("error", refused.message)
            return self._back(request, name)
        service = self.web.notifications
        wait = test_wait(self.web, game.snapshot.game_id, player)
        if service is None or not service.settings.enabled:
            browser.notify("error", "This server sends no notifications.")
        elif wait:
            browser.notify("error", f"Too many test notifications; the next one in {wait} s.")
        else:
            try:
                queued = await service.test(game.snapshot, player)
            except StoreError:
                browser.notify("error", "The server cannot reach its database; try again soon.")
            else:
                browser.notify(
                    "ok" if queued else "error",
                    f"A test message is on its way to {queued} channel{'s' if queued != 1 else ''}."
                    if queued
                    else "You have no channel to test (an e-mail address counts once it is confirmed).",
                )
        return self._back(request, name)

    @staticmethod
    def _back(request, name: str) -> bytes:
        request.setResponseCode(303)
        request.setHeader(b"location", (game_path(name, "play") + "#notifications").encode())
        return b""


def test_wait(web: WebSite, game_id: int, player: int) -> int:
    """0 when the player may send a test notification now (and it is counted), else the
    seconds until they may: the page's button and the API share the limit
    (`notification_tests_per_hour`)."""
    tests = web.notification_tests
    if tests is None:
        return 0
    key, now = f"{game_id}:{player}", web.now()
    if tests.take(key, now):
        return 0
    return max(1, int(tests.wait(key, now)) + 1)


def confirmer(web: WebSite, request: Any, snapshot: GameSnapshot, player: int):
    """`confirm(channel id, address)` for `Notifications.add_email`: the link that confirms the
    address (on the operator's `public_url`, else on the address this request came to) and the
    mail that carries it."""

    def confirm(channel: int, address: str) -> tuple[str, Any]:
        now = web.now()
        what = Confirmation(snapshot.name, player, channel, address)
        token = confirmation_token(web.sessions.secret, what, now)
        link = public_base(web, request) + game_path(snapshot.name, "notifications", "confirm", token)
        return link, confirmation_entry(snapshot.game_id, what, link, now)

    return confirm


_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


def public_base(web: WebSite, request: Any) -> str:
    """The web listener's address as the player reached it (the operator's `public_url` when
    set: a Host header is the client's to choose)."""
    service = web.notifications
    configured = getattr(getattr(service, "settings", None), "public_url", "") if service else ""
    if configured:
        return configured.rstrip("/")
    host = (request.getHeader(b"host") or b"").decode("latin-1")
    if not _HOST.match(host):
        host = "localhost"
    return ("https://" if is_secure(request) else "http://") + host


class Confirmations:
    """The page a confirmation link opens (GET: a button; POST: confirmed)."""

    def __init__(self, web: WebSite):
        self.web = web

    def _page(self, request, status: int, title: str, text: str, **context) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"content-type", HTML)
        request.setHeader(b"cache-control", b"no-store")
        request.setHeader(b"referrer-policy", b"no-referrer")  # the link is a secret
        page = self.web.templates.get_template("confirm.html").render(
            title=title, text=text, server_name=self.web.server_name, **context
        )
        return page.encode()

    def _read(self, name: str, token: str) -> Confirmation | None:
        what = read_confirmation(self.web.sessions.secret, token, self.web.now())
        game = self.web.games.find(name)
        if what is None or game is None or what.game != game.snapshot.name:
            return None
        return what

    def show(self, request, name: str, token: str) -> bytes:
        what = self._read(name, token)
        if what is None:
            return self._page(
                request, 404, "Link not valid", "This confirmation link is not valid (or it expired)."
            )
        browser = Browser(self.web, request)
        text = f"Send the notifications of game {what.game} to {what.address}?"
        return self._page(
            request, 200, "Confirm your address", text, csrf=browser.csrf(), address=what.address
        )

    async def confirm(self, request, name: str, token: str) -> bytes:
        what = self._read(name, token)
        if what is None:
            return self._page(
                request, 404, "Link not valid", "This confirmation link is not valid (or it expired)."
            )
        browser = Browser(self.web, request)
        try:
            browser.form()
        except Refused as refused:
            return self._page(request, 403, "Refused", refused.message)
        service = self.web.notifications
        game = self.web.game(name)
        try:
            done = service is not None and await service.confirm_email(
                game.snapshot.game_id, what.player, what.channel, what.address
            )
        except StoreError:
            return self._page(
                request, 503, "Try again shortly", "The server cannot reach its database; try again soon."
            )
        if not done:
            return self._page(
                request, 404, "Link not valid", "That address is no longer one of the player's channels."
            )
        return self._page(
            request, 200, "Address confirmed", f"Notifications of game {what.game} go to {what.address}."
        )


def register(router: Router, web: WebSite, player: PlayerOf) -> None:
    forms = NotificationForms(web, player)
    router.add("POST", "/games/{name}/play/notify", forms.add)
    router.add("POST", "/games/{name}/play/notify-remove", forms.remove)
    router.add("POST", "/games/{name}/play/notify-test", forms.test)
    confirmations = Confirmations(web)
    router.add("GET", "/games/{name}/notifications/confirm/{token}", confirmations.show)
    router.add("POST", "/games/{name}/notifications/confirm/{token}", confirmations.confirm)
