"""Connection settings of ``tae-client``: flags, then environment, then a TOML file, then defaults.

Each setting has one name used everywhere: the flag ``--host``, the environment variable
``TAE_HOST`` and the key ``host`` of the configuration file. The file is ``--config FILE``, else
``$TAE_CLIENT_CONFIG``, else ``$XDG_CONFIG_HOME/tae-client/config.toml`` (by default
``~/.config/tae-client/config.toml``); only an explicitly named file must exist::

    # ~/.config/tae-client/config.toml
    host = "tae.example.org"
    port = 6923
    user = "alice@tae"          # NAME or NAME@GAME
    password = "secret"         # keep the file private: chmod 600
    protocol = "tp04"           # or "tp03"
    timeout = 30                # seconds per request
    tls = true                  # TLS from the first byte (the server's ssl: listener, port 6924)
    ca_file = "/etc/tae/ca.pem" # trust these certificates instead of the system's
    insecure = false            # true: accept any certificate (self-signed test servers only)
    web_url = "https://tae.example.org"  # the web listener (default http://HOST:8080)

One msgspec schema (``ConfigFile``) declares every key's type and range; values from flags and
the environment are strings and are converted by the same schema. Every problem is a
``SettingsError`` whose message names the setting and where it came from, and never contains a
password. A file that holds a password and that other users can read gives a warning
(``Settings.warnings``; the CLI prints it on stderr).
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import msgspec

from protocol import Version

from .schema_errors import Problem, key_problem

__all__ = [
    "ConfigFile",
    "Settings",
    "SettingsError",
    "default_config_path",
    "resolve_settings",
]

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 6923
DEFAULT_TLS_PORT = 6924
DEFAULT_WEB_PORT = 8080
DEFAULT_TIMEOUT = 30.0
CONFIG_ENVIRONMENT = "TAE_CLIENT_CONFIG"

_PROTOCOLS = {"tp03": Version.TP03, "tp04": Version.TP04}
_FLAGS = ("tls", "insecure")
_FLAG_WORDS = {"yes": "true", "on": "true", "no": "false", "off": "false"}
_NON_BLANK = r"\S"


class ConfigFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The schema of the configuration file, and of each flag and variable (None: not given)."""

    host: Annotated[str, msgspec.Meta(pattern=_NON_BLANK)] | None = None
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] | None = None
    user: Annotated[str, msgspec.Meta(pattern=r"^\s*[^@\s]")] | None = None
    password: str | None = None
    protocol: Annotated[str, msgspec.Meta(pattern=r"^(tp03|tp04)$")] | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0, le=1e9)] | None = None
    tls: bool | None = None
    ca_file: Annotated[str, msgspec.Meta(pattern=_NON_BLANK)] | None = None
    insecure: bool | None = None
    web_url: Annotated[str, msgspec.Meta(pattern=r"^https?://[^/\s]+")] | None = None


#: Every setting, in the order ``tae-client settings`` shows them.
KEYS: tuple[str, ...] = ConfigFile.__struct_fields__
#: The connection settings (``sources`` of ``tae-client settings``); the rest are TLS settings.
CONNECTION_KEYS = ("host", "port", "user", "password", "protocol", "timeout", "web_url")
TLS_KEYS = ("tls", "ca_file", "insecure")
#: Setting name → its environment variable.
ENVIRONMENT = {key: f"TAE_{key.upper()}" for key in KEYS}

#: What to say when a value does not fit the schema (the value is passed in, never for passwords).
_PROBLEMS: dict[str, Callable[[object], str]] = {
    "host": lambda value: "must be a string" if not isinstance(value, str) else "must not be empty",
    "port": lambda value: "the port must be a number from 1 to 65535",
    "user": lambda value: "the user must be NAME or NAME@GAME",
    "password": lambda value: "must be a string",
    "protocol": lambda value: (
        f"the protocol must be tp03 or tp04, not {value!r}" if isinstance(value, str) else "must be a string"
    ),
    "timeout": lambda value: "the timeout must be a positive number of seconds",
    "tls": lambda value: "must be true or false",
    "ca_file": lambda value: "must be the path of a PEM file",
    "insecure": lambda value: "must be true or false",
    "web_url": lambda value: "the web address must be http://HOST[:PORT] or https://HOST[:PORT]",
}


