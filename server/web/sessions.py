"""Who is asking: browser sessions, CSRF tokens, API tokens, and a brake on password guessing.

* A browser session is a random id in an HttpOnly, SameSite=Lax cookie. The cookie also
  carries the session's logins, sealed (an HMAC with the site's secret, and the time it is good
  until), so any node of a cluster that shares the secret knows the session, and a restart
  with a configured secret keeps it; each node keeps the sessions it saw in memory. One session
  can be logged in to several games, with a different account in each. A session dropped
  (a new login, a logout) is refused by the node that dropped it; a copy of its cookie kept
  elsewhere stays good on the other nodes until it expires, for the logins it had.
* Every form carries a CSRF token: an HMAC of the browser's `tae_csrf` cookie and its session id,
  so a token is worthless in another browser or after the session changes.
* API tokens are signed, not stored: `game`, `player`, the issue time and the player's
  credential mark (`GameSnapshot.credential_marks`: a fingerprint of their password hash) under
  an HMAC with the site's secret. They survive a restart when the secret is configured; they
  expire; a password change revokes them (the mark changes, and a token is good only while its
  mark is the player's).
* Each login of a session carries the account's credential mark of the moment it was made,
  so a password change (by the player, or an operator's `tae-server set-password` for a stolen
  account) ends every browser session of the account, as it revokes its API tokens.
* Every comparison of something a client sent (a cookie, a CSRF field, a token) is made on
  bytes (`same`): a non-ASCII character is a mismatch, never an error.

Password guessing is braked by the server's one login brake (`server.web.logins`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from ruleset import Problem, ProblemCode

if TYPE_CHECKING:
    from server.web.contract import SessionRevocations

SESSION_COOKIE = b"tae_session"
CSRF_COOKIE = b"tae_csrf"
SESSION_LIFETIME = 14 * 24 * 3600
TOKEN_LIFETIME = 90 * 24 * 3600
MAX_SESSIONS = 50_000
MAX_SEALED_LOGINS = 20
#: How often the sessions ended on other nodes are read.
REVOCATION_POLL_S = 2.0

log = Logger()

BAD_CSRF = Problem(ProblemCode.PERMISSION_DENIED, "This form has expired; reload the page and try again.")


def same(given: str | bytes | None, expected: str | bytes) -> bool:
    """Whether what a client sent is `expected`, in constant time, for any characters."""
    if given is None:
        return False
    a = given if isinstance(given, bytes) else given.encode("utf-8", "surrogatepass")
    b = expected if isinstance(expected, bytes) else expected.encode("utf-8", "surrogatepass")
    return hmac.compare_digest(a, b)


@dataclass
class Session:
    """A browser's logins: game name → (player id, user name, the account's credential mark
    when it logged in), and messages for its next page."""

    id: str
    expires: float
    logins: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    notices: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionStore:
    """The sessions this node knows. With `revocations` (the database store's `web_sessions`,
    `server.database.components.WebSessionRevocations`), a session dropped here is recorded,
    and the sessions dropped on any node or before a restart are read (`start`, then every
    `REVOCATION_POLL_S`): a logout is final everywhere."""

    def __init__(
        self,
        clock: IReactorTime,
        secret: bytes | None = None,
        lifetime: float = SESSION_LIFETIME,
        revocations: SessionRevocations | None = None,
    ):
        self.clock = clock
        self.secret = secret or os.urandom(32)
        self.lifetime = lifetime
        self.sessions: dict[str, Session] = {}
        self.dropped: dict[str, None] = {}  # ids of sessions dropped here, oldest first
        self.revocations = revocations
        self._read_up_to = 0
        self._poll: LoopingCall | None = None

    # -- revocations, shared through the database ------------------------------------------

    def start(self) -> defer.Deferred:
        """Read the sessions that ended before (on any node); then keep reading new ones. Fires
        after the first read (a failure to read is logged, not raised)."""
        if self.revocations is None:
            return defer.succeed(None)
        first = self._read_revocations()
        self._poll = LoopingCall(self._read_revocations)
        self._poll.clock = self.clock
        self._poll.start(REVOCATION_POLL_S, now=False)
        return first

    def _read_revocations(self) -> defer.Deferred:
        """Read the sessions ended since the last read (never fails)."""
        assert self.revocations is not None  # started only with revocations
        now = self.clock.seconds()
        d = defer.maybeDeferred(self.revocations.revoked_since, self._read_up_to, now)

        def read(rows: list[tuple[int, str]]) -> None:
            for row_id, session_id in rows:
                self._read_up_to = max(self._read_up_to, row_id)
                self._forget(session_id)

        def failed(failure: Any) -> None:
            log.info(
                "web sessions: reading the ended sessions failed: {error}", error=failure.getErrorMessage()
            )

        return d.addCallbacks(read, failed)

    def stop(self) -> None:
        if self._poll is not None and self._poll.running:
            self._poll.stop()

    # -- sessions --------------------------------------------------------------------------

    def get(self, cookie: str | None) -> Session | None:
        """The session of a session cookie (`seal`'s value, or a bare session id this node
        knows); None for an unknown, dropped, forged or expired one."""
        if not cookie:
            return None
        session_id = cookie.split(".", 1)[0]
        session = self.sessions.get(session_id)
        now = self.clock.seconds()
        if session is None and session_id not in self.dropped:
            session = self._unseal(cookie, now)
            if session is not None:
                self._keep(session)
        if session is None or session.expires < now:
            self.sessions.pop(session_id, None)
            return None
        session.expires = max(session.expires, now + self.lifetime)
        return session

    def seal(self, session: Session) -> str:
        """The session cookie's value: the id, the logins and how long they are good, signed."""
        logins = dict(list(session.logins.items())[:MAX_SEALED_LOGINS])
        body = _b64(
            json.dumps(
                [
                    int(self.clock.seconds() + self.lifetime),
                    [[g, p, u, m] for g, (p, u, m) in logins.items()],
                ],
                separators=(",", ":"),
            ).encode()
        )
        return f"{session.id}.{body}.{self._sign(f'session|{session.id}|{body}')}"

    def _unseal(self, cookie: str, now: float) -> Session | None:
        session_id, _, rest = cookie.partition(".")
        body, _, signature = rest.partition(".")
        if not session_id or not body or not same(signature, self._sign(f"session|{session_id}|{body}")):
            return None
        try:
            until, logins = json.loads(_unb64(body))
            found = {str(g): (int(p), str(u), str(m)) for g, p, u, m in logins}
        except (ValueError, TypeError, UnicodeError):
            return None
        if not isinstance(until, int) or until < now:
            return None
        return Session(session_id, float(until), found)

    def _keep(self, session: Session) -> None:
        now = self.clock.seconds()
        if len(self.sessions) >= MAX_SESSIONS:
            for sid in [sid for sid, s in self.sessions.items() if s.expires < now]:
                del self.sessions[sid]
            while len(self.sessions) >= MAX_SESSIONS:  # the oldest first (dicts keep insertion order)
                del self.sessions[next(iter(self.sessions))]
        self.sessions[session.id] = session

    def create(self) -> Session:
        session = Session(secrets.token_urlsafe(32), self.clock.seconds() + self.lifetime)
        self._keep(session)
        return session

    def drop(self, session_id: str) -> None:
        """The session ended (a logout, a new login): refused from now on, here and, through
        the database, on every node and after a restart."""
        self._forget(session_id)
        if self.revocations is not None:
            now = self.clock.seconds()
            d = defer.maybeDeferred(self.revocations.revoke, session_id, now + self.lifetime, now)
            d.addErrback(
                lambda failure: log.warn(
                    "web sessions: an ended session could not be stored ({error}); it is refused "
                    "on this node until it restarts",
                    error=failure.getErrorMessage(),
                )
            )

    def _forget(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self.dropped[session_id] = None
        while len(self.dropped) > MAX_SESSIONS:
            del self.dropped[next(iter(self.dropped))]

    # -- CSRF ------------------------------------------------------------------------------

    def csrf_token(self, csrf_cookie: str, session: Session | None) -> str:
        message = f"csrf|{csrf_cookie}|{session.id if session else ''}".encode("utf-8", "surrogatepass")
        return _b64(hmac.new(self.secret, message, hashlib.sha256).digest())

    def csrf_ok(self, csrf_cookie: str | None, session: Session | None, token: str | None) -> bool:
        if not csrf_cookie or not token:
            return False
        return same(token, self.csrf_token(csrf_cookie, session))

    # -- API tokens ------------------------------------------------------------------------

    def issue_token(self, game: str, player: int, mark: str) -> str:
        """A token for `player` of `game`, good while `mark` is their credential mark."""
        issued = int(self.clock.seconds())
        body = _b64(json.dumps([game, player, issued, mark], separators=(",", ":")).encode())
        return f"{body}.{self._sign(body)}"

    def read_token(self, token: str) -> tuple[str, int, str] | None:
        """(game name, player id, credential mark) of a valid, unexpired token; None for anything
        else (tokens made before they carried a mark included)."""
        body, _, signature = token.strip().partition(".")
        if not body or not same(signature, self._sign(body)):
            return None
        try:
            game, player, issued, mark = json.loads(_unb64(body))
        except (ValueError, TypeError, UnicodeError):
            return None
        if not isinstance(game, str) or not isinstance(player, int) or not isinstance(issued, int):
            return None
        if not isinstance(mark, str) or issued + TOKEN_LIFETIME < self.clock.seconds():
            return None
        return game, player, mark

    def _sign(self, body: str) -> str:
        message = f"token|{body}".encode("utf-8", "surrogatepass")
        return _b64(hmac.new(self.secret, message, hashlib.sha256).digest())


def bearer_token(request: Any) -> str | None:
    """The token of the request's `Authorization: Bearer ...` header (None: another scheme or
    none)."""
    header = (request.getHeader(b"authorization") or b"").strip()
    scheme, _, value = header.partition(b" ")
    return value.strip().decode("latin-1") if scheme.lower() == b"bearer" else None
