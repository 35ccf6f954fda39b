"""`tae-server backup FILE`: a consistent copy of a SQLite database, also while a server runs.

Copying `tae.db` with `cp` while the server runs gives an old or torn game: the newest turns
are still in the write-ahead log (`tae.db-wal`). This copies through SQLite's online backup API
(`sqlite3.Connection.backup`) in one step, which reads one consistent snapshot (WAL lets the
server keep writing meanwhile); the copy is written next to FILE under a temporary name, made a
self-contained file (journal mode DELETE: no -wal file belongs to it), cleared of the live
server's lease (the copy is not in use: a server started on it at once must not be told that
another server is using it), checked with `PRAGMA integrity_check`, and only then renamed to
FILE.

PostgreSQL databases are backed up with PostgreSQL's own tools (`pg_dump`); `backup` says so.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from server.database.engine import is_memory_sqlite
from server.database.opening import shown_url
from server.operating.game_actions import OperationError

PG_DUMP_HINT = (
    "back up PostgreSQL with pg_dump, e.g. `pg_dump --format=custom --file=tae.dump {url}`, "
    "and restore with pg_restore"
)


@dataclass(frozen=True, slots=True)
class BackupResult:
    target: Path
    size: int
    games: int
    revision: str | None

    def describe(self, source: str) -> str:
        return (
            f"backed up {source} to {self.target} ({self.games} game{'s' if self.games != 1 else ''}, "
            f"{self.size} bytes, schema revision {self.revision or 'none'})"
        )


def _sqlite_path(url: str) -> Path:
    try:
        parsed = make_url(url)
    except Exception:
        raise OperationError(f"database: {url!r} is not a database URL") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        libpq = parsed.set(drivername="postgresql").render_as_string(hide_password=True)
        raise OperationError(f"database {shown_url(url)} is PostgreSQL: {PG_DUMP_HINT.format(url=libpq)}")
    if backend != "sqlite":
        raise OperationError(f"database {shown_url(url)}: backup copies SQLite databases only")
    if is_memory_sqlite(parsed):
        raise OperationError("database: an in-memory database cannot be backed up")
    path = Path(str(parsed.database))
    if not path.is_file():
        raise OperationError(f"database {shown_url(url)}: no such file")
    return path


def backup(url: str, target: str | Path, *, force: bool = False) -> BackupResult:
    """Copy the SQLite database at `url` to `target` (OperationError for anything that stops it;
    an existing `target` is replaced only with `force`)."""
    source_path = _sqlite_path(url)
    target = Path(target)
    if target.exists() and not force:
        raise OperationError(f"{target} exists (use --force to replace it)")
    if target.resolve() == source_path.resolve():
        raise OperationError(f"{target} is the database itself")
    if not target.parent.is_dir():
        raise OperationError(f"{target.parent} is not a folder")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        source = sqlite3.connect(f"file:{source_path.resolve()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as error:
        raise OperationError(f"database {shown_url(url)}: cannot open: {error}") from None
    try:
        copy = sqlite3.connect(partial)
        try:
            source.backup(copy)  # one step: one consistent snapshot of the database
            _release_lease(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            check = copy.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":
                raise OperationError(f"the copy failed its integrity check: {check}")
            games, revision = _summary(copy)
        finally:
            copy.close()
        os.replace(partial, target)
    except sqlite3.Error as error:
        raise OperationError(f"backup of {shown_url(url)} failed: {error}") from None
    except OSError as error:
        raise OperationError(f"backup to {target} failed: {error.strerror or error}") from None
    finally:
        source.close()
        for leftover in (partial, partial.with_name(partial.name + "-journal")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
    return BackupResult(target, target.stat().st_size, games, revision)


def _release_lease(connection: sqlite3.Connection) -> None:
    """The copy is used by no server: forget the lease the live server holds on the original."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "server_lease" in tables:
        with connection:
            connection.execute("DELETE FROM server_lease")


def _summary(connection: sqlite3.Connection) -> tuple[int, str | None]:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    games = connection.execute("SELECT count(*) FROM games").fetchone()[0] if "games" in tables else 0
    revision = None
    if "alembic_version" in tables:
        row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        revision = row[0] if row else None
    return int(games), revision
