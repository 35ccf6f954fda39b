"""The JSON API under /api/: the public game, a player's own view and orders, and their writes.

The API is described by an OpenAPI 3.1 document, server/web/openapi.json, served at
GET /api/openapi.json (docs/web.md).

Reads: GET /api/games, /api/games/NAME, /api/games/NAME/history, /api/games/NAME/turns/N (public),
/api/games/NAME/me and /api/games/NAME/orders (the caller's own). Writes (POST, JSON bodies):
/api/games/NAME/orders, /orders/probe, /orders/remove, /finish, /token, /accounts, /password,
and the caller's seat: POST /back ("I am back": the stand-in stops playing it), POST /vacation
{"days": N} (DELETE /vacation ends it), POST /resign {"confirm": true}; GET /seat reads it
(`server.model.attendance`). No read and no login (HTTP Basic, a token, getting a token) takes
a seat back from the stand-in: only an order, /finish and /back do.
A caller authenticates with HTTP Basic (account name and password, as over TP) or with
`Authorization: Bearer TOKEN` from POST /api/games/NAME/token. Every refusal is
`{"error": {"code": N, "name": "...", "message": "..."}}` with TP's Fail code and text.
"""

from __future__ import annotations

import base64
import binascii
import json
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from ruleset import Problem, ProblemCode
from server.model.names import lookup_key
from server.model.refusals import BAD_LOGIN, NO_COMPUTER_GAMES, RATE_LIMITED, REMOVED, REMOVED_LOGIN, Refused
from server.model.snapshot import GameSnapshot
from server.model.store import StoreUnavailable
from server.views.web.documents import (
    my_orders,
    my_view,
    public_game,
    public_systems,
    seat_document,
    summary_document,
    system_document,
    with_time,
)
from server.web import actions
from server.web.logins import ACCOUNTS
from server.web.routing import JSON_BODY, UNAVAILABLE, HTTPFailure, Router
from server.web.sessions import bearer_token, same
from server.web.website import WebSite

JSON = b"application/json; charset=utf-8"
STATUS = {
    ProblemCode.FRAME: 400,
    ProblemCode.UNAVAILABLE_PERMANENTLY: 409,
    ProblemCode.UNAVAILABLE_TEMPORARILY: 409,
    ProblemCode.NO_SUCH_THING: 404,
    ProblemCode.PERMISSION_DENIED: 403,
}
NO_CREDENTIALS = Problem(
    ProblemCode.PERMISSION_DENIED,
    "Log in with HTTP Basic (account name and password) or Authorization: Bearer TOKEN.",
)
TOKEN_NEEDS_PASSWORD = Problem(
    ProblemCode.PERMISSION_DENIED,
    "A token is got with HTTP Basic (account name and password); another token is not enough.",
)
PASSWORD_NEEDS_PASSWORD = Problem(
    ProblemCode.PERMISSION_DENIED,
    "Changing the password needs HTTP Basic with the current password (account name and password); "
    "a token is not enough.",
)
BAD_TOKEN = Problem(
    ProblemCode.PERMISSION_DENIED, "That token is not valid for this game (or it has expired)."
)
REVOKED_TOKEN = Problem(
    ProblemCode.PERMISSION_DENIED,
    "That token was revoked: the password changed since it was issued. Get a new one with the password.",
)
NOT_JSON = Problem(ProblemCode.FRAME, "Send a JSON object with Content-Type: application/json.")
NO_SUCH_GAME = Problem(ProblemCode.NO_SUCH_THING, "No such game")
NO_SUCH_TURN = Problem(ProblemCode.NO_SUCH_THING, "No such turn")
MAX_BODY = JSON_BODY
#: How deeply a JSON document may nest (the API's are at most three deep).
MAX_DEPTH = 16
TOO_DEEP = Problem(ProblemCode.FRAME, f"The JSON document nests more than {MAX_DEPTH} deep.")


