"""The `[discovery]` section of the configuration: advertising the games on the local network."""

from __future__ import annotations

from typing import Any

import msgspec

from server.config.errors import ConfigError, describe_validation_error


class DiscoverySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The `[discovery]` section of the configuration, and its schema (for
    `server.config.file.ConfigFile`): `enabled` (off by default), and the operator's e-mail address
    and a comment for the TXT keys `admin` and `cmt`."""

    enabled: bool = False
    admin_email: str = ""
    comment: str = ""


def parse_discovery_settings(table: Any, where: str = "discovery") -> DiscoverySettings:
    """The `[discovery]` TOML table (a dict) as DiscoverySettings; ConfigError names the key."""

    try:
        return msgspec.convert(table, type=DiscoverySettings)
    except msgspec.ValidationError as error:
        message = describe_validation_error(error)
    if message.startswith("the file:"):
        raise ConfigError(where + message.removeprefix("the file")) from None
    separator = ": " if message.startswith("unknown setting") else "."
    raise ConfigError(f"{where}{separator}{message}") from None
