"""The remote-admin listener: the Thousand Parsec admin protocol (spec/admin-protocol.md), as
tpadmin-cpp speaks it, on its own port, for admin accounts kept apart from every player.

    settings.py    the `[admin]` configuration section (listen, log_level, users)
    backend.py     `OperatorBackend`, the interface the commands call, and its answer values
    live.py        `LiveBackend`: the commands on a running server's games
    commands.py    the command table (ids, names, parameters) and how answers are shown
    session.py     one connection's conversation, sans I/O
    log_stream.py  the server's log as LogMessage frames to logged-in admins
    network.py     the Twisted protocol and factory
    listener.py    `listen(...)` and `build_factory(...)`: starting the listener
    cli.py         `tae-server admin-user NAME`: an account line for the configuration

The names below are imported on first use, so that `server.config.file` can import
`server.config.admin` without pulling in the rest (which imports `server.config.file`).

A server starts it with::

    backend = LiveBackend(directory, store, reactor, config.game, desk=desk, hasher=hasher)
    ports = yield server.admin.listen(reactor, config.admin, backend, hasher)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "NOT_AVAILABLE": "backend",
    "CommandFailed": "backend",
    "GameListing": "backend",
    "GameReport": "backend",
    "OperatorBackend": "backend",
    "PlayerLine": "backend",
    "LiveBackend": "live",
    "AdminConnection": "network",
    "AdminFactory": "network",
    "AdminSettings": "settings",
    "parse_admin_settings": "settings",
    "build_factory": "listener",
    "listen": "listener",
    "admin_user": "cli",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