def encode(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def error_document(problem: Problem) -> dict[str, Any]:
    code = ProblemCode(problem.code)
    return {"error": {"code": int(code), "name": code.name, "message": problem.message}}


def refusal(problem: Problem) -> HTTPFailure:
    needs_login = (
        BAD_LOGIN,
        NO_CREDENTIALS,
        BAD_TOKEN,
        REVOKED_TOKEN,
        TOKEN_NEEDS_PASSWORD,
        PASSWORD_NEEDS_PASSWORD,
    )
    status = 401 if problem in needs_login else STATUS.get(problem.code, 400)
    headers = {b"www-authenticate": b'Bearer realm="tae"'} if status == 401 else {}
    if problem in RATE_LIMITED:
        status, headers = 429, {b"retry-after": b"60"}
    return HTTPFailure(status, encode(error_document(problem)), JSON, headers)


def answer(request, document: Any) -> bytes:
    request.setHeader(b"content-type", JSON)
    request.setHeader(b"cache-control", b"no-store")
    return encode(document)


def json_fields(request) -> dict[str, Any]:
    """The request's JSON object (at most `MAX_BODY` bytes, `MAX_DEPTH` deep, strict UTF-8:
    no unpaired surrogate); a FRAME refusal otherwise."""
    content_type = (request.getHeader(b"content-type") or b"").split(b";")[0].strip().lower()
    if content_type != b"application/json":
        raise refusal(NOT_JSON)
    if request.content is not None:
        request.content.seek(0)
    raw = request.content.read(MAX_BODY + 1) if request.content is not None else b""
    if len(raw) > MAX_BODY:
        raise refusal(Problem(ProblemCode.FRAME, "The request body is too large."))
    if not raw.strip():
        return {}
    try:
        fields = msgspec.json.decode(raw)
    except RecursionError:
        raise refusal(TOO_DEEP) from None
    except (msgspec.DecodeError, ValueError, UnicodeError):
        raise refusal(NOT_JSON) from None
    if not isinstance(fields, dict):
        raise refusal(NOT_JSON)
    if _depth(fields) > MAX_DEPTH:
        raise refusal(TOO_DEEP)
    return fields


def _depth(value: Any, level: int = 1) -> int:
    """How deeply `value` nests (1: not at all), counted up to MAX_DEPTH + 1."""
    if level > MAX_DEPTH:
        return level
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    deepest = level
    for child in children:
        if isinstance(child, dict | list):
            deepest = max(deepest, _depth(child, level + 1))
            if deepest > MAX_DEPTH:
                break
    return deepest


def basic_credentials(request, missing: Problem = NO_CREDENTIALS) -> tuple[str, str]:
    """The account name and password of an ``Authorization: Basic`` header, or the refusal
    `missing` (what the caller must send instead)."""
    header = (request.getHeader(b"authorization") or b"").strip()
    scheme, _, value = header.partition(b" ")
    if scheme.lower() != b"basic":
        raise refusal(missing)
    try:
        username, sep, password = (
            base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        )
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise refusal(missing) from None
    if not sep:
        raise refusal(missing)
    return username, password


class Api:
    def __init__(self, web: WebSite):
        self.web = web

    def game(self, name: str):
        game = self.web.games.find(name) if name else None
        if game is None:
            raise refusal(NO_SUCH_GAME)
        return game

    async def caller(self, request, game, allow_token: bool = True) -> int:
        """The player id of the request's credentials, or a refusal. A password (HTTP Basic)
        goes through the login brake and is verified once (`server.web.logins`)."""
        header = (request.getHeader(b"authorization") or b"").strip()
        token = bearer_token(request)
        snapshot = game.snapshot
        if token is not None and allow_token:
            found = self.web.sessions.read_token(token)
            if found is None or found[0] != snapshot.name or not snapshot.state.has_player(found[1]):
                raise refusal(BAD_TOKEN)
            if not same(found[2], snapshot.credential_marks.get(found[1], "")):
                raise refusal(REVOKED_TOKEN)  # the password changed since the token was issued
            self._not_removed(snapshot, found[1])
            return found[1]
        username, password = basic_credentials(
            request, NO_CREDENTIALS if allow_token else TOKEN_NEEDS_PASSWORD
        )
        logins = self.web.logins
        player = logins.remembered(snapshot.name, header, snapshot.credential_marks)
        if player is not None:
            # the answer the password would get now (the game's own login refuses the same)
            if player in snapshot.removed_players:
                raise refusal(REMOVED_LOGIN)
            return player
        player = await logins.check(
            request, snapshot.name, username, lambda: game.authenticate(username, password)
        )
        logins.remember(snapshot.name, header, player, game.snapshot.credential_marks.get(player, ""))
        return player

    @staticmethod
    def _not_removed(snapshot: GameSnapshot, player: int) -> None:
        """A removed player's token is refused; one who resigned still reads their game (the
        game refuses their orders, with RESIGNED)."""
        if player in snapshot.removed_players:
            raise refusal(REMOVED)

    async def account(self, request) -> str:
        """The name of the caller's server account: HTTP Basic (name and password, through the
        login brake, verified once: `server.web.logins`) or a token of any of its games."""
        header = (request.getHeader(b"authorization") or b"").strip()
        token = bearer_token(request)
        if token is not None:
            found = self.web.sessions.read_token(token)
            game = self.web.games.find(found[0]) if found is not None else None
            if found is None or game is None or not game.snapshot.state.has_player(found[1]):
                raise refusal(BAD_TOKEN)
            snapshot = game.snapshot
            if not same(found[2], snapshot.credential_marks.get(found[1], "")):
                raise refusal(REVOKED_TOKEN)
            self._not_removed(snapshot, found[1])
            return snapshot.owners.get(found[1], "")
        username, password = basic_credentials(request)
        accounts = self.web.games.accounts
        logins = self.web.logins
        marks = _AccountMarks(accounts)
        name = logins.remembered(ACCOUNTS, header, marks)
        if name is not None:
            return name
        name = await logins.check(
            request, ACCOUNTS, username, lambda: accounts.authenticate(username, password)
        )
        logins.remember(ACCOUNTS, header, name, marks.get(name))
        return name

    async def my_games(self, request) -> bytes:
        """`GET /api/me`: the caller's account and every game it plays here
        (`server.views.web.documents.my_game_entry`; on a cluster, on every node), and its
        accounts kept apart (revision 0007a) that a login with their password would join to it.
        Another node asking on an account's behalf (it checked the caller) gets this node's
        games of that account."""
        from server.web.relay import relayed_from

        asked_for = relayed_from(request)
        if asked_for is not None and asked_for.account is not None:
            games = self.web.my_games_here(asked_for.account)
            return answer(request, {"account": asked_for.account, "games": games, "kept_apart": []})
        name = await self.account(request)
        games = await self.web.my_games(name, request)
        return answer(
            request, {"account": name, "games": games, "kept_apart": self.web.games.accounts.kin(name)}
        )

    async def join(self, request, name: str) -> bytes:
        """`POST /api/games/NAME/join`: the caller's account joins the game (201, its player)."""
        game = self.game(name)
        json_fields(request)
        account = await self.account(request)
        player = await game.join_account(account, "", "joined through the API")
        request.setResponseCode(201)
        return answer(request, {"game": game.snapshot.name, "player": player, "name": account})

    async def new_computer_game(self, request) -> bytes:
        """`POST /api/games`: a new game of the caller's account against the computer
        (`{"computer_players": 1..5, "level": "easy"|"normal"|"hard", "turn_length": seconds}`);
        201 `{"game", "player", "name"}`, the account's seat (`server.admin.computer_games`)."""
        fields = json_fields(request)
        account = await self.account(request)
        starter = self.web.computer_games
        if starter is None or not starter.offered:
            raise refusal(NO_COMPUTER_GAMES)
        players, level = fields.get("computer_players"), fields.get("level", "normal")
        game = await starter.start(account, players, level, fields.get("turn_length", 86400))
        snapshot = game.snapshot
        player = next(p for p, owner in snapshot.owners.items() if lookup_key(owner) == lookup_key(account))
        request.setResponseCode(201)
        name = snapshot.usernames.get(player, account)
        return answer(request, {"game": snapshot.name, "player": player, "name": name})

    # -- reads -----------------------------------------------------------------------------

    async def games(self, request) -> bytes:
        return answer(request, {"games": await self.web.lobby_entries(request)})

    async def public(self, request, name: str) -> bytes:
        snapshot = self.game(name).snapshot
        book = await self.web.history(snapshot)
        document = with_time(public_game(snapshot), snapshot, self.web.now())
        document["systems"] = public_systems(snapshot)
        last = book.summaries[snapshot.turn - 1] if 0 < snapshot.turn <= book.known else None
        document["last_turn"] = summary_document(last) if last else None
        return answer(request, document)

    async def history(self, request, name: str) -> bytes:
        snapshot = self.game(name).snapshot
        book = await self.web.history(snapshot)
        return answer(request, {"turns": [summary_document(s) for s in book.summaries[: snapshot.turn]]})

    async def turn(self, request, name: str, turn: str) -> bytes:
        snapshot = self.game(name).snapshot
        number = int(turn)
        try:
            record, picture = await self.web.past_turn(snapshot, number)
        except HTTPFailure:
            raise refusal(NO_SUCH_TURN) from None
        book = await self.web.history(snapshot)
        return answer(
            request,
            {
                "name": snapshot.name,
                "turn": number,
                "phase": record.state.phase.value,
                "width": picture.width,
                "height": picture.height,
                "systems": [system_document(s) for s in picture.systems],
                "summary": summary_document(book.summaries[number]),
            },
        )

    async def me(self, request, name: str) -> bytes:
        game = self.game(name)
        player = await self.caller(request, game)
        snapshot = game.snapshot
        book = await self.web.history(snapshot)
        return answer(request, my_view(snapshot, player, book))

    async def orders(self, request, name: str) -> bytes:
        game = self.game(name)
        player = await self.caller(request, game)
        return answer(request, {"turn": game.snapshot.turn, "orders": my_orders(game.snapshot, player)})

    # -- writes ----------------------------------------------------------------------------

    async def insert(self, request, name: str) -> bytes:
        game = self.game(name)
        fields = json_fields(request)
        player = await self.caller(request, game)
        order = actions.read_order(game.snapshot, fields)
        slot = await actions.place(game, player, order)
        request.setResponseCode(201)
        return answer(request, {"slot": slot, "orders": my_orders(game.snapshot, player)})

    async def probe(self, request, name: str) -> bytes:
        game = self.game(name)
        fields = json_fields(request)
        player = await self.caller(request, game)
        problem = actions.probe(game, player, actions.read_order(game.snapshot, fields))
        if problem is not None:
            raise Refused(problem)
        return answer(request, {"ok": True})

    async def remove(self, request, name: str) -> bytes:
        game = self.game(name)
        fields = json_fields(request)
        player = await self.caller(request, game)
        await actions.remove(game, player, fields)
        return answer(request, {"orders": my_orders(game.snapshot, player)})

    async def finish(self, request, name: str) -> bytes:
        game = self.game(name)
        json_fields(request)
        player = await self.caller(request, game)
        await actions.finish(game, player)
        return answer(request, {"finished": True, "turn": game.snapshot.turn})

    async def token(self, request, name: str) -> bytes:
        game = self.game(name)
        json_fields(request)
        player = await self.caller(request, game, allow_token=False)
        snapshot = game.snapshot
        mark = snapshot.credential_marks.get(player, "")
        return answer(request, {"token": self.web.sessions.issue_token(snapshot.name, player, mark)})

    # -- the caller's seat (server.model.attendance) --------------------------------------------

    async def seat(self, request, name: str) -> bytes:
        game = self.game(name)
        player = await self.caller(request, game)
        return answer(request, seat_answer(game.snapshot, player))

    async def back(self, request, name: str) -> bytes:
        """The caller says "I am back": they play their own seat again (an absence or a vacation
        ends); refused as `Game.come_back` refuses, like the API's other writes."""
        game = self.game(name)
        json_fields(request)
        player = await self.caller(request, game)
        await actions.come_back(game, player)
        return answer(request, seat_answer(game.snapshot, player))

    async def vacation(self, request, name: str) -> bytes:
        game = self.game(name)
        fields = json_fields(request)
        player = await self.caller(request, game)
        await actions.start_vacation(game, player, fields)
        return answer(request, seat_answer(game.snapshot, player))

    async def end_vacation(self, request, name: str) -> bytes:
        game = self.game(name)
        player = await self.caller(request, game)
        await actions.end_vacation(game, player)
        return answer(request, seat_answer(game.snapshot, player))

    async def resign(self, request, name: str) -> bytes:
        game = self.game(name)
        fields = json_fields(request)
        player = await self.caller(request, game)
        await actions.resign(game, player, fields)
        return answer(request, seat_answer(game.snapshot, player))

    async def password(self, request, name: str) -> bytes:
        """Change the caller's password: HTTP Basic with the current one (never a token),
        ``{"new_password": "..."}``; 204 once the new hash is stored."""
        game = self.game(name)
        fields = json_fields(request)
        new_password = fields.get("new_password")
        if not isinstance(new_password, str):
            raise refusal(Problem(ProblemCode.FRAME, 'Send {"new_password": "..."}.'))
        username, password = basic_credentials(request, PASSWORD_NEEDS_PASSWORD)
        await self.web.logins.check(
            request,
            game.snapshot.name,
            username,
            lambda: game.change_password(username, password, new_password),
        )
        request.setResponseCode(204)
        return b""

    async def accounts(self, request, name: str) -> bytes:
        game = self.game(name)
        player = await actions.create_account(self.web, request, game, json_fields(request))
        request.setResponseCode(201)
        return answer(request, {"player": player})


class _AccountMarks:
    """The credential marks of the server's accounts, by name (what `remembered` compares)."""

    def __init__(self, accounts) -> None:
        self._accounts = accounts

    def get(self, name: str, default: str = "") -> str:
        return self._accounts.credential_mark(name) or default


def seat_answer(snapshot: GameSnapshot, player: int) -> dict[str, Any]:
    """The caller's own seat (`seat_document`) with the game's two settings about seats."""
    return {
        "game": snapshot.name,
        "player": player,
        **seat_document(snapshot, player),
        "vacation_days_max": snapshot.setup.vacation_days_max,
        "absent_after_missed_turns": snapshot.setup.absent_after_missed_turns,
    }


def _refusals(handler):
    """Turn a `Refused` from any step into its JSON error."""

    async def run(request, *parts):
        try:
            result = handler(request, *parts)
            if not isinstance(result, bytes):
                result = await result
            return result
        except Refused as refused:
            raise refusal(refused.problem) from None
        except StoreUnavailable:
            # Not stored (the database is away, or the game just moved to another node); the
            # reason, which may name the database's address, goes to the log only (routing).
            problem = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, UNAVAILABLE.decode())
            raise HTTPFailure(503, encode(error_document(problem)), JSON, {b"retry-after": b"2"}) from None

    return run


