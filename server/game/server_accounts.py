"""The server's accounts: one name and password for every game the account joined.

A seat of a game (`server.model.store.Account`) belongs to one server account, named by
`Account.account_name`; the account's password hash is the same in each of its seats. This is
the view over the games of one server (`server.game.directory.GameDirectory`) that finds an
account by name, passes a new password hash on to its other games, lists its seats, and joins
accounts kept apart (`alice~g2`, made by revision 0007a from per-game accounts that shared a
name) once their owner proves each password.

It keeps nothing of its own: every seat is in its game, which stores and applies its changes
under its lock. In a cluster it sees the games this node runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from twisted.internet import defer
from twisted.logger import Logger

from server.game.passwords import InlineHasher, PasswordHasher, credential_mark
from server.model.names import kept_apart_from, lookup_key
from server.model.refusals import BAD_LOGIN, Refused
from server.model.store import Account

log = Logger()


class Game(Protocol):
    """What this needs of a game (`server.game.game.Game`, which imports this module)."""

    hasher: PasswordHasher
    store: Any

    @property
    def accounts(self) -> Mapping[str, Account]: ...

    def take_password_hash(self, player_id: int, digest: str) -> None: ...

    def move_seat(self, player_id: int, owner: str, digest: str) -> Any: ...


class ServerAccounts:
    """The accounts of the games `games()` gives (see the module docstring)."""

    def __init__(self, games: Callable[[], Iterable[Game]]):
        self._games = games

    def seats(self, name: str) -> list[tuple[Game, Account]]:
        """Every seat the account `name` holds (compared as names are: `username_key`)."""
        key = lookup_key(name)
        if key is None:
            return []
        found = [
            (game, account)
            for game in self._games()
            for account in game.accounts.values()
            if lookup_key(account.account_name) == key
        ]
        # an exact match first: a game from before names were compared so may hold two
        # accounts whose names differ only in case (as `Game._account_named` reads them)
        exact = [(game, account) for game, account in found if account.account_name == name]
        return exact or found

    def account(self, name: str) -> Account | None:
        """A seat of the account `name` (its hash is the account's), None when there is none."""
        seats = self.seats(name)
        return seats[0][1] if seats else None

    def names(self) -> set[str]:
        """The name of every account (for the check that a new name looks like none of them)."""
        return {account.account_name for game in self._games() for account in game.accounts.values()}

    def kin(self, name: str) -> list[str]:
        """The accounts `name` may be joined with: for `alice` those kept apart as `alice~…`,
        for `alice~g2` the account `alice` and the other `alice~…`. Main account first."""
        base = kept_apart_from(name) or name
        base_key = lookup_key(base)
        if base_key is None:
            return []
        found = {
            account.account_name
            for game in self._games()
            for account in game.accounts.values()
            if lookup_key(kept_apart_from(account.account_name) or account.account_name) == base_key
        }
        found.discard(name)
        return sorted(found, key=lambda other: (kept_apart_from(other) is not None, other))

    def password_changed(self, name: str, digest: str, source: object) -> None:
        """Every other game with a seat of the account takes its new hash (stored already)."""
        for game, account in self.seats(name):
            if game is not source:
                game.take_password_hash(account.player_id, digest)

    def credential_mark(self, name: str) -> str:
        """`server.game.passwords.credential_mark` of the account's hash ("" for no account)."""
        account = self.account(name)
        return "" if account is None else credential_mark(account.password_hash)

    def authenticate(self, name: str, password: str) -> defer.Deferred:
        """The name of the account of a correct name and password (joined with the accounts kept
        apart that the password proves, `prove`); Refused(BAD_LOGIN) otherwise. A name kept
        apart (`alice~g2`) cannot be typed: `alice` with that account's password finds it. An
        account with no seat in these games (a cluster's other nodes run them) is looked up in
        the store."""
        games = list(self._games())
        hasher = games[0].hasher if games else InlineHasher()
        main = self.account(name)
        candidates = [main.account_name, *self.kin(name)] if main else self.kin(name)
        found: defer.Deferred
        if candidates or not games:
            found = defer.succeed([(c, self.account(c)) for c in candidates])
        else:
            stored = defer.maybeDeferred(games[0].store.account_hash, name)
            found = stored.addCallback(
                lambda row: [] if row is None else [(row[0], Account(row[0], row[1], 0))]
            )

        def verify(pairs: list[tuple[str, Account | None]]) -> defer.Deferred:
            checks = [
                hasher.verify(password, None if account is None else account.password_hash)
                for _, account in pairs or [("", None)]
            ]
            return defer.DeferredList(checks, consumeErrors=True).addCallback(checked, [c for c, _ in pairs])

        def checked(results: list[tuple[bool, bool]], names: list[str]) -> defer.Deferred:
            proved = [c for c, (_, ok) in zip(names, results, strict=False) if ok]
            if not proved:
                raise Refused(BAD_LOGIN)
            return self.prove(proved[0], password, hasher)

        return found.addCallback(verify)

    def prove(self, name: str, password: str, hasher: PasswordHasher) -> defer.Deferred:
        """`password` is proved for the account `name`: join to it every account kept apart
        under the same name whose password it is too (all go to the main account `alice`, when
        it is one of them). Fires with the name of the account the proved one is now part of."""
        kin = self.kin(name)
        if not kin:
            return defer.succeed(name)
        checks = []
        for other in kin:
            account = self.account(other)
            checks.append(hasher.verify(password, None if account is None else account.password_hash))

        def checked(results: list[tuple[bool, bool]]) -> defer.Deferred:
            proved = sorted(
                [name, *(other for other, (_, ok) in zip(kin, results, strict=False) if ok)],
                key=lambda other: (kept_apart_from(other) is not None, other),
            )
            main = proved[0]
            if len(proved) == 1 or kept_apart_from(main) is not None:
                return defer.succeed(name)  # only accounts kept apart: they stay apart
            target = self.account(main)
            assert target is not None
            # one seat per account in a game: an account with a seat in a game the main account
            # plays too (two players of one game whose names differ only in case) stays apart
            played = {id(game) for game, _ in self.seats(main)}
            joining = [
                other for other in proved[1:] if not any(id(game) in played for game, _ in self.seats(other))
            ]
            moves = [
                game.move_seat(account.player_id, main, target.password_hash)
                for other in joining
                for game, account in self.seats(other)
            ]
            for other in joining:
                log.info("account {other} joined to account {main}", other=other, main=main)
            return defer.gatherResults(moves, consumeErrors=True).addCallback(lambda _: main)

        return defer.DeferredList(checks, consumeErrors=True).addCallback(checked)
