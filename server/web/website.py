"""What the web listener's pages and API handlers share: the games it serves and its caches.

`WebSite` is made by `server.web.site.make_site` (close it on shutdown to end the event
streams). Pages and API handlers (`server.web.pages`, `server.web.api`) share what lives
here: the game lookup, one `HistoryBook` and one `LiveFeed` per game, the sessions, and a
small cache of past turns.

On a cluster node (`places`, `server.web.contract.GamePlaces`) the site relays the requests of
games other nodes run to them (`server.web.relay`), lists every node's games in the lobby
(`lobby_entries`), and forgets what it kept of a game that leaves this node (`forget`).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime

from ruleset import visible_to
from server.config.limits import Limits
from server.guards.login_guard import LoginGuard
from server.guards.rates import per_window
from server.model.names import lookup_key
from server.model.snapshot import GameSnapshot
from server.model.store import TurnArchive, TurnRecord
from server.views.web.documents import lobby_entry, my_game_entry, public_galaxy
from server.views.web.galaxy import Galaxy, galaxy
from server.views.web.history import HistoryBook
from server.views.web.mapsvg import SystemPainter, map_body
from server.web.contract import ComputerGameStarter, GameFinder, GamePlaces, RatingBoard, ServedGame
from server.web.live import LiveFeed
from server.web.logins import WebLogins
from server.web.routing import HTTPFailure
from server.web.sessions import SessionStore

HERE = Path(__file__).parent
PAST_TURNS_KEPT = 16


class WebSite:
    def __init__(
        self,
        games: GameFinder,
        archive: TurnArchive | None,
        clock: IReactorTime,
        secret: bytes | None = None,
        server_name: str = "tpserver-tae",
        notifications=None,
        login_guard: LoginGuard | None = None,
        limits: Limits | None = None,
    ):
        self.games = games
        self.notifications = notifications  # server.notifications.service.Notifications, or None
        self.archive = archive
        self.clock = clock
        self.server_name = server_name
        revocations = archive.web_sessions if archive is not None else None
        self.sessions = SessionStore(clock, secret, revocations=revocations)
        #: the ratings across games (`RatingBoard`: the store's), None when the store keeps none
        self.ratings: RatingBoard | None = getattr(archive, "ratings", None)
        self.limits = limits or Limits()
        # test notifications a player may ask for (a test is a POST to a third party)
        self.notification_tests = per_window(self.limits.notification_tests_per_hour, 3600)
        self.logins = WebLogins(login_guard or LoginGuard(clock, self.limits), clock, self.sessions.secret)
        self.books: dict[int, HistoryBook] = {}
        self.feeds: dict[int, LiveFeed] = {}
        self.painters: dict[int, SystemPainter] = {}
        self._past: OrderedDict[tuple[int, int], tuple[TurnRecord, Galaxy]] = OrderedDict()
        self.places: GamePlaces | None = None
        self.relay: Any = None  # server.web.relay.WebRelay, on a cluster node
        # starts games against the computer (server.web.contract.ComputerGameStarter), or None
        self.computer_games: ComputerGameStarter | None = None
        self.templates = Environment(
            loader=FileSystemLoader(str(HERE / "templates")),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def now(self) -> float:
        return self.clock.seconds()

    def game(self, name: str) -> ServedGame:
        game = self.games.find(name) if name else None
        if game is None:
            raise HTTPFailure(404, b"No such game")
        return game

    def book(self, snapshot: GameSnapshot) -> HistoryBook:
        book = self.books.get(snapshot.game_id)
        if book is None:
            book = self.books[snapshot.game_id] = HistoryBook(self.archive, snapshot.game_id)
        return book

    async def history(self, snapshot: GameSnapshot) -> HistoryBook:
        book = self.book(snapshot)
        await book.ensure(snapshot)
        return book

    def painter(self, snapshot: GameSnapshot) -> SystemPainter:
        """The drawn systems of one game's maps, reused from snapshot to snapshot."""
        painter = self.painters.get(snapshot.game_id)
        if painter is None:
            painter = self.painters[snapshot.game_id] = SystemPainter()
        return painter

    def public_map(self, snapshot: GameSnapshot) -> tuple[Galaxy, str]:
        """The public map and its systems and outlines drawn: once per state, as snapshots follow
        each other within a turn (an order, a finished flag) with the same state."""
        picture = public_galaxy(snapshot)
        body = snapshot.of_state(("web", "map body"), lambda: map_body(picture, self.painter(snapshot)))
        return picture, body

    def feed(self, game: ServedGame) -> LiveFeed:
        game_id = game.snapshot.game_id
        feed = self.feeds.get(game_id)
        if feed is None:
            feed = self.feeds[game_id] = LiveFeed(game, self.clock)
        return feed

    async def past_turn(self, snapshot: GameSnapshot, turn: int) -> tuple[TurnRecord, Galaxy]:
        """The stored record of played turn `turn` (its TP number: the first is 0; the record
        is the state after it ended) and its public map; HTTPFailure 404 otherwise."""
        if not 0 <= turn < snapshot.turn or self.archive is None:
            raise HTTPFailure(404, b"No such turn")
        key = (snapshot.game_id, turn)
        cached = self._past.get(key)
        if cached is None:
            # the archive counts the turns played: turn N is the (N + 1)-th
            record = await defer.maybeDeferred(self.archive.turn_record, snapshot.game_id, turn + 1)
            if record is None:
                raise HTTPFailure(404, b"No such turn")
            cached = (record, galaxy(record.state.board, visible_to(record.state, 0)))
            self._past[key] = cached
            while len(self._past) > PAST_TURNS_KEPT:
                self._past.popitem(last=False)
        else:
            self._past.move_to_end(key)
        return cached

    async def lobby_entries(self, request: Any = None) -> list[dict[str, Any]]:
        """The lobby: every game of this node and, on a cluster node, of the others (not when
        `request` is another node asking for this node's games)."""
        from server.web.relay import relayed_from

        now = self.now()
        entries = [lobby_entry(game.snapshot, now) for game in self.games.ordered()]
        if self.relay is None or self.places is None or (request is not None and relayed_from(request)):
            local_default = self.games.find(None)
            return _marked(entries, local_default.snapshot.name if local_default is not None else None)
        known = {entry["name"] for entry in entries}
        for entry in await self.relay.listings():  # a game moving may be listed twice
            if entry["name"] not in known:
                known.add(entry["name"])
                entries.append(entry)
        default = self.places.default_name()
        return _marked(sorted(entries, key=lambda e: (e["name"] != default, e["name"])), default)

    async def my_games(self, account: str, request: Any = None) -> list[dict[str, Any]]:
        """Every game the account plays (`my_game_entry`): `GET /api/me` and the home page list
        them. On a cluster node, those of the other nodes too, each from its owner (not when
        `request` is another node asking on the account's behalf for this node's games)."""
        from server.web.relay import relayed_from

        entries = self.my_games_here(account)
        asked_for = relayed_from(request) if request is not None else None
        if self.relay is None or (asked_for is not None and asked_for.account is not None):
            return entries
        known = {entry["game"] for entry in entries}
        for entry in await self.relay.listings(account):  # a game moving may be listed twice
            if entry["game"] not in known:
                known.add(entry["game"])
                entries.append(entry)
        return entries

    def token_game(self, request: Any) -> str | None:
        """The game a valid token of the request (`Authorization: Bearer`) was issued for."""
        from server.web.sessions import bearer_token

        token = bearer_token(request)
        found = self.sessions.read_token(token) if token is not None else None
        return found[0] if found is not None else None

    def my_games_here(self, account: str) -> list[dict[str, Any]]:
        """The games of this node the account plays (`my_game_entry`)."""
        now = self.now()
        key = lookup_key(account)
        games = []
        for game in self.games.ordered():
            snapshot = game.snapshot
            for player, owner in snapshot.owners.items():
                if lookup_key(owner) == key:
                    games.append(my_game_entry(snapshot, player, now))
        return games

    def forget(self, game_id: int) -> None:
        """The game left this node (a cluster handed it over): its event streams end (the
        pages reconnect, to its new owner) and nothing kept of it is used again."""
        feed = self.feeds.pop(game_id, None)
        if feed is not None:
            feed.close()
        self.books.pop(game_id, None)
        self.painters.pop(game_id, None)

    def start(self) -> defer.Deferred:
        """Read what must be read before the first request (the sessions that ended)."""
        return self.sessions.start()

    def close(self) -> None:
        self.sessions.stop()
        for feed in self.feeds.values():
            feed.close()


def _marked(entries: list[dict[str, Any]], default: str | None) -> list[dict[str, Any]]:
    """Each entry says whether it is the server's default game (a login without @GAME)."""
    for entry in entries:
        entry["default"] = entry["name"] == default
    return entries