@cache
def openapi_bytes() -> bytes:
    """The OpenAPI 3.1 description of this API (server/web/openapi.json, in the wheel)."""
    return resources.files("server.web").joinpath("openapi.json").read_bytes()


def openapi(request) -> bytes:
    request.setHeader(b"content-type", JSON)
    request.setHeader(b"cache-control", b"public, max-age=3600")
    return openapi_bytes()


def register(router: Router, web: WebSite) -> None:
    api = Api(web)
    router.add("GET", "/api/openapi.json", openapi)
    routes = [
        ("GET", "/api/me", api.my_games),
        ("GET", "/api/games", api.games),
        ("POST", "/api/games", api.new_computer_game),
        ("GET", "/api/games/{name}", api.public),
        ("GET", "/api/games/{name}/history", api.history),
        ("GET", "/api/games/{name}/turns/{turn:int}", api.turn),
        ("GET", "/api/games/{name}/me", api.me),
        ("GET", "/api/games/{name}/orders", api.orders),
        ("POST", "/api/games/{name}/orders", api.insert),
        ("POST", "/api/games/{name}/orders/probe", api.probe),
        ("POST", "/api/games/{name}/orders/remove", api.remove),
        ("POST", "/api/games/{name}/finish", api.finish),
        ("POST", "/api/games/{name}/token", api.token),
        ("POST", "/api/games/{name}/accounts", api.accounts),
        ("POST", "/api/games/{name}/join", api.join),
        ("GET", "/api/games/{name}/seat", api.seat),
        ("POST", "/api/games/{name}/back", api.back),
        ("POST", "/api/games/{name}/vacation", api.vacation),
        ("DELETE", "/api/games/{name}/vacation", api.end_vacation),
        ("POST", "/api/games/{name}/resign", api.resign),
        ("POST", "/api/games/{name}/password", api.password),
    ]
    for method, pattern, handler in routes:
        router.add(method, pattern, _refusals(handler))
