"""Opening a database the way every command does: the URL checked, the schema revision checked.

The server (asynchronously, on its database thread) and the command-line tools (synchronously)
both open a database in three steps: make the store from the URL, read the schema revision, and
then either create the schema (an empty database, when creating is allowed), go on (the newest
revision), or refuse (an older or unknown revision: `tae-server upgrade-db` first). The checks
and the one-line messages for the operator are here, once.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url

from server.database.migrate import head_revision


class DatabaseProblem(Exception):
    """A database that cannot be used as it is; the message is one line for the operator."""


class UnusableURL(DatabaseProblem):
    """The URL is malformed or names a driver that is not installed (a configuration error)."""


class WrongSchema(DatabaseProblem):
    """The database has no schema where one is needed, or another revision than this program's."""


class Unreachable(DatabaseProblem):
    """The database cannot be reached or read (an operational failure)."""


def shown_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


def one_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    return text[0] if text else type(error).__name__


SUPPORTED = ("sqlite", "postgresql")


def unusable(url: str, error: BaseException) -> UnusableURL:
    try:
        backend = make_url(url).get_backend_name()
    except Exception:
        backend = None
    if backend is not None and backend not in SUPPORTED:
        return UnusableURL(
            f"database: cannot use {shown_url(url)!r}: the server keeps its games in SQLite "
            "(sqlite:///FILE) or PostgreSQL (postgresql+psycopg://USER@HOST/NAME), not "
            f"{backend}"
        )
    return UnusableURL(f"database: cannot use {shown_url(url)!r}: {one_line(error)}")


def unreachable(url: str, error: BaseException) -> Unreachable:
    return Unreachable(f"database: cannot open {shown_url(url)}: {one_line(error)}")


def needs_schema(url: str, revision: str | None, *, create: bool) -> bool:
    """Whether the schema must be created now; WrongSchema when the database cannot be used."""
    if revision is None:
        if create:
            return True
        raise WrongSchema(
            f"database {shown_url(url)} has no games (no schema yet): start the server or create a game first"
        )
    if revision != head_revision():
        raise WrongSchema(
            f"database {shown_url(url)} is at schema revision {revision}, this program needs "
            f"{head_revision()}: run `tae-server upgrade-db` first"
        )
    return False
