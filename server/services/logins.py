"""What checks passwords: the hashing thread pool, and the login guard that shares it out.

Both are made when the server starts (after the store is open) and stopped near the end, after
the games and the notifications: a turn being stored at stop may still check a password, and
the guard writes the failed-login summaries it holds.
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.application.service import Service

from server.config.limits import Limits
from server.game.passwords import PasswordPolicy, ThreadPoolHasher
from server.guards.login_guard import LoginGuard


class PasswordHashing(Service):
    """The server's `ThreadPoolHasher` (`hasher`, once started)."""

    def __init__(self, reactor, limits: Limits):
        self.setName("password hashing")
        self.reactor = reactor
        self.limits = limits
        self.hasher: ThreadPoolHasher | None = None

    def startService(self) -> None:
        super().startService()
        limits = self.limits
        self.hasher = ThreadPoolHasher(
            self.reactor,
            limits.hashing_threads,
            policy=PasswordPolicy.with_cost(limits.password_min_length, limits.password_hash_cost),
        )

    def stopService(self) -> None:
        super().stopService()
        hasher, self.hasher = self.hasher, None
        if hasher is not None:
            hasher.stop()


class LoginGuarding(Service):
    """The server's `LoginGuard` (`guard`, once started), shared by TP and the web; `default_game`
    names the game a login without @GAME is for (one account to the brake either way)."""

    def __init__(self, reactor, limits: Limits, *, default_game: Callable[[], str | None] | None = None):
        self.setName("login guard")
        self.reactor = reactor
        self.limits = limits
        self.default_game = default_game
        self.guard: LoginGuard | None = None

    def startService(self) -> None:
        super().startService()
        self.guard = LoginGuard(self.reactor, self.limits, default_game=self.default_game)

    def stopService(self) -> None:
        super().stopService()
        if self.guard is not None:
            self.guard.stop()
