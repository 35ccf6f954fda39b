"""Connection settings of ``tae-client``: flags, then environment, then a TOML file, then defaults.

Each setting has one name used everywhere: the flag ``--host``, the environment variable
``TAE_HOST`` and the key ``host`` of the configuration file. The file is ``--config FILE``, else
``$TAE_CLIENT_CONFIG``, else ``$XDG_CONFIG_HOME/tae-client/config.toml`` (by default
``~/.config/tae-client/config.toml``); only an explicitly named file must exist::

    # ~/.config/tae-client/config.toml
    host = "tae.example.org"
    port = 6923
    user = "alice@tae"          # NAME or NAME@GAME
    password = "secret"
    protocol = "tp04"           # or "tp03"
    timeout = 30                # seconds per request

Every problem is a ``SettingsError`` whose message names the setting and where it came from,
and never contains a password.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from protocol import Version

__all__ = [
    "DEFAULTS",
    "ENVIRONMENT",
    "KEYS",
    "Settings",
    "SettingsError",
    "default_config_path",
    "resolve_settings",
]

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 6923
DEFAULT_TIMEOUT = 30.0

#: Setting name → its environment variable.
ENVIRONMENT = {
    "host": "TAE_HOST",
    "port": "TAE_PORT",
    "user": "TAE_USER",
    "password": "TAE_PASSWORD",
    "protocol": "TAE_PROTOCOL",
    "timeout": "TAE_TIMEOUT",
}
KEYS = tuple(ENVIRONMENT)
CONFIG_ENVIRONMENT = "TAE_CLIENT_CONFIG"
DEFAULTS: dict[str, object] = {
    "host": DEFAULT_HOST,
    "port": DEFAULT_PORT,
    "user": None,
    "password": None,
    "protocol": "tp04",
    "timeout": DEFAULT_TIMEOUT,
}
_PROTOCOLS = {"tp03": Version.TP03, "tp04": Version.TP04}


class SettingsError(ValueError):
    """A setting that cannot be used (bad value, unreadable file); the CLI exits with 2."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Where to connect and who to be. ``sources`` says, per setting, where its value came
    from: "flag", "env", "file" or "default"."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    protocol: str = "tp04"
    timeout: float = DEFAULT_TIMEOUT
    config_path: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def version(self) -> Version:
        return _PROTOCOLS[self.protocol]

    @property
    def username(self) -> str | None:
        """The name without ``@GAME``."""
        return self.user.split("@", 1)[0] if self.user else None

    @property
    def game(self) -> str | None:
        """The game of ``NAME@GAME``, None when the server's default game is meant."""
        if self.user and "@" in self.user:
            return self.user.split("@", 1)[1] or None
        return None

    def public(self) -> dict[str, object]:
        """The settings as plain data with the password masked (for ``tae-client settings``)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": "********" if self.password else None,
            "protocol": self.protocol,
            "timeout": self.timeout,
            "config": str(self.config_path) if self.config_path else None,
            "sources": dict(self.sources),
        }


def default_config_path(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "tae-client" / "config.toml"


def resolve_settings(
    flags: Mapping[str, object | None],
    environ: Mapping[str, str] | None = None,
    config: str | os.PathLike | None = None,
) -> Settings:
    """Merge ``flags`` (None = not given) over ``environ`` over the config file over defaults.

    ``config`` is the ``--config`` flag; without it ``$TAE_CLIENT_CONFIG`` or the default path
    is read if it exists.
    """
    environ = os.environ if environ is None else environ
    if config is not None:
        path, required = Path(config), True
    elif environ.get(CONFIG_ENVIRONMENT):
        path, required = Path(environ[CONFIG_ENVIRONMENT]), True
    else:
        path, required = default_config_path(environ), False
    from_file = _read_config(path, required)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        flag = flags.get(key)
        if flag is not None:
            values[key], sources[key] = _convert(key, flag, f"--{key}"), "flag"
        elif environ.get(ENVIRONMENT[key], "") != "":
            values[key] = _convert(key, environ[ENVIRONMENT[key]], f"${ENVIRONMENT[key]}")
            sources[key] = "env"
        elif key in from_file:
            values[key] = _convert(key, from_file[key], f"{path}: {key}")
            sources[key] = "file"
        else:
            values[key], sources[key] = DEFAULTS[key], "default"
    return Settings(
        config_path=path if from_file or (required and path.exists()) else None,
        sources=sources,
        **values,
    )


def _read_config(path: Path, required: bool) -> dict[str, object]:
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        if required:
            raise SettingsError(f"config file {path} does not exist") from None
        return {}
    except IsADirectoryError:
        raise SettingsError(f"config file {path} is a directory") from None
    except OSError as error:
        raise SettingsError(f"cannot read config file {path}: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"config file {path} is not valid TOML: {error}") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise SettingsError(f"config file {path}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    return data


def _convert(key: str, value: object, where: str) -> object:
    """Check and convert one value; ``where`` names its origin in the error message."""
    if key == "port":
        number = _integer(value)
        if number is None or not 0 < number < 65536:
            raise SettingsError(f"{where}: the port must be a number from 1 to 65535")
        return number
    if key == "timeout":
        try:
            seconds = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            seconds = None
        if seconds is None or not seconds > 0 or seconds != seconds or seconds == float("inf"):
            raise SettingsError(f"{where}: the timeout must be a positive number of seconds")
        return seconds
    if not isinstance(value, str):
        raise SettingsError(f"{where}: must be a string")
    if key == "protocol":
        name = value.strip().lower()
        if name not in _PROTOCOLS:
            raise SettingsError(f"{where}: the protocol must be tp03 or tp04, not {value!r}")
        return name
    if key == "password":
        return value  # never quoted in a message
    if key == "user":
        name = value.strip()
        if not name or name.startswith("@"):
            raise SettingsError(f"{where}: the user must be NAME or NAME@GAME")
        return name
    if not value.strip():
        raise SettingsError(f"{where}: must not be empty")
    return value.strip()


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None
