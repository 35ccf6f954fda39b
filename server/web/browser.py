"""One browser's request: its session and CSRF cookies, its logins, the forms it posts.

The pages (`server.web.pages`) and the notification forms (`server.web.notification_pages`)
both read who is asking through a `Browser`.
"""

from __future__ import annotations

import secrets

from server.model.names import lookup_key
from server.model.refusals import Refused
from server.model.snapshot import GameSnapshot
from server.views.web.paths import game_path
from server.web.contract import ServedGame
from server.web.forms import FormError, form_fields
from server.web.relay import is_secure
from server.web.routing import HTTPFailure
from server.web.sessions import BAD_CSRF, CSRF_COOKIE, SESSION_COOKIE, Session, same
from server.web.website import WebSite

HTML = b"text/html; charset=utf-8"


class Browser:
    """One request's cookies: the session (if any) and the CSRF cookie (made when missing)."""

    def __init__(self, web: WebSite, request):
        self.web = web
        self.request = request
        raw_session = request.getCookie(SESSION_COOKIE)
        self.session: Session | None = web.sessions.get(
            raw_session.decode("ascii", "replace") if raw_session else None
        )
        raw_csrf = request.getCookie(CSRF_COOKIE)
        self.csrf_cookie = raw_csrf.decode("ascii", "replace") if raw_csrf else ""

    def _cookie(self, name: bytes, value: str, max_age: int | None) -> None:
        prefix = name + b"="
        self.request.cookies = [c for c in self.request.cookies if not c.startswith(prefix)]
        self.request.addCookie(
            name,
            value.encode(),
            path=b"/",
            httpOnly=True,
            secure=is_secure(self.request),
            sameSite="lax",
            max_age=None if max_age is None else str(max_age).encode(),
        )

    def csrf(self) -> str:
        if not self.csrf_cookie:
            self.csrf_cookie = secrets.token_urlsafe(24)
            self._cookie(CSRF_COOKIE, self.csrf_cookie, None)
        return self.web.sessions.csrf_token(self.csrf_cookie, self.session)

    def login(self, game_name: str, snapshot: GameSnapshot | None = None) -> tuple[int, str] | None:
        """(player, user name) this browser is logged in as in `game_name`; with the game's
        `snapshot`, only while the account's credential mark is the one it logged in with (a
        password change since ends the login, and drops it from the session)."""
        if self.session is None:
            return None
        found = self.session.logins.get(game_name)
        if found is None:
            return None
        player, username, mark = found
        if snapshot is not None and not same(mark, snapshot.credential_marks.get(player, "")):
            self.session.logins.pop(game_name, None)
            self.save()
            return None
        return player, username

    def start_session(self, keep_logins: bool = False) -> Session:
        """A new session id: a session id known before a login is never the one that carries it
        (no session fixation). A login starts one without the old session's logins (a session
        cookie planted in the browser cannot lend its logins to the player's session); a
        logout keeps the other games' logins (`keep_logins`)."""
        fresh = self.web.sessions.create()
        if self.session is not None:
            if keep_logins:
                fresh.logins.update(self.session.logins)
            fresh.notices.extend(self.session.notices)
            self.web.sessions.drop(self.session.id)
        self.session = fresh
        self.save()
        return fresh

    def add_login(self, game_name: str, player: int, username: str, mark: str) -> None:
        """Log this browser in to a game: a new session (`start_session`) with the login,
        good while the account's credential mark is `mark`, and with a login to every other
        game the same server account plays here (one account, one login: the lobby switches
        between them)."""
        session = self.start_session()
        session.logins.update(self._account_logins(game_name, player))
        session.logins[game_name] = (player, username, mark)
        self.save()

    def _account_logins(self, game_name: str, player: int) -> dict[str, tuple[int, str, str]]:
        game = self.web.games.find(game_name)
        owner = game.snapshot.owners.get(player) if game is not None else None
        key = lookup_key(owner) if owner else None
        if key is None:
            return {}
        found = {}
        for other in self.web.games.ordered():
            snapshot = other.snapshot
            for seat, seat_owner in snapshot.owners.items():
                if lookup_key(seat_owner) == key and seat not in snapshot.removed_players:
                    mark = snapshot.credential_marks.get(seat, "")
                    found[snapshot.name] = (seat, snapshot.usernames.get(seat, ""), mark)
        return found

    def account(self) -> str | None:
        """The name of the server account this browser is logged in with (None: none), from a
        login whose credential mark still holds."""
        if self.session is None:
            return None
        for game_name in list(self.session.logins):
            game = self.web.games.find(game_name)
            login = self.login(game_name, game.snapshot) if game is not None else None
            if game is not None and login is not None:
                owner = game.snapshot.owners.get(login[0])
                if owner:
                    return owner
        return None

    def save(self) -> None:
        """Send the session cookie again (its logins changed): every node reads them from it."""
        if self.session is not None:
            self._cookie(
                SESSION_COOKIE, self.web.sessions.seal(self.session), int(self.web.sessions.lifetime)
            )

    def end_session(self) -> None:
        if self.session is not None:
            self.web.sessions.drop(self.session.id)
            self.session = None
        self._cookie(SESSION_COOKIE, "", 0)

    def notices(self) -> list[tuple[str, str]]:
        if self.session is None:
            return []
        notices, self.session.notices = self.session.notices, []
        return notices

    def notify(self, kind: str, text: str) -> None:
        if self.session is not None:
            self.session.notices.append((kind, text))

    def form(self) -> dict[str, str]:
        """The posted form (`server.web.transport.form_fields`: bounded, UTF-8), after its CSRF
        token is checked."""
        try:
            fields = form_fields(self.request, self.web.limits.web_form_fields)
        except FormError as error:
            raise HTTPFailure(error.status, str(error).encode()) from None
        if not self.web.sessions.csrf_ok(self.csrf_cookie, self.session, fields.get("csrf")):
            raise Refused(BAD_CSRF)
        return fields

    @property
    def wants_json(self) -> bool:
        return b"application/json" in (self.request.getHeader(b"accept") or b"")


def logged_in_player(web: WebSite, browser: Browser, name: str) -> tuple[ServedGame, int]:
    """The game `name` and the player this browser is logged in as there; else a redirect to
    the game's login form."""
    game = web.game(name)
    login = browser.login(game.snapshot.name, game.snapshot)
    if login is None or login[0] in game.snapshot.removed_players:
        raise HTTPFailure(303, b"", HTML, {b"location": (game_path(name) + "#login").encode()})
    return game, login[0]
