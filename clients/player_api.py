"""The player's JSON API on the server's web listener, for what Thousand Parsec has no frame for.

Notification channels, vacations, resigning and changing one's password are not in the TP
protocol; the server offers them under ``/api/games/GAME/…`` on its web listener (see
docs/web.md). `PlayerApi` calls them with the same account name and password as the TP login
(HTTP Basic), blocking, with one timeout per request::

    api = PlayerApi.from_settings(settings)
    api.call("PUT", "notifications", {"webhook": "https://…"})

The web address is the ``web_url`` setting (``--web-url``, ``$TAE_WEB_URL``), by default port 8080
of the TP host. Without ``@GAME`` in the user name the game is the server's default game, as for a TP
login. Every failure is a `PlayerApiError` with one line to show: the
server's own refusal text when it gave one.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from .cli_settings import Settings
from .errors import ClientError

MAX_ANSWER_BYTES = 4 * 1024 * 1024


class PlayerApiError(ClientError):
    """A refused or failed call; ``status`` is the HTTP status (0 when there was no answer)."""

    def __init__(self, message: str, status: int = 0, *, usage: bool = False):
        super().__init__(message)
        self.status = status
        self.usage = usage  # the command line must say more (tae-client exits 2)


class PlayerApi:
    """One player's calls to one server's web API (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        game: str | None = None,
        *,
        timeout: float = 30.0,
        tls: ssl.SSLContext | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.username = username
        self.game = game
        self.timeout = timeout
        self._tls = tls
        token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
        self._authorization = f"Basic {token}"

    @classmethod
    def from_settings(cls, settings: Settings, password: str) -> PlayerApi:
        """The API of the server and account that ``settings`` name (``password`` as resolved by
        the CLI, which may have asked for it)."""
        if not settings.username:
            raise PlayerApiError("no user: give --user NAME[@GAME]")
        tls = None
        if settings.web_address.startswith("https://"):
            if settings.insecure:
                tls = ssl._create_unverified_context()  # the user asked for it (--insecure)
            else:
                tls = ssl.create_default_context(cafile=settings.ca_file)
        return cls(
            settings.web_address,
            settings.username,
            password,
            settings.game,
            timeout=settings.timeout,
            tls=tls,
        )

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """``method`` on ``/api/games/GAME/path``; the decoded JSON answer, None for 204."""
        game = self.game or self._only_game()
        suffix = f"/{path.lstrip('/')}" if path else ""
        return self.request(method, f"/api/games/{quote(game, safe='')}{suffix}", body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """``method`` on ``path`` (from the server's root); the decoded JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Authorization", self._authorization)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._tls) as answer:
                raw = answer.read(MAX_ANSWER_BYTES + 1)
                status = answer.status
        except urllib.error.HTTPError as error:
            raise PlayerApiError(self._refusal(error), error.code) from None
        except urllib.error.URLError as error:
            reason = getattr(error.reason, "strerror", None) or error.reason
            raise PlayerApiError(f"cannot reach the web listener at {self.base_url}: {reason}") from None
        except (TimeoutError, OSError) as error:
            raise PlayerApiError(f"the web listener at {self.base_url} did not answer: {error}") from None
        if status == 204 or not raw:
            return None
        if len(raw) > MAX_ANSWER_BYTES:
            raise PlayerApiError(f"the answer from {self.base_url} is too large", status)
        try:
            return json.loads(raw)
        except ValueError:
            raise PlayerApiError(
                f"{self.base_url} did not answer with JSON (is it the TaE web listener?)", status
            ) from None

    def _only_game(self) -> str:
        """The server's default game (the one a TP login without @GAME joins)."""
        games = self.request("GET", "/api/games")
        entries = (
            [e for e in games.get("games", []) if isinstance(e, dict)] if isinstance(games, dict) else []
        )
        names: list[str] = [e["name"] for e in entries if isinstance(e.get("name"), str)]
        default = [e["name"] for e in entries if e.get("default") is True and e.get("name") in names]
        if default or len(names) == 1:
            chosen: str = default[0] if default else names[0]
            self.game = chosen
            return chosen
        if not names:
            raise PlayerApiError(f"the server at {self.base_url} has no game")
        raise PlayerApiError(
            f"the server runs {len(names)} games and none is its default: name one with --user NAME@GAME",
            usage=True,
        )

    def _refusal(self, error: urllib.error.HTTPError) -> str:
        try:
            document = json.loads(error.read(MAX_ANSWER_BYTES))
            message = document["error"]["message"]
            if isinstance(message, str) and message:
                return message
        except (ValueError, KeyError, TypeError, OSError):
            pass
        if error.code == 404:
            return f"{self.base_url} has no such page (is it the TaE web listener, and a new enough server?)"
        return f"the web listener answered {error.code} {error.reason}"
