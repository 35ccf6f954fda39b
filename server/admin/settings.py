"""The `[admin]` section of the server configuration: where the admin listener listens, which
accounts may log in, and how much of the log they are sent.

    [admin]
    listen = "tcp:6925:interface=127.0.0.1"   # absent: no admin listener (`--admin ENDPOINT`)
    log_level = "info"                         # the lowest level streamed to connected admins

    [admin.users]                              # admin accounts, separate from every player
    tpadm = "scrypt$16384$8$1$…"               # made by `tae-server admin-user NAME`

tpadmin-cpp lower-cases everything the user types, the user name and the password included,
so an account name must be lower case (a name with capitals could never log in) and
`tae-server admin-user` refuses a password it could not send. Every problem is a one-line
`ConfigError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from twisted.logger import LogLevel

LOG_LEVELS = {level.name: level for level in LogLevel.iterconstants()}
DEFAULT_LOG_LEVEL = "info"
MAX_USER_NAME = 64
_KEYS = {"listen", "log_level", "users"}


def _no_users() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class AdminSettings:
    """`listen`: endpoint strings of admin listeners (empty: none); `users`: account name →
    scrypt hash (`server.accounts.hash_password`); `log_level`: a `twisted.logger` level name."""

    listen: tuple[str, ...] = ()
    log_level: str = DEFAULT_LOG_LEVEL
    users: Mapping[str, str] = field(default_factory=_no_users)

    @property
    def minimum_level(self) -> LogLevel:
        return LOG_LEVELS[self.log_level]

    def with_listen(self, endpoints: tuple[str, ...] | list[str]) -> AdminSettings:
        """The same settings listening on `endpoints` (what `--admin ENDPOINT` does)."""
        return AdminSettings(tuple(endpoints), self.log_level, self.users)


def user_name_problem(name: str) -> str | None:
    """Why `name` cannot be an admin account name, or None."""
    if not name or len(name) > MAX_USER_NAME:
        return f"an admin name has 1 to {MAX_USER_NAME} characters"
    if name != name.lower():
        return "an admin name must be lower case (tpadmin-cpp lower-cases what is typed)"
    if "@" in name or any(ch.isspace() for ch in name) or not name.isprintable():
        return "an admin name cannot hold '@', spaces or control characters"
    return None


def password_problem(password: str) -> str | None:
    """Why tpadmin-cpp could never send `password`, or None."""
    if not password:
        return "the password is empty"
    if password != password.lower():
        return "tpadmin-cpp lower-cases what is typed, so a password with capitals could never be entered"
    if password.strip() != password or not password.isprintable():
        return "the password cannot begin or end with a space, nor hold control characters"
    return None


def _looks_like_hash(value: str) -> bool:
    parts = value.split("$")
    return len(parts) == 6 and parts[0] == "scrypt" and all(parts[1:])


def parse_admin_settings(table: Any, where: str = "admin") -> AdminSettings:
    """The `[admin]` TOML table (a dict) as AdminSettings; ConfigError names the bad key."""
    from ..config import ConfigError  # here: server.config imports this module

    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, not {table!r}")
    for key in table:
        if key not in _KEYS:
            raise ConfigError(f"{where}: unknown setting {key!r}")
    listen: Any = table.get("listen", [])
    if isinstance(listen, str):
        listen = [listen]
    if not isinstance(listen, list) or not all(isinstance(item, str) and item for item in listen):
        raise ConfigError(f"{where}.listen: expected an endpoint string or a list of them")
    level = table.get("log_level", DEFAULT_LOG_LEVEL)
    if level not in LOG_LEVELS:
        raise ConfigError(f"{where}.log_level: expected one of {', '.join(LOG_LEVELS)}, not {level!r}")
    users = table.get("users", {})
    if not isinstance(users, dict):
        raise ConfigError(f'{where}.users: expected a table of name = "scrypt$…" lines')
    for name, value in users.items():
        problem = user_name_problem(name)
        if problem is not None:
            raise ConfigError(f"{where}.users.{name}: {problem}")
        if not isinstance(value, str) or not _looks_like_hash(value):
            raise ConfigError(
                f"{where}.users.{name}: expected a password hash made by `tae-server admin-user {name}`"
            )
    return AdminSettings(tuple(listen), level, MappingProxyType(dict(users)))
