"""The HTML pages: the lobby, a game's public page, a past turn, the history, the player view.

Every page renders from a snapshot through `server.views.web.documents` and a Jinja2 template with
autoescaping on. Forms post with a CSRF token (`server.web.sessions`); the player page's script
posts the same forms with `Accept: application/json` and gets the refusal (the game's reason
and Fail code) as JSON, without a reload. The public page and the player page each hold their
changing part in `#live`, which the script fetches again when the event stream says so.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from markupsafe import Markup

from ruleset import Problem, ProblemCode
from ruleset.kinds import SCORE_KEYS, SCORE_TITLES
from ruleset.orders import ORDER_NAMES
from server.model.names import lookup_key
from server.model.refusals import BAD_LOGIN, NO_COMPUTER_GAMES, RATE_LIMITED, Refused
from server.views.deadline import in_words, local_time_words
from server.views.web.documents import my_view, public_game, summary_document, with_time
from server.views.web.mapsvg import STYLE, map_head, map_key, order_marks, own_marks, owner_colour, render_map
from server.views.web.palette import player_class
from server.views.web.paths import game_path
from server.views.web.scoreplot import score_plot
from server.web import actions
from server.web.api import error_document
from server.web.browser import HTML, Browser, logged_in_player
from server.web.contract import ServedGame
from server.web.live import player_key, public_key, version
from server.web.notification_pages import channel_box
from server.web.routing import HTTPFailure, Router
from server.web.rules import RulesBook
from server.web.sessions import BAD_CSRF
from server.web.website import HERE, WebSite

RECENT_TURNS = 30
STATIC_TYPES = {".css": b"text/css; charset=utf-8", ".js": b"text/javascript; charset=utf-8"}
NOT_LOGGED_IN = Problem(ProblemCode.PERMISSION_DENIED, "Log in to this game first.")


class Pages:
    def __init__(self, web: WebSite):
        self.web = web
        env = web.templates
        env.globals["game_path"] = game_path
        env.globals["score_titles"] = dict(zip(SCORE_KEYS, SCORE_TITLES, strict=True))
        env.filters["duration"] = in_words  # seconds as "3 h 12 min"
        env.filters["when"] = _when  # an ISO 8601 time as "Tue 14 May 2024, 18:20 UTC"
        env.filters["colour"] = owner_colour  # a player id's colour, as the map draws it
        env.filters["player_class"] = player_class  # the class that colours a player's badge
        for page in ("public", "player"):
            env.globals[f"map_key_{page}"] = [
                (title, [(Markup(icon), text) for icon, text in items])
                for title, items in map_key(page == "player")
            ]
        self.rules_book = RulesBook()

    def render(self, request, template: str, status: int = 200, **context) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"content-type", HTML)
        request.setHeader(b"cache-control", b"no-store")
        context.setdefault("server_name", self.web.server_name)
        return self.web.templates.get_template(template).render(**context).encode()

    # -- public pages ----------------------------------------------------------------------

    async def lobby(self, request) -> bytes:
        browser = Browser(self.web, request)
        return self.render(request, "lobby.html", **await self._home(browser), notices=browser.notices())

    async def _home(self, browser: Browser) -> dict:
        """The lobby, a logged-in player's home: their games (`WebSite.my_games`, as `GET
        /api/me` lists them; those waiting for them first), the games that take players, the
        games under way, and the finished ones with their winners."""
        games = await self.web.lobby_entries()
        account = browser.account()
        mine = await self.web.my_games(account) if account else []
        playing = [g for g in mine if not g["over"] and not g["removed"]]
        # waiting for me first; then the nearest deadline first, those without one last
        playing.sort(
            key=lambda g: (not g["waiting_for_me"], g["seconds_left"] < 0, g["seconds_left"], g["game"])
        )
        places = {g["game"]: g["place"] for g in mine}
        running = [g for g in games if not g["over"] and g["name"] not in places]
        open_ = [g for g in running if g["accepting_players"]]
        others = [g for g in running if not g["accepting_players"]]
        starter = self.web.computer_games
        return {
            "games": games,
            "my_games": playing,
            "open_games": open_,
            "other_games": others,
            "finished_games": [g for g in games if g["over"]],
            "places": places,
            "logins": browser.session.logins if browser.session else {},
            "account": account,
            "computer_games": account is not None and starter is not None and starter.offered,
            "csrf": browser.csrf(),
        }

    async def game(self, request, name: str, problem: Problem | None = None) -> bytes:
        game = self.web.game(name)
        snapshot = game.snapshot
        browser = Browser(self.web, request)
        book = await self.web.history(snapshot)
        document = with_time(public_game(snapshot), snapshot, self.web.now())
        picture, body = self.web.public_map(snapshot)
        svg = map_head(picture) + body + "</svg>"
        recent = [
            summary_document(s)
            for s in reversed(book.summaries[max(0, snapshot.turn - RECENT_TURNS) : snapshot.turn])
        ]
        return self.render(
            request,
            "game.html",
            g=document,
            map_svg=Markup(svg),
            recent=recent,
            more_turns=snapshot.turn > RECENT_TURNS,
            login=browser.login(snapshot.name, snapshot),
            csrf=browser.csrf(),
            notices=browser.notices() + ([("error", problem.message)] if problem else []),
            events=game_path(snapshot.name, "events"),
            version=version(public_key(snapshot)),
            status=200 if problem is None else _login_status(problem),
        )

    async def history(self, request, name: str) -> bytes:
        snapshot = self.web.game(name).snapshot
        book = await self.web.history(snapshot)
        turns = [summary_document(s) for s in reversed(book.summaries[: snapshot.turn])]
        return self.render(request, "history.html", name=snapshot.name, turns=turns)

    async def turn(self, request, name: str, turn: str) -> bytes:
        snapshot = self.web.game(name).snapshot
        number = int(turn)
        record, picture = await self.web.past_turn(snapshot, number)
        book = await self.web.history(snapshot)
        return self.render(
            request,
            "turn.html",
            name=snapshot.name,
            turn=number,
            last=snapshot.turn,
            phase=record.state.phase.value,
            map_svg=Markup(render_map(picture, label=f"Galaxy map after turn {number}")),
            summary=summary_document(book.summaries[number]),
        )

    def rules(self, request) -> bytes:
        html = self.rules_book.html()
        if html is None:
            raise HTTPFailure(404, b"This installation has no rules document (docs/rules.md).")
        return self.render(request, "rules.html", rules=Markup(html))

    def rules_folder(self, request, folder: str) -> bytes:
        names = self.rules_book.listing(folder)
        if names is None:
            raise HTTPFailure(404, b"Not found")
        return self.render(request, "rules_folder.html", folder=folder, names=names)

    def rules_file(self, request, folder: str, filename: str) -> bytes:
        found = self.rules_book.file(folder, filename)
        if found is None:
            raise HTTPFailure(404, b"Not found")
        content_type, body = found
        request.setHeader(b"content-type", content_type)
        request.setHeader(b"cache-control", b"public, max-age=300")
        return body

    def map_svg(self, request, name: str) -> bytes:
        snapshot = self.web.game(name).snapshot
        picture, body = self.web.public_map(snapshot)
        request.setHeader(b"content-type", b"image/svg+xml; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        request.setHeader(b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'")
        return (map_head(picture) + STYLE + body + "</svg>").encode()

    def events(self, request, name: str):
        game = self.web.game(name)
        if request.method == b"HEAD":
            return _event_stream_head(request)
        return self.web.feed(game).open(request, public_key)

    # -- logging in ------------------------------------------------------------------------

    async def login(self, request, name: str) -> bytes:
        """Log the browser in to the game. A login reads: a seat the stand-in plays stays its
        (the player page says how to take it back: an order, or the "I am back" button)."""
        game = self.web.game(name)
        browser = Browser(self.web, request)
        snapshot = game.snapshot
        username = ""
        try:
            fields = browser.form()
            username = fields.get("username", "")
            password = fields.get("password", "")
            player = await self.web.logins.check(
                request, snapshot.name, username, lambda: game.authenticate(username, password)
            )
        except Refused as refused:
            return await self.game(request, name, refused.problem)
        mark = game.snapshot.credential_marks.get(player, "")
        browser.add_login(snapshot.name, player, game.snapshot.usernames.get(player, username), mark)
        return self._redirect(request, game_path(snapshot.name, "play"))

    def logout(self, request, name: str) -> bytes:
        browser = Browser(self.web, request)
        try:
            browser.form()
        except Refused:
            raise HTTPFailure(403, BAD_CSRF.message.encode()) from None
        if browser.session is not None:
            browser.session.logins.pop(name, None)
            if not browser.session.logins:
                browser.end_session()
            else:
                browser.start_session(keep_logins=True)  # a new id: no node goes on with the old one
        return self._redirect(request, game_path(name))

    async def join(self, request) -> bytes:
        """The lobby's form: a new account joins a game, or the server's account of that name
        joins it with its password."""
        browser = Browser(self.web, request)
        fields: dict[str, str] = {}
        try:
            fields = browser.form()
            game = self.web.games.find(fields.get("game", ""))
            if game is None:
                raise Refused(Problem(ProblemCode.NO_SUCH_THING, "No such game"))
            if fields.get("password", "") != fields.get("password2", fields.get("password", "")):
                raise Refused(Problem(ProblemCode.FRAME, "The two passwords differ."))
            player = await actions.create_account(self.web, request, game, fields)
        except Refused as refused:
            return await self._lobby_refusal(request, browser, refused, fields)
        return self._joined(request, browser, game, player)

    async def join_game(self, request, name: str) -> bytes:
        """The lobby's Join button: the account this browser is logged in with joins the game."""
        browser = Browser(self.web, request)
        try:
            browser.form()
            game = self.web.game(name)
            account = browser.account()
            if account is None:
                raise Refused(
                    Problem(ProblemCode.PERMISSION_DENIED, "Log in first, or join with a name and password.")
                )
            player = await game.join_account(account, "", "joined on the web")
        except Refused as refused:
            return await self._lobby_refusal(request, browser, refused, {"game": name})
        return self._joined(request, browser, game, player)

    async def _lobby_refusal(
        self, request, browser: Browser, refused: Refused, fields: dict[str, str]
    ) -> bytes:
        status = 429 if refused.problem in RATE_LIMITED else 409
        if refused.problem.code is ProblemCode.FRAME:
            status = 400
        return self.render(
            request,
            "lobby.html",
            status=status,
            **await self._home(browser),
            notices=[("error", refused.message)],
            joining={k: v for k, v in fields.items() if k not in ("password", "password2", "csrf")},
        )

    async def new_computer_game(self, request) -> bytes:
        """The home page's "Play against the computer": a new game, the logged-in account in
        its first seat and the computer players in the others; then its player page."""
        browser = Browser(self.web, request)
        fields: dict[str, str] = {}
        try:
            fields = browser.form()
            account = browser.account()
            if account is None:
                raise Refused(Problem(ProblemCode.PERMISSION_DENIED, "Log in first."))
            starter = self.web.computer_games
            if starter is None:
                raise Refused(NO_COMPUTER_GAMES)
            game = await starter.start(
                account, fields.get("computer_players"), fields.get("level"), fields.get("turn_length")
            )
        except Refused as refused:
            return await self._lobby_refusal(request, browser, refused, fields)
        snapshot = game.snapshot
        key = lookup_key(account)
        player = next(p for p, owner in snapshot.owners.items() if lookup_key(owner) == key)
        return self._joined(request, browser, game, player)

    def _joined(self, request, browser: Browser, game: ServedGame, player: int) -> bytes:
        snapshot = game.snapshot
        username = snapshot.usernames.get(player, "")
        browser.add_login(snapshot.name, player, username, snapshot.credential_marks.get(player, ""))
        browser.notify("ok", f"Welcome, {username}: you play in {snapshot.name}.")
        return self._redirect(request, game_path(snapshot.name, "play"))

    # -- the player view -------------------------------------------------------------------

    def player(self, browser: Browser, name: str) -> tuple[ServedGame, int]:
        return logged_in_player(self.web, browser, name)

    async def play(self, request, name: str) -> bytes:
        browser = Browser(self.web, request)
        game, player = self.player(browser, name)
        snapshot = game.snapshot
        book = await self.web.history(snapshot)
        view = my_view(snapshot, player, book)
        picture, body = self.web.public_map(snapshot)
        svg = map_head(picture, "Galaxy map: click a system to give the chosen fleet its order") + body
        svg += own_marks(_own_leader_cells(snapshot, player), picture.height)
        svg += order_marks(_order_marks(snapshot, view["orders"]), picture.height) + "</svg>"
        public = with_time(public_game(snapshot), snapshot, self.web.now())
        return self.render(
            request,
            "play.html",
            notifications=await channel_box(self.web, snapshot, player),
            g=public,
            me=view,
            map_svg=Markup(svg),
            plot=Markup(score_plot(_score_points(view))),
            csrf=browser.csrf(),
            notices=browser.notices(),
            events=game_path(snapshot.name, "play", "events"),
            version=version(player_key(player)(snapshot)),
        )

    def play_events(self, request, name: str):
        browser = Browser(self.web, request)
        game, player = self.player(browser, name)
        if request.method == b"HEAD":
            return _event_stream_head(request)
        return self.web.feed(game).open(request, player_key(player))

    async def act(self, request, name: str, action: str) -> bytes:
        browser = Browser(self.web, request)
        try:
            game, player = self.player(browser, name)
        except HTTPFailure:
            if browser.wants_json:
                return self._json(request, 403, error_document(NOT_LOGGED_IN))
            raise
        try:
            fields = browser.form()
            snapshot = game.snapshot
            if action == "probe":
                order = actions.read_order(snapshot, fields)
                problem = actions.probe(game, player, order)
                if problem is not None:
                    raise Refused(problem)
                done = "The order can be given."
            elif action == "orders":
                order = actions.read_order(snapshot, fields)
                await actions.place(game, player, order)
                done = _placed(snapshot, order)
            elif action == "remove":
                await actions.remove(game, player, fields)
                done = "Order removed."
            elif action == "back":
                await actions.come_back(game, player)
                done = "You play your own seat again."
            else:
                await actions.finish(game, player)
                done = "You have finished this turn."
        except Refused as refused:
            if browser.wants_json:
                return self._json(request, 409, error_document(refused.problem))
            browser.notify("error", refused.message)
            return self._redirect(request, game_path(name, "play"))
        if browser.wants_json:
            return self._json(request, 200, {"ok": True, "message": done})
        browser.notify("ok", done)
        return self._redirect(request, game_path(name, "play"))

    # -- plumbing --------------------------------------------------------------------------

    def _json(self, request, status: int, document) -> bytes:
        request.setResponseCode(status)
        request.setHeader(b"content-type", b"application/json; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        return json.dumps(document).encode()

    def _redirect(self, request, location: str) -> bytes:
        request.setResponseCode(303)
        request.setHeader(b"location", location.encode())
        return b""

    def static(self, request, filename: str) -> bytes:
        if filename == "map.css":
            body = STYLE.removeprefix("<style>").removesuffix("</style>").encode()
            content_type = STATIC_TYPES[".css"]
        else:
            path = HERE / "static" / filename
            found = STATIC_TYPES.get(Path(filename).suffix)
            if found is None or "/" in filename or not path.is_file():
                raise HTTPFailure(404, b"Not found")
            content_type = found
            body = path.read_bytes()
        request.setHeader(b"content-type", content_type)
        request.setHeader(b"cache-control", b"public, max-age=300")
        return body


def _event_stream_head(request) -> bytes:
    """HEAD of an event stream: its headers, no stream."""
    request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
    request.setHeader(b"cache-control", b"no-store")
    return b""


def _login_status(problem: Problem) -> int:
    """The status of the game page that answers a refused login."""
    if problem == BAD_LOGIN:
        return 401
    if problem in RATE_LIMITED:
        return 429
    return 400 if problem.code == ProblemCode.FRAME else 403


def _placed(snapshot, order) -> str:
    """ "Order placed: Colonize 4, 7." (what the toast shows and a screen reader reads out)."""
    name = ORDER_NAMES.get(order.order_type) if order.order_type in ORDER_NAMES else None
    cell = snapshot.state.board.cell_of_object(order.target)
    where = f" {snapshot.state.board.system_name(cell)}" if cell is not None else ""
    return f"Order placed: {name}{where}." if name else "Order placed."


def _when(iso: str | None) -> str:
    return "" if not iso else local_time_words(datetime.fromisoformat(iso))


def _own_leader_cells(snapshot, player: int) -> list[tuple[int, int]]:
    """Where the player's own leaders stand on the board: (x, y) each."""
    state = snapshot.state
    return [
        state.board.coords[cell]
        for fleet_id, cell in state.leader_at.items()
        if state.fleets[fleet_id].owner == player
    ]


def _order_marks(snapshot, orders: list[dict]) -> list[dict]:
    """The map's marks of the player's own pending orders that have a target."""
    marks = []
    for order in orders:
        if order["x"] is None:
            continue
        fleet = snapshot.state.fleets.get(order["fleet"])
        marks.append(
            {
                "number": order["number"],
                "x": order["x"],
                "y": order["y"],
                "role": order["fleet_role"],
                "kind": fleet.kind if fleet is not None else None,
                "title": f"My order {order['number']}: {order['fleet_name']} #{order['fleet']} → "
                f"{order['type_name']} {order['target_name']}",
            }
        )
    return marks


REFUSAL_CODES = {
    400: ProblemCode.FRAME,
    403: ProblemCode.PERMISSION_DENIED,
    404: ProblemCode.NO_SUCH_THING,
    405: ProblemCode.FRAME,
    408: ProblemCode.FRAME,
    413: ProblemCode.FRAME,
    415: ProblemCode.FRAME,
}
REFUSAL_TITLES = {
    400: "Bad request",
    403: "Refused",
    404: "Not found",
    405: "Not allowed",
    408: "Too slow",
    413: "Too large",
    429: "Too many requests",
    500: "Server error",
}


def refusal_body(web: WebSite):
    """The body of a refusal the web listener makes itself (the relay's, a 405, a 500, a 503):
    a JSON error under /api/ and for a script that asks for JSON, else a page."""

    def body(request, status: int, text: str) -> bytes:
        code = REFUSAL_CODES.get(status, ProblemCode.UNAVAILABLE_TEMPORARILY)
        if request.path.startswith(b"/api/") or b"application/json" in (request.getHeader(b"accept") or b""):
            request.setHeader(b"content-type", b"application/json; charset=utf-8")
            return json.dumps(error_document(Problem(code, text))).encode()
        request.setHeader(b"content-type", HTML)
        title = REFUSAL_TITLES.get(status, "Try again shortly")
        page = web.templates.get_template("error.html").render(
            title=title, text=text, server_name=web.server_name
        )
        return page.encode()

    return body


def not_found(web: WebSite):
    def answer(request) -> HTTPFailure:
        if request.path.startswith(b"/api/"):
            body = json.dumps(error_document(Problem(ProblemCode.NO_SUCH_THING, "No such API path"))).encode()
            return HTTPFailure(404, body, b"application/json; charset=utf-8")
        page = web.templates.get_template("error.html").render(
            title="Not found", text="There is nothing at this address.", server_name=web.server_name
        )
        return HTTPFailure(404, page.encode(), HTML)

    return answer


def _my_game_order(entry: dict) -> tuple:
    """The home page's order of my games: those waiting for me first, then by deadline (the
    nearest first, those without one last), then by name."""
    left = entry["seconds_left"]
    return (not entry["waiting_for_me"], left < 0, left, entry["game"])


def _score_points(view: dict) -> list[tuple[int, tuple[int, ...]]]:
    """(turn, the five scores) of the player's score history, for the plot."""
    return [(p["turn"], tuple(p["scores"][key] for key in SCORE_KEYS)) for p in view["score_history"]]


def register(router: Router, web: WebSite) -> Pages:
    pages = Pages(web)
    router.add("GET", "/", pages.lobby)
    router.add("POST", "/join", pages.join)
    router.add("POST", "/games/new", pages.new_computer_game)
    router.add("GET", "/static/{file}", pages.static)
    router.add("GET", "/rules", pages.rules)
    router.add("GET", "/rules/{folder}/", pages.rules_folder)
    router.add("GET", "/rules/{folder}/{file}", pages.rules_file)
    router.add("GET", "/games/{name}", pages.game)
    router.add("GET", "/games/{name}/history", pages.history)
    router.add("GET", "/games/{name}/turns/{turn:int}", pages.turn)
    router.add("GET", "/games/{name}/map.svg", pages.map_svg)
    router.add("GET", "/games/{name}/events", pages.events)
    router.add("POST", "/games/{name}/login", pages.login)
    router.add("POST", "/games/{name}/logout", pages.logout)
    router.add("POST", "/games/{name}/join", pages.join_game)
    router.add("GET", "/games/{name}/play", pages.play)
    router.add("GET", "/games/{name}/play/events", pages.play_events)
    for action in ("probe", "orders", "remove", "finish", "back"):
        router.add(
            "POST",
            f"/games/{{name}}/play/{action}",
            lambda request, name, a=action: pages.act(request, name, a),
        )
    return pages
