"""The ratings on the web: `/players` (the table), `/players/NAME` (an account's rating and
games), and the same as JSON (`GET /api/players`, `GET /api/players/NAME`).

Ratings are read from the store (`store.ratings`: the database's, one truth for every cluster
node; `server.model.ratings` says how they are made). An account's running games are the games
this node runs (as `GET /api/me`). Pages and API answers render the same documents
(`server.views.web.ratings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet import defer

from server.model.names import lookup_key
from server.model.ratings import PlayerRecord
from server.views.web.paths import player_path
from server.views.web.ratings import player_document, playing_document, table_document
from server.web.api import answer
from server.web.routing import HTTPFailure, Router
from server.web.website import WebSite

if TYPE_CHECKING:
    from server.web.pages import Pages

NO_SUCH_PLAYER = b"No such player"


class Players:
    def __init__(self, web: WebSite):
        self.web = web

    async def table(self) -> dict[str, Any]:
        board = self.web.ratings
        lines = [] if board is None else await defer.maybeDeferred(board.table)
        return table_document(lines)

    async def player(self, name: str) -> dict[str, Any]:
        board = self.web.ratings
        record: PlayerRecord | None = None
        if board is not None and lookup_key(name) is not None:
            record = await defer.maybeDeferred(board.player, name)
        if record is None:
            raise HTTPFailure(404, NO_SUCH_PLAYER)
        key = lookup_key(record.name)
        playing = [
            playing_document(snapshot, player)
            for snapshot in (game.snapshot for game in self.web.games.ordered())
            if not snapshot.over
            for player, owner in snapshot.owners.items()
            if lookup_key(owner) == key
        ]
        return player_document(record, playing)

    async def table_api(self, request) -> bytes:
        return answer(request, await self.table())

    async def player_api(self, request, name: str) -> bytes:
        return answer(request, await self.player(name))


class PlayerPages(Players):
    def __init__(self, web: WebSite, pages: Pages):
        super().__init__(web)
        self.pages = pages
        web.templates.globals["player_path"] = player_path

    async def table_page(self, request) -> bytes:
        return self.pages.render(request, "players.html", table=await self.table())

    async def player_page(self, request, name: str) -> bytes:
        return self.pages.render(request, "players_one.html", p=await self.player(name))


def register_api(router: Router, web: WebSite) -> None:
    """`GET /api/players` and `GET /api/players/NAME`."""
    players = Players(web)
    router.add("GET", "/api/players", players.table_api)
    router.add("GET", "/api/players/{name}", players.player_api)


def register(router: Router, web: WebSite, pages: Pages) -> None:
    """`/players` and `/players/NAME` (the pages' renderer is `pages`)."""
    players = PlayerPages(web, pages)
    router.add("GET", "/players", players.table_page)
    router.add("GET", "/players/{name}", players.player_page)
