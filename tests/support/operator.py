"""The operator command table driven as the command line drives it, in process: the words of a
`tae-server` command (`operate(db, "extend", "g", "2h", wallclock=...)`) read by the table and
carried out by `server.operating.on_database.operate`, without a server or through a running
server's desk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.game.passwords import InlineHasher
from server.operating import on_database
from server.operating.commands import BY_NAME

#: Cheap hashes for tests (scrypt N = 16).
HASHER = InlineHasher(n=16)


def operate(
    db, name: str, *words: str, wallclock: Callable[[], float], hasher=HASHER, **options: Any
) -> on_database.Outcome:
    """Do `tae-server NAME WORDS...` (with `options` by key) on the database `db`."""
    command = BY_NAME[name]
    wait = options.pop("wait", on_database.DEFAULT_WAIT_S)
    values = command.read(list(words), options)
    return on_database.operate(db, command, values, hasher=hasher, wallclock=wallclock, wait=wait)
