"""The web listener put together: `make_site` returns the twisted.web `Site` to listen with.

Its `.web` is the `WebSite` (`server.web.website`) its pages and API handlers share; close it on
shutdown to end the event streams.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.web.resource import EncodingResourceWrapper
from twisted.web.server import Site

from server.guards.failed_login_log import FailedLoginLog
from server.model.store import TurnArchive
from server.web import api, notification_api, notification_pages, pages
from server.web.contract import GameFinder, GamePlaces
from server.web.routing import PageCompression, Router, WebRoot
from server.web.website import WebSite


def make_site(
    games: GameFinder,
    archive: TurnArchive | None,
    clock: IReactorTime,
    secret: bytes | None = None,
    server_name: str = "tpserver-tae",
    places: GamePlaces | None = None,
    reactor: Any = None,
    notifications=None,
    failure_log: FailedLoginLog | None = None,
) -> Site:
    """The web listener's Site: pages, the JSON API, static files, event streams; with
    `places` (a cluster node, which has a `secret`), the games of the other nodes too; with
    the server's `notifications`, the players' notification channels; failed logins are logged
    through `failure_log` (the server's, shared with TP) or one of the site's own."""
    web = WebSite(games, archive, clock, secret, server_name, notifications, failure_log)
    router = Router()
    api.register(router, web)
    notification_api.register(router, web)
    forms = pages.register(router, web)
    notification_pages.register(router, web, forms.player)
    root = WebRoot(router, pages.not_found(web), pages.refusal_body(web))
    if places is not None:
        from server.web.relay import RelaySigner, WebRelay

        if secret is None:
            raise ValueError("a cluster node's web listener needs the secret every node shares")
        web.places = places
        web.relay = root.relay = WebRelay(
            places, RelaySigner(secret, clock), clock, root.serve_later, pages.refusal_body(web), reactor
        )
    site = Site(EncodingResourceWrapper(root, [PageCompression()]))
    site.displayTracebacks = False
    site.noisy = False  # the server says which listener is where (server.services.listeners)
    site.web = web  # type: ignore[attr-defined]
    return site
