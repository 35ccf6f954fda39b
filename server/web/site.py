"""The web listener put together: `make_site` returns the twisted.web `Site` to listen with.

Its `.web` is the `WebSite` (`server.web.website`) its pages and API handlers share; close it on
shutdown to end the event streams.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.web.resource import EncodingResourceWrapper

from server.config.limits import Limits
from server.guards.connections import DescriptorShare
from server.guards.failed_login_log import FailedLoginLog
from server.guards.login_guard import LoginGuard
from server.guards.proxies import TrustedProxies
from server.model.store import TurnArchive
from server.web import api, notification_api, notification_pages, pages, players
from server.web.contract import ComputerGameStarter, GameFinder, GamePlaces
from server.web.routing import PageCompression, Router, WebRoot
from server.web.transport import GuardedSite, WebGuards
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
    *,
    limits: Limits | None = None,
    login_guard: LoginGuard | None = None,
    proxies: TrustedProxies | None = None,
    share: DescriptorShare | None = None,
    computer_games: ComputerGameStarter | None = None,
) -> GuardedSite:
    """The web listener's Site: pages, the JSON API, static files, event streams; with
    `places` (a cluster node, which has a `secret`), the games of the other nodes too; with
    the server's `notifications`, the players' notification channels.

    Logins, account creations and password changes go through `login_guard` (the server's,
    shared with TP: one brake, one budget per address and account) or one of the site's own;
    failed logins are logged through its log (or `failure_log`). `limits` are the server's
    (`server.web.transport` enforces the web listener's), `proxies` the trusted reverse
    proxies, `share` the descriptors the listeners other than TP share; `computer_games` starts
    the players' games against the computer (None: the server offers none)."""
    limits = limits or Limits()
    if login_guard is None:
        login_guard = LoginGuard(clock, limits)
        if failure_log is not None:
            login_guard.failure_log = failure_log
    proxies = proxies or TrustedProxies()
    web = WebSite(games, archive, clock, secret, server_name, notifications, login_guard, limits)
    web.computer_games = computer_games
    router = Router()
    api.register(router, web)
    players.register_api(router, web)
    notification_api.register(router, web)
    forms = pages.register(router, web)
    notification_pages.register(router, web, forms.player)
    players.register(router, web, forms)
    root = WebRoot(router, pages.not_found(web), pages.refusal_body(web))
    if places is not None:
        from server.web.relay import RelaySigner, WebRelay

        if secret is None:
            raise ValueError("a cluster node's web listener needs the secret every node shares")
        web.places = places
        web.relay = root.relay = WebRelay(
            places,
            RelaySigner(secret, clock),
            clock,
            root.serve_later,
            pages.refusal_body(web),
            reactor,
            token_game=web.token_game,
        )
    guards = WebGuards(
        limits,
        clock,
        proxies,
        body_limit=router.body_limit,
        shape=pages.refusal_body(web),
        share=share,
        login_guard=login_guard,
        exempt_host=_cluster_peer(places),
    )
    site = GuardedSite(EncodingResourceWrapper(root, [PageCompression()]), guards, reactor=reactor or clock)
    site.displayTracebacks = False
    site.noisy = False  # the server says which listener is where (server.services.listeners)
    site.web = web  # type: ignore[attr-defined]
    return site


def _cluster_peer(places: GamePlaces | None):
    """Whether a host is another node of the cluster (its relayed requests carry many clients:
    no per-address limit)."""

    def exempt(host: str) -> bool:
        addresses = getattr(places, "addresses", None) or {}
        return any(str(a).rsplit(":", 1)[0].strip("[]") == host for a in addresses.values() if a)

    return exempt