class SettingsError(ValueError):
    """A setting that cannot be used (bad value, unreadable file); the CLI exits with 2."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Where to connect and who to be. ``sources`` says, per setting, where its value came
    from: "flag", "env", "file" or "default". ``warnings`` are for the user's eyes (stderr)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    protocol: str = "tp04"
    timeout: float = DEFAULT_TIMEOUT
    tls: bool = False
    ca_file: str | None = None
    insecure: bool = False
    web_url: str | None = None
    config_path: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

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

    @property
    def web_address(self) -> str:
        """The server's web listener: ``web_url``, else port 8080 of the TP host."""
        if self.web_url:
            return self.web_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{DEFAULT_WEB_PORT}"

    def public(self) -> dict[str, object]:
        """The settings as plain data with the password masked (for ``tae-client settings``)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": "********" if self.password else None,
            "protocol": self.protocol,
            "timeout": self.timeout,
            "web_url": self.web_address,
            "config": str(self.config_path) if self.config_path else None,
            "sources": {key: self.sources[key] for key in CONNECTION_KEYS if key in self.sources},
            "tls": {
                "enabled": self.tls,
                "ca_file": self.ca_file,
                "insecure": self.insecure,
                "sources": {key: self.sources[key] for key in TLS_KEYS if key in self.sources},
            },
        }


def default_config_path(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "tae-client" / "config.toml"


def resolve_settings(
    flags: Mapping[str, object | None],
    environ: Mapping[str, str] | None = None,
    config: str | os.PathLike[str] | None = None,
) -> Settings:
    """Merge ``flags`` (None = not given) over ``environ`` over the config file over defaults.

    ``config`` is the ``--config`` flag; without it ``$TAE_CLIENT_CONFIG`` or the default path
    is read if it exists. Without a port anywhere, a TLS connection uses 6924, a plain one 6923.
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
            values[key], sources[key] = _convert(key, flag, f"--{key.replace('_', '-')}"), "flag"
        elif environ.get(ENVIRONMENT[key], "") != "":
            values[key] = _convert(key, environ[ENVIRONMENT[key]], f"${ENVIRONMENT[key]}")
            sources[key] = "env"
        elif key in from_file:
            values[key] = _convert(key, from_file[key], f"{path}: {key}")
            sources[key] = "file"
        else:
            sources[key] = "default"
    if sources["port"] == "default" and values.get("tls"):
        values["port"] = DEFAULT_TLS_PORT
    warnings: tuple[str, ...] = ()
    if "password" in from_file:
        warnings = _permission_warnings(path)
    return Settings(
        config_path=path if from_file or (required and path.exists()) else None,
        sources=sources,
        warnings=warnings,
        **values,  # type: ignore[arg-type]  # each value has its key's type (the schema says so)
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
    """Check and convert one value with the schema; ``where`` names its origin in the error."""
    given = value
    if isinstance(value, str):
        value = value.strip() if key != "password" else value
        if key == "protocol":
            value = value.lower()
        elif key in _FLAGS:
            value = _FLAG_WORDS.get(value.lower(), value)
    try:
        # strict=False: "6923" from a flag or a variable is the number 6923, "true" is true.
        checked = msgspec.convert({key: value}, ConfigFile, strict=False)
    except msgspec.ValidationError as error:
        problem = key_problem(error)
        if problem.problem is not Problem.INVALID or problem.key != key:
            raise  # pragma: no cover - a key we checked; a bug if it happens
        raise SettingsError(f"{where}: {_PROBLEMS[key](given if key != 'password' else None)}") from None
    return getattr(checked, key)


def _permission_warnings(path: Path) -> tuple[str, ...]:
    """A warning when a config file with a password can be read by other users."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return ()
    if os.name != "posix" or not mode & (stat.S_IRGRP | stat.S_IROTH):
        return ()
    who = "everyone" if mode & stat.S_IROTH else "its group"
    return (
        f"warning: config file {path} holds a password and {who} can read it "
        f"(mode {stat.S_IMODE(mode):04o}); run: chmod 600 {path}",
    )
