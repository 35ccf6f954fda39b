"""The web listener of a cluster node relays the requests of games another node runs.

Every page, map, event stream and API call of a game (`/games/NAME...`, `/api/games/NAME...`,
and `POST /join` for the game the form names) is answered by the node that runs the game: a
node that does not run it passes the request to the owner's web listener (the address each
node publishes, `server.database.web_addresses`) and streams the answer back, status, headers,
cookies and body, event streams included. So every read is rendered from the live game and
every write is carried out by its owner, fenced, exactly as on a single server; the browser
or API client sees no difference. The lobby (`/`, `/api/games`) lists the games of every node,
and "my games" (`GET /api/me`, the home page) an account's games on every node (`listings`;
a token's `GET /api/me` goes to the node that runs the token's game, which can check it).

A relayed request carries `X-Tae-Relay`: the relaying node, the client's address and whether
it came over TLS, signed with the web secret that every node shares. The owner uses the
client's address for its brake on password guessing and the TLS flag for its cookies, and never
relays a relayed request again: a game it does not run (any more) is answered with 421, and
the relaying node looks at the database again and retries at the new owner.

While a game has no owner (it is moving, or its node died and the others have not yet claimed
it) a request waits up to `GamePlaces.wait` seconds. A read is sent again to the new owner
when the old one failed; a write is sent again only if it certainly never reached the old
owner (the connection could not be made or the request not sent); otherwise it is answered
503, "it may or may not have been done: look again", the web's form of TP's Fail 3. Nothing
acknowledged is ever lost, and nothing is done twice.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from twisted.internet import defer
from twisted.internet.error import ConnectError, DNSLookupError
from twisted.internet.interfaces import IReactorTime
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.client import Agent, FileBodyProducer, HTTPConnectionPool, ResponseDone, readBody
from twisted.web.http_headers import Headers
from twisted.web.server import NOT_DONE_YET

from server.web.contract import ELSEWHERE, HERE, UNKNOWN, GamePlaces

log = Logger()

RELAY_HEADER = b"x-tae-relay"
NOT_HERE_HEADER = b"x-tae-not-here"
GAME_PATH = re.compile(r"^/(?:api/)?games/([^/]+)(?:/|$)")
# Headers that belong to one connection, not to the request (RFC 9110 §7.6.1), and those the
# relaying node sets itself.
HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-authenticate",
    b"proxy-authorization",
    b"proxy-connection",
    b"te",
    b"trailer",
    b"transfer-encoding",
    b"upgrade",
}
NOT_PASSED_ON = HOP_BY_HOP | {b"host", b"content-length", b"accept-encoding", RELAY_HEADER}
NOT_PASSED_BACK = HOP_BY_HOP | {b"content-length", b"content-encoding", b"date", b"server"}
SIGNATURE_AGE_S = 300
CONNECT_TIMEOUT_S = 5.0
ANSWER_TIMEOUT_S = 60.0
LISTING_TIMEOUT_S = 3.0
RETRY_PAUSE_S = 0.2
UNKNOWN_LOOK_S = 1.0
MAX_BODY = 64 * 1024 + 1
KEPT_CONNECTIONS = 16  # per other node, for reads
SAFE_METHODS = (b"GET", b"HEAD")

AWAY_TEXT = "The server that runs this game is not available right now; try again shortly."
MOVED_TEXT = (
    "The game moved to another server while this request was carried out; it may or may not "
    "have been done: look again."
)
NO_WEB_TEXT = "The server that runs this game has no web listener the other servers can reach."
BAD_RELAY_TEXT = (
    "A relayed request with a signature this server cannot check: the cluster's nodes need "
    "the same web_secret_file key."
)


@dataclass(frozen=True, slots=True)
class RelayedFrom:
    """A request another node relayed here: that node, and the client it came from."""

    node: str
    client: str
    secure: bool
    account: str | None = None  # the account a node asks about for its caller (`my_listings`)


class RelaySigner:
    """Signs and checks `X-Tae-Relay` with the web secret every node of the cluster shares."""

    def __init__(self, secret: bytes, clock: IReactorTime):
        self.secret = secret
        self.clock = clock

    def sign(self, node: str, client: str, secure: bool, account: str | None = None) -> bytes:
        """The header's value; with `account`, the signing node vouches that its caller is
        that account (it checked the caller's password, session or token itself)."""
        fields: list[Any] = [node, client, secure, int(self.clock.seconds())]
        if account is not None:
            fields.append(account)
        body = json.dumps(fields, separators=(",", ":"))
        return f"{body}|{self._mac(body)}".encode()

    def check(self, value: bytes) -> RelayedFrom | None:
        try:
            body, _, mac = value.decode("utf-8").rpartition("|")
            if not body or not hmac.compare_digest(self._mac(body), mac):
                return None
            node, client, secure, issued, *rest = json.loads(body)
        except (UnicodeDecodeError, ValueError, TypeError):
            return None
        if not isinstance(node, str) or not isinstance(client, str) or not isinstance(issued, int):
            return None
        account = rest[0] if len(rest) == 1 and isinstance(rest[0], str) else None
        if rest and account is None:
            return None
        if abs(self.clock.seconds() - issued) > SIGNATURE_AGE_S:
            return None
        return RelayedFrom(node, client, bool(secure), account)

    def _mac(self, body: str) -> str:
        return hmac.new(self.secret, f"relay|{body}".encode(), hashlib.sha256).hexdigest()


def relayed_from(request: Any) -> RelayedFrom | None:
    """Who relayed this request here (None: a client sent it to this node itself)."""
    found = getattr(request, "tae_relayed", None)
    return found if isinstance(found, RelayedFrom) else None


def _proxies(request: Any) -> Any:
    """The trusted proxies of the request's site (`server.guards.proxies.TrustedProxies`)."""
    guards = getattr(getattr(getattr(request, "channel", None), "site", None), "guards", None)
    return getattr(guards, "proxies", None)


def peer_address(request: Any) -> str:
    """The address of the connection the request came on."""
    try:
        peer = request.getClientAddress()
    except Exception:
        return "unknown"
    return getattr(peer, "host", None) or "unknown"


def client_address(request: Any) -> str:
    """The address of the client behind the request: the connection's peer, the client a
    trusted proxy names in `X-Forwarded-For` (`trusted_proxies`), or the client another node
    relayed the request for."""
    relayed = relayed_from(request)
    if relayed is not None:
        return relayed.client
    peer = peer_address(request)
    proxies = _proxies(request)
    if proxies:
        return str(proxies.client(peer, request.requestHeaders.getRawHeaders(b"x-forwarded-for")))
    return peer


def is_secure(request: Any) -> bool:
    """Whether the client's connection is TLS (to this node, to the node that relayed it, or
    to a trusted proxy that says so in `X-Forwarded-Proto`)."""
    relayed = relayed_from(request)
    if relayed is not None:
        return relayed.secure
    proxies = _proxies(request)
    if proxies:
        said = proxies.secure(
            peer_address(request), request.requestHeaders.getRawHeaders(b"x-forwarded-proto")
        )
        if said is not None:
            return bool(said)
    return bool(request.isSecure())


def game_named(path: str) -> str | None:
    """The game a path is about (its first segment after /games/ or /api/games/)."""
    found = GAME_PATH.match(path)
    if found is None:
        return None
    try:
        return unquote(found.group(1), errors="strict")
    except UnicodeDecodeError:
        return None


class NothingSent(Exception):
    """The request certainly did not reach the other node: sending it again is safe."""


class _Passthrough(Protocol):
    """Writes the body of the owner's answer to the client's request as it arrives."""

    def __init__(self, request: Any):
        self.request = request
        self.stopped = False

    def dataReceived(self, data: bytes) -> None:
        if not self.stopped and not self.request.finished and not self.request._disconnected:
            self.request.write(data)

    def connectionLost(self, reason: Failure | None = None) -> None:
        if self.stopped or self.request.finished or self.request._disconnected:
            return
        if reason is None or reason.check(ResponseDone):
            self.request.finish()
        else:
            # Cut short (the owner died): the client must not take a part for the whole; an
            # event stream reconnects, to the game's new owner.
            self.request.loseConnection()

    def stop(self) -> None:
        self.stopped = True
        stop = getattr(self.transport, "stopProducing", None)
        if stop is not None:
            stop()


class WebRelay:
    """Takes the requests of games run elsewhere (`take`) and answers them from their owner.

    `serve_here(request, path)` answers a request on this node after all (the game arrived
    while the request waited); `fail(request, status, text)` is the body of a refusal in the
    form the path wants (JSON under /api/, a page otherwise)."""

    def __init__(
        self,
        places: GamePlaces,
        signer: RelaySigner,
        clock: IReactorTime,
        serve_here: Callable[[Any, str], None],
        fail: Callable[[Any, int, str], bytes],
        reactor: Any = None,
        token_game: Callable[[Any], str | None] = lambda request: None,
    ):
        if reactor is None:
            from twisted.internet import reactor as default_reactor

            reactor = default_reactor
        self.places = places
        self.signer = signer
        self.clock = clock
        self.serve_here = serve_here
        self.fail = fail
        self.token_game = token_game
        self._looked_for_unknown = float("-inf")
        # Reads reuse connections (Agent sends a read again on a fresh one when a kept
        # connection turns out closed); a write gets a connection of its own, since on a kept
        # connection that the other side closed meanwhile a write would look sent when it was not.
        pool = HTTPConnectionPool(reactor, persistent=True)
        pool.maxPersistentPerHost = KEPT_CONNECTIONS
        self.reads = Agent(reactor, connectTimeout=CONNECT_TIMEOUT_S, pool=pool)
        self.writes = Agent(
            reactor, connectTimeout=CONNECT_TIMEOUT_S, pool=HTTPConnectionPool(reactor, persistent=False)
        )

    # -- which requests ------------------------------------------------------------------------

    def take(self, request: Any, path: str) -> bytes | object | None:
        """None: answer here. Otherwise the request is answered by the game's owner (this
        returns NOT_DONE_YET) or refused (the body)."""
        header = request.getHeader(RELAY_HEADER)
        if header is not None:
            relayed = self.signer.check(header.encode("latin-1") if isinstance(header, str) else header)
            if relayed is None:
                return self._refuse(request, 403, BAD_RELAY_TEXT)
            request.tae_relayed = relayed
        name = self._game_of(request, path)
        if name is None:
            return None
        where = self.places.locate(name)
        if where.kind == HERE:
            return None
        if where.kind == UNKNOWN:
            # Perhaps a game made a moment ago: look at the database again, at most once a
            # second (a request for a game that does not exist is answered 404 here).
            now = self.clock.seconds()
            if header is not None or now - self._looked_for_unknown < UNKNOWN_LOOK_S:
                return None
            self._looked_for_unknown = now
        if header is not None:
            # Never relayed twice: the relaying node asks the database again and retries.
            request.setHeader(NOT_HERE_HEADER, b"1")
            return self._refuse(request, 421, AWAY_TEXT)
        d = defer.ensureDeferred(self._forward(request, path, name))
        d.addErrback(lambda failure: self._broken(request, failure))
        return NOT_DONE_YET

    def _game_of(self, request: Any, path: str) -> str | None:
        name = game_named(path)
        if name is None and path == "/api/me":
            # A token is checked by the node that runs its game (it knows the player's
            # credential mark); that node asks the others for the account's other games.
            return self.token_game(request)
        if name is None and path == "/join" and request.method == b"POST":
            from server.web.forms import FormError, form_fields

            try:
                name = form_fields(request).get("game") or None
            except FormError:
                return None
        return name

    # -- relaying --------------------------------------------------------------------------

    async def _forward(self, request: Any, path: str, name: str) -> None:
        body = self._body(request)
        deadline = self.clock.seconds() + self.places.wait
        looked_again = False
        while not _gone(request):
            where = self.places.locate(name)
            if where.kind == HERE or (where.kind == UNKNOWN and looked_again):
                if request.content is not None:
                    request.content.seek(0)
                self.serve_here(request, path)
                return
            if where.kind == ELSEWHERE and where.address is not None:
                try:
                    response = await self._send(request, where.address, body)
                except NothingSent:
                    pass
                except Exception as error:
                    if request.method not in SAFE_METHODS:
                        log.info(
                            "web: {method} {path} relayed to node {node} got no answer ({error})",
                            method=request.method.decode("latin-1"),
                            path=path,
                            node=where.node,
                            error=error,
                        )
                        self._answer(request, 503, MOVED_TEXT)
                        return
                else:
                    if response.code != 421 or not response.headers.hasHeader(NOT_HERE_HEADER):
                        self._pass_back(request, response)
                        return
                    await readBody(response).addErrback(lambda _: b"")
            if self.clock.seconds() >= deadline and where.kind != UNKNOWN:
                no_web = where.kind == ELSEWHERE and where.address is None
                self._answer(request, 503, NO_WEB_TEXT if no_web else AWAY_TEXT)
                return
            await self.places.refresh()
            looked_again = True
            if self.places.locate(name).kind not in (HERE, UNKNOWN):
                await _sleep(self.clock, RETRY_PAUSE_S)

    def _body(self, request: Any) -> bytes | None:
        if request.method in SAFE_METHODS or request.content is None:
            return None
        request.content.seek(0)
        return bytes(request.content.read(MAX_BODY))

    def _headers(self, request: Any) -> Headers:
        headers = Headers()
        for name, values in request.requestHeaders.getAllRawHeaders():
            if name.lower() not in NOT_PASSED_ON:
                headers.setRawHeaders(name, values)
        signed = self.signer.sign(self.places.node, client_address(request), is_secure(request))
        headers.setRawHeaders(RELAY_HEADER, [signed])
        return headers

    async def _send(self, request: Any, address: str, body: bytes | None) -> Any:
        url = f"http://{address}{request.uri.decode('ascii', 'replace')}".encode("ascii", "replace")
        producer = None if body is None else FileBodyProducer(io.BytesIO(body))
        agent = self.reads if request.method in SAFE_METHODS else self.writes
        waiting = agent.request(request.method, url, self._headers(request), producer)
        waiting.addTimeout(ANSWER_TIMEOUT_S, self.clock)
        try:
            return await waiting
        except (ConnectError, DNSLookupError) as error:
            raise NothingSent(str(error)) from None
        except Exception as error:
            if type(error).__name__ == "RequestTransmissionFailed":
                raise NothingSent(str(error)) from None
            raise

    def _pass_back(self, request: Any, response: Any) -> None:
        passthrough = _Passthrough(request)
        if _gone(request):
            response.deliverBody(passthrough)
            passthrough.stop()
            return
        request.setResponseCode(response.code, response.phrase or None)
        for name, values in response.headers.getAllRawHeaders():
            if name.lower() not in NOT_PASSED_BACK:
                request.responseHeaders.setRawHeaders(name, values)
        response.deliverBody(passthrough)
        request.notifyFinish().addErrback(lambda _: passthrough.stop())

    # -- answers of our own ----------------------------------------------------------------

    def _refuse(self, request: Any, status: int, text: str) -> bytes:
        request.setResponseCode(status)
        return self.fail(request, status, text)

    def _answer(self, request: Any, status: int, text: str) -> None:
        if _gone(request):
            return
        body = self._refuse(request, status, text)
        request.setHeader(b"content-length", b"%d" % len(body))
        request.write(body)
        request.finish()

    def _broken(self, request: Any, failure: Failure) -> None:
        if failure.check(defer.CancelledError):
            return
        log.failure("web: relaying {path} failed", failure, path=request.path)
        self._answer(request, 502, AWAY_TEXT)

    # -- the lobby -------------------------------------------------------------------------

    async def listings(self, account: str | None = None) -> list[dict[str, Any]]:
        """The lobby entries (`GET /api/games`) of the games the other nodes run, each from its
        owner; with `account`, the entries of `GET /api/me` of the games of theirs it plays,
        asked on its behalf. A node that does not answer within LISTING_TIMEOUT_S is left out."""
        path, key = ("/api/games", "name") if account is None else ("/api/me", "game")
        peers = await self.places.peers()
        asked = [defer.ensureDeferred(self._listing(address, path, key, account)) for _, address in peers]
        entries: list[dict[str, Any]] = []
        for ok, listed in await defer.DeferredList(asked, consumeErrors=True):
            if ok:
                entries.extend(listed)
        return entries

    async def _listing(self, address: str, path: str, key: str, account: str | None) -> list[dict[str, Any]]:
        """The games a node lists at `path` (entries named by `key`) that it runs itself."""
        headers = Headers({b"accept": [b"application/json"]})
        headers.setRawHeaders(RELAY_HEADER, [self.signer.sign(self.places.node, "lobby", False, account)])
        waiting = self.reads.request(b"GET", f"http://{address}{path}".encode(), headers)
        waiting.addTimeout(LISTING_TIMEOUT_S, self.clock)
        response = await waiting
        reading = readBody(response)
        reading.addTimeout(LISTING_TIMEOUT_S, self.clock)
        document = json.loads(await reading)
        games = document.get("games") if isinstance(document, dict) else None
        return [
            entry
            for entry in games or []
            if isinstance(entry, dict)
            and isinstance(entry.get(key), str)
            and self.places.locate(entry[key]).kind != HERE
        ]


def _gone(request: Any) -> bool:
    return bool(request.finished or request._disconnected)


def _sleep(clock: IReactorTime, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    clock.callLater(seconds, d.callback, None)
    return d
