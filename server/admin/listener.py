"""The admin listener's factory, and the checks of its settings.

`build_factory` makes the protocol factory (`server.admin.network.AdminFactory`);
`server.services.admin.AdminService` serves the server's admin ports with it. An admin listener
needs an admin account (`check_settings`), and plain TCP off this host carries the admin
password in clear (`warn_if_exposed`).
"""

from __future__ import annotations

from ipaddress import ip_address

from twisted.logger import Logger

from server.admin.backend import OperatorBackend
from server.admin.network import AdminFactory
from server.config.admin import AdminSettings
from server.config.errors import ConfigError
from server.game.passwords import PasswordHasher

log = Logger()


def check_settings(settings: AdminSettings) -> None:
    """ConfigError when there is no admin account to log in with."""
    if not settings.users:
        raise ConfigError(
            "admin: an admin listener needs an account: make one with `tae-server admin-user NAME` "
            "and add it under [admin.users]"
        )


def build_factory(
    settings: AdminSettings, backend: OperatorBackend, reactor, hasher: PasswordHasher, **options
) -> AdminFactory:
    """The admin protocol factory. ConfigError when there is no admin account to log in with.
    `options` go to `AdminFactory` (server_version, log_publisher; on a server: the limits, its
    login guard and the descriptor share of the listeners other than TP)."""
    check_settings(settings)
    return AdminFactory(settings, backend, reactor, hasher, **options)


def warn_if_exposed(description: str) -> None:
    """Plain TCP carries the admin password in clear: say so unless it stays on this host."""
    kind, _, rest = description.partition(":")
    if kind not in ("tcp", "tcp6"):
        return
    options = dict(part.split("=", 1) for part in rest.split(":") if "=" in part)
    interface = options.get("interface", "")
    try:
        local = bool(interface) and ip_address(interface.strip("[]")).is_loopback
    except ValueError:
        local = interface == "localhost"
    if not local:
        log.warn(
            "admin listener {endpoint} is plain TCP on every interface: admin passwords cross the "
            "network unencrypted; use ssl:… or interface=127.0.0.1",
            endpoint=description,
        )
