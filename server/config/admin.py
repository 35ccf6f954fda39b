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

`AdminTable` is the section's schema (a msgspec Struct, for `server.config.file.ConfigFile`);
`admin_settings(table)` checks what the schema cannot (names, hashes, the log level) and gives
the `AdminSettings` the server uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import msgspec
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
    scrypt hash (`server.game.passwords.hash_password`); `log_level`: a `twisted.logger` level name."""

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


class AdminTable(msgspec.Struct, forbid_unknown_fields=True):
    """The `[admin]` table as written."""

    listen: str | list[str] | None = None
    log_level: str = DEFAULT_LOG_LEVEL
    users: dict[str, str] = msgspec.field(default_factory=dict)


def admin_settings(table: AdminTable | None, where: str = "admin") -> AdminSettings:
    """The AdminSettings of a decoded `[admin]` table (None: no section, the defaults)."""
    from server.config.errors import ConfigError  # here: server.config.file imports this module

    if table is None:
        return AdminSettings()
    listen = [table.listen] if isinstance(table.listen, str) else list(table.listen or [])
    if not all(listen):
        raise ConfigError(f"{where}.listen: an endpoint string cannot be empty")
    if table.log_level not in LOG_LEVELS:
        raise ConfigError(
            f"{where}.log_level: expected one of {', '.join(LOG_LEVELS)}, not {table.log_level!r}"
        )
    for name, value in table.users.items():
        problem = user_name_problem(name)
        if problem is not None:
            raise ConfigError(f"{where}.users.{name}: {problem}")
        if not _looks_like_hash(value):
            raise ConfigError(
                f"{where}.users.{name}: expected a password hash made by `tae-server admin-user {name}`"
            )
    return AdminSettings(tuple(listen), table.log_level, MappingProxyType(dict(table.users)))


def parse_admin_settings(table: Any, where: str = "admin") -> AdminSettings:
    """The `[admin]` TOML table (a dict, as `tomllib` reads it) as AdminSettings."""
    from server.config.errors import ConfigError, describe_validation_error

    try:
        decoded = msgspec.convert(table, type=AdminTable)
    except msgspec.ValidationError as error:
        raise ConfigError(within(where, describe_validation_error(error))) from None
    return admin_settings(decoded, where)


def within(where: str, message: str) -> str:
    """A schema message about a table, as a message about the `where` section of the file."""
    if message.startswith("the file:"):
        return where + message.removeprefix("the file")
    if message.startswith("unknown setting"):
        return f"{where}: {message}"
    return f"{where}.{message}"
