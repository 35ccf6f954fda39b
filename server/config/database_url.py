"""Checks of the configured database URL that need no connection: the driver it names is
installed, and it is not one of PostgreSQL's own databases.

* A `postgresql+psycopg://` URL needs psycopg, which the `postgres` extra installs; without it
  the operator reads the command that installs it, not Python's "No module named 'psycopg'".
* PostgreSQL's maintenance database `postgres` and its templates (`template0`, `template1`, and
  any `template…`) are not for an application's tables: a new database made from a template
  would copy them. They are refused unless the operator says so (`--allow-system-database`).
"""

from __future__ import annotations

import importlib.util

from sqlalchemy.engine import make_url

from server.config.errors import ConfigError

#: The PostgreSQL driver the `postgres` extra installs, and the command that installs it.
POSTGRES_DRIVER = "psycopg"
INSTALL_POSTGRES = "pip install 'tpserver-tae[postgres]'"
#: The driver module each SQLAlchemy PostgreSQL dialect imports.
_DRIVER_MODULES = {"psycopg": "psycopg", "psycopg2": "psycopg2", "pg8000": "pg8000", "asyncpg": "asyncpg"}


def _parsed(url: str):
    try:
        return make_url(url)
    except Exception:
        return None  # the database layer says what is wrong with the URL


def check_driver(url: str | None, where: str = "database") -> None:
    """ConfigError naming the install command when a PostgreSQL URL's driver is missing."""
    parsed = _parsed(url) if url else None
    if parsed is None or parsed.get_backend_name() != "postgresql":
        return
    driver = parsed.get_driver_name() or "psycopg2"
    module = _DRIVER_MODULES.get(driver, driver)
    if importlib.util.find_spec(module) is not None:
        return
    if driver == POSTGRES_DRIVER:
        raise ConfigError(
            f"{where}: PostgreSQL needs the psycopg driver, which is not installed: {INSTALL_POSTGRES}"
        )
    raise ConfigError(
        f"{where}: the {driver} driver is not installed; the server speaks to PostgreSQL through psycopg: "
        f"{INSTALL_POSTGRES} and write the URL as postgresql+psycopg://USER@HOST/NAME"
    )


def system_database(url: str | None) -> str | None:
    """The name of the PostgreSQL system database `url` points at (`postgres`, `template1`, ...),
    or None."""
    parsed = _parsed(url) if url else None
    if parsed is None or parsed.get_backend_name() != "postgresql":
        return None
    name = (parsed.database or "").strip()
    if name == "postgres" or name.startswith("template"):
        return name
    return None


def check_not_system_database(url: str | None, where: str, allow: bool) -> None:
    """ConfigError for PostgreSQL's own databases, unless `allow`."""
    name = system_database(url)
    if name is None or allow:
        return
    raise ConfigError(
        f"{where}: {name!r} is one of PostgreSQL's own databases (the maintenance database or a "
        "template); create one for the server (createdb tae) and name it in the URL, or give "
        "--allow-system-database to use this one anyway"
    )
