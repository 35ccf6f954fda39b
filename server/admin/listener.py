"""Starting the admin listener: `listen(reactor, settings, backend)` listens on every
configured endpoint; `build_factory` makes the protocol factory for a caller that listens itself.
"""

from __future__ import annotations

from ipaddress import ip_address

from twisted.internet import defer
from twisted.internet.endpoints import serverFromString
from twisted.logger import Logger

from server.admin.backend import OperatorBackend
from server.admin.network import AdminFactory
from server.config.admin import AdminSettings
from server.config.errors import ConfigError
from server.game.passwords import PasswordHasher

log = Logger()


def build_factory(
    settings: AdminSettings, backend: OperatorBackend, reactor, hasher: PasswordHasher, **options
) -> AdminFactory:
    """The admin protocol factory, for a caller that listens itself. ConfigError when there is
    no admin account to log in with. `options` go to `AdminFactory` (server_version,
    log_publisher)."""
    if not settings.users:
        raise ConfigError(
            "admin: an admin listener needs an account: make one with `tae-server admin-user NAME` "
            "and add it under [admin.users]"
        )
    return AdminFactory(settings, backend, reactor, hasher, **options)


def _warn_if_exposed(description: str) -> None:
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


@defer.inlineCallbacks
def listen(reactor, settings: AdminSettings, backend: OperatorBackend, hasher: PasswordHasher, **options):
    """Listen on every endpoint of `settings.listen`; fires with the listening ports (stop them
    to stop the admin listener: its log stream ends and its connections close).

    Raises ConfigError for a listener without admin accounts or an unusable endpoint string.
    """
    factory = build_factory(settings, backend, reactor, hasher, **options)
    ports = []
    try:
        for description in settings.listen:
            try:
                endpoint = serverFromString(reactor, description)
            except (ValueError, TypeError, KeyError) as error:
                raise ConfigError(
                    f"admin.listen: {description!r} is not a usable endpoint ({error})"
                ) from None
            _warn_if_exposed(description)
            port = yield endpoint.listen(factory)
            address = port.getHost()
            log.info(
                "admin listener on {host}:{port} ({kind})",
                host=getattr(address, "host", "?"),
                port=getattr(address, "port", "?"),
                kind="TLS" if description.startswith("ssl:") else "plain TCP",
            )
            ports.append(port)
    except Exception:
        for port in ports:
            yield defer.maybeDeferred(port.stopListening)
        raise
    return ports
