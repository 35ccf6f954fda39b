"""Players and accounts of one game: logins, passwords, new accounts, computer players, removing
and reinstating.

A seat belongs to one of the server's accounts (`server.game.server_accounts`): a login checks
the account's password; a new seat is a new account, or an existing account that joins with its
password (or vouched for: an operator, a logged-in player); a password change is the account's
in every game.

`PlayerAccounts` is the part of the write side (`server.game.game.Game`) that changes accounts; like
every write of the game it runs under the game's lock and changes nothing until the store has it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from types import MappingProxyType

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import ruleset
from ruleset import Phase, Problem, join_rng
from ruleset.ai import Level
from server.game.records import log_failed_write
from server.game.write_side import GameWriteSide
from server.model.attendance import computer_seat
from server.model.changes import JOINED, REINSTATED, PasswordChanged, SeatChanged
from server.model.changes import REMOVED as REMOVED_SEAT
from server.model.names import BadName, looks_taken, prepare_username, username_key
from server.model.refusals import (
    ACCOUNT_EXISTS,
    BAD_LOGIN,
    BAD_NAME,
    CREATION_DISABLED,
    GAME_ENDED,
    GAME_FULL,
    NO_SUCH_ACCOUNT,
    NO_SUCH_PLAYER,
    POOL_EXHAUSTED,
    REMOVED_LOGIN,
    WRONG_ACCOUNT_PASSWORD,
    Refused,
    looks_like,
    refuse,
)
from server.model.store import Account, ConflictError
from server.model.writes import (
    MarkReinstated,
    MarkRemoved,
    StoreAccount,
    StoreAttendance,
    StoreNotices,
    StoreOwner,
    StorePasswordHash,
)
from server.views.board import operator_notices

log = Logger()


class PlayerAccounts(GameWriteSide):
    """The accounts part of `Game` (see the module docstring)."""

    def authenticate(self, username: str, password: str) -> defer.Deferred:
        """The player id of a correct login; fails with Refused(BAD_LOGIN) otherwise, taking the
        same time whether or not the name exists, or Refused(REMOVED_LOGIN) for a removed player.
        A correct password whose stored hash is weaker than the policy's is hashed again."""
        account = self._account_named(username)
        d = self.hasher.verify(password, None if account is None else account.password_hash)

        def checked(ok: bool) -> defer.Deferred:
            if not ok or account is None:
                raise Refused(BAD_LOGIN)
            if account.player_id in self._removed:
                raise Refused(REMOVED_LOGIN)
            # a player who resigned still reads their game; the game refuses their orders
            if self.hasher.policy.needs_upgrade(account.password_hash):
                self._upgrade_hash(account, password)
            return self._joined_if_proved(account, password).addCallback(lambda _: account.player_id)

        return d.addCallback(checked)

    def _joined_if_proved(self, account: Account, password: str) -> defer.Deferred:
        """The password was proved for the account: accounts kept apart under its name that
        have the same password are joined to it now (`ServerAccounts.prove`); a failure to join
        them only leaves them apart (and is logged), the login goes on."""
        d = self.server_accounts.prove(account.account_name, password, self.hasher)
        return d.addErrback(
            lambda failure: log.failure(
                "game {game}: joining the accounts of {user} failed",
                failure,
                game=self.setup.name,
                user=account.username,
            )
        )

    def take_password_hash(self, player_id: int, digest: str) -> None:
        """The account holding `player_id`'s seat has a new password hash, stored already (a
        change made through another game): logins here check it, old tokens are revoked."""
        for name, account in list(self._accounts.items()):
            if account.player_id == player_id:
                self._accounts[name] = replace(account, password_hash=digest)
                self._publish(touched=())

    def move_seat(self, player_id: int, owner: str, digest: str) -> defer.Deferred:
        """The seat of `player_id` moves to the server account `owner` (hash `digest`): two
        accounts of one person are joined (`ServerAccounts.prove`)."""
        return self._lock.run(self._move_seat, player_id, owner, digest)

    def _move_seat(self, player_id: int, owner: str, digest: str) -> defer.Deferred:
        seat = next((a for a in self._accounts.values() if a.player_id == player_id), None)
        if seat is None:
            return refuse(NO_SUCH_PLAYER)

        def stored() -> int:
            moved = replace(seat, owner="" if owner == seat.username else owner, password_hash=digest)
            self._accounts[seat.username] = moved
            self._publish(touched=())
            return player_id

        step = StoreOwner(player_id, owner, digest)
        return self._write(PasswordChanged(player_id), (step,), stored)

    def _upgrade_hash(self, account: Account, password: str) -> None:
        """Store a hash of the policy's strength for a password just verified (in the background:
        the login is answered at once; a failure only leaves the old hash in place)."""
        d = self.hasher.hash(password)
        d.addCallback(lambda digest: self._lock.run(self._replace_hash, account.username, digest, account))
        d.addCallbacks(
            lambda _: log.info(
                "game {game}: the password hash of player {player} was upgraded",
                game=self.setup.name,
                player=account.player_id,
            ),
            lambda failure: log_failed_write(
                log,
                failure,
                "game {game}: upgrading the password hash of player {player} failed",
                game=self.setup.name,
                player=account.player_id,
            ),
        )

    def change_password(self, username: str, old_password: str, new_password: str) -> defer.Deferred:
        """A player changes their password (the web API's password change): fails with
        Refused(BAD_LOGIN) for a wrong name or old password (as a login would), or with the
        policy's Refused for a new password that cannot be one. Fires with the player id."""
        problem = self.hasher.policy.problem(new_password)
        if problem is not None:
            return refuse(problem)
        d = self.authenticate(username, old_password)

        def hash_new(player: int) -> defer.Deferred:
            account = self._account_named(username)
            assert account is not None
            return self.hasher.hash(new_password).addCallback(
                lambda digest: self._lock.run(self._replace_hash, account.username, digest, None)
            )

        return d.addCallback(hash_new)

    def set_password(
        self, username: str, password: str | None = None, *, password_hash: str | None = None
    ) -> defer.Deferred:
        """An operator sets a player's password (`tae-server set-password`): a password (checked
        against the policy) or a hash made by `server.game.passwords.hash_password`. Fires with the
        player id; Refused(NO_SUCH_PLAYER) or the policy's Refused."""
        if password_hash is None:
            problem = self.hasher.policy.problem(password or "")
            if problem is not None:
                return refuse(problem)
        account = self._account_named(username)
        if account is None:
            return refuse(NO_SUCH_PLAYER)
        hashed = defer.succeed(password_hash) if password_hash else self.hasher.hash(password or "")
        return hashed.addCallback(
            lambda digest: self._lock.run(self._replace_hash, account.username, digest, None)
        )

    def _replace_hash(self, username: str, digest: str, expected: Account | None) -> defer.Deferred:
        """Store and apply a new password hash (only over `expected`'s, when given: an upgrade
        never undoes a change made meanwhile)."""
        account = self._accounts.get(username)
        if account is None:
            return refuse(NO_SUCH_PLAYER)
        if expected is not None and account.password_hash != expected.password_hash:
            return defer.succeed(account.player_id)

        def stored() -> int:
            self._accounts[username] = replace(account, password_hash=digest)
            self._publish(touched=())  # a new credential mark: the player's API tokens are revoked
            self.server_accounts.password_changed(account.account_name, digest, self)
            return account.player_id

        step = StorePasswordHash(account.player_id, digest)
        return self._write(PasswordChanged(account.player_id), (step,), stored)

    def create_account(
        self,
        username: str,
        password: str,
        email: str = "",
        comment: str = "",
        *,
        creation_setting_applies: bool = True,
        password_hash: str | None = None,
    ) -> defer.Deferred:
        """Add a player; fires with the new player id, or fails with Refused.

        The name may be a server account that plays other games: it joins this one with its
        password (a wrong one: Refused(WRONG_ACCOUNT_PASSWORD)); otherwise a new account is made.
        Operators hand over `password_hash` (made by `server.game.passwords.hash_password`) instead
        of a password: an existing account then joins as vouched for, keeping its own password."""
        d = self.create_or_join(
            username,
            password,
            email,
            comment,
            creation_setting_applies=creation_setting_applies,
            password_hash=password_hash,
        )
        return d.addCallback(lambda made: made[0])

    def create_or_join(
        self,
        username: str,
        password: str,
        email: str = "",
        comment: str = "",
        *,
        creation_setting_applies: bool = True,
        password_hash: str | None = None,
    ) -> defer.Deferred:
        """`create_account`, firing with (player id, whether an existing account joined): a
        join is a password check, not a new account (the brake on account creation counts only
        new ones)."""
        d = self._create_or_join(
            username, password, email, comment, creation_setting_applies, password_hash, True
        )
        return d.addErrback(self._taken_elsewhere)

    def _create_or_join(
        self,
        username: str,
        password: str,
        email: str,
        comment: str,
        creation_setting_applies: bool,
        password_hash: str | None,
        again: bool,
    ) -> defer.Deferred:
        """`create_account`; `again`: when the account was made meanwhile (by another game, as
        the same person joins two games at once), join it as it is now, once."""
        problem = self._account_problem(username, creation_setting_applies)
        if problem is not None:
            return refuse(problem)
        d = self.find_server_account(username)

        def found(existing: tuple[str, str] | None) -> defer.Deferred:
            if existing is not None:
                if password_hash:
                    return joined(self._join_with(existing, email, comment, creation_setting_applies))
                return self.hasher.verify(password, existing[1]).addCallback(proved, existing)
            made = self._new_account(
                username, password, email, comment, creation_setting_applies, password_hash
            ).addCallback(lambda player: (player, False))
            if again:
                made.addErrback(made_meanwhile)
            return made

        def joined(d: defer.Deferred) -> defer.Deferred:
            return d.addCallback(lambda player: (player, True))

        def proved(ok: bool, existing: tuple[str, str]) -> defer.Deferred:
            if not ok:
                raise Refused(WRONG_ACCOUNT_PASSWORD)
            return joined(self._join_with(existing, email, comment, creation_setting_applies))

        def made_meanwhile(failure: Failure) -> defer.Deferred:
            failure.trap(ConflictError)
            return self._create_or_join(
                username, password, email, comment, creation_setting_applies, password_hash, False
            )

        return d.addCallback(found)

    def would_create(self, name: str) -> defer.Deferred:
        """Whether `create_account(name, ...)` would make a new server account rather than
        join the existing one (True also when the store cannot say: the careful answer for the
        brake on account creation, which asks)."""
        d = self.find_server_account(name)
        return d.addCallbacks(lambda found: found is None, lambda failure: True)

    def find_server_account(self, name: str) -> defer.Deferred:
        """(name, password hash) of the server account `name`, None when there is none: from a
        game this process runs, else from the store (games it does not run: a cluster's other
        nodes, or a command line changing one game of a database)."""
        seat = self.server_accounts.account(name)
        if seat is not None:
            return defer.succeed((seat.account_name, seat.password_hash))
        return defer.maybeDeferred(self.store.account_hash, name)

    def _new_account(
        self,
        username: str,
        password: str,
        email: str,
        comment: str,
        creation_setting_applies: bool,
        password_hash: str | None,
    ) -> defer.Deferred:
        taken = looks_taken(username, self.server_accounts.names())
        problem = None if taken is None else looks_like(taken)
        if problem is None and not password_hash:
            problem = self.hasher.policy.problem(password)
        if problem is not None:
            return refuse(problem)
        username = prepare_username(username)  # the name as PRECIS prepares it (checked above)
        hashed = defer.succeed(password_hash) if password_hash else self.hasher.hash(password)
        return hashed.addCallback(
            lambda digest: self._lock.run(
                self._create_account, username, digest, email, comment, creation_setting_applies
            )
        )

    def join_account(
        self, name: str, email: str = "", comment: str = "", *, creation_setting_applies: bool = True
    ) -> defer.Deferred:
        """An existing account of the server joins this game, vouched for by the caller (a
        player logged in with that account): fires with the new player id;
        Refused(NO_SUCH_ACCOUNT), or as `create_account` refuses."""

        def found(existing: tuple[str, str] | None) -> defer.Deferred:
            if existing is None:
                raise Refused(NO_SUCH_ACCOUNT)
            return self._join_with(existing, email, comment, creation_setting_applies)

        return self.find_server_account(name).addCallback(found).addErrback(self._taken_elsewhere)

    def _join_with(
        self, existing: tuple[str, str], email: str, comment: str, creation_setting_applies: bool
    ) -> defer.Deferred:
        name, password_hash = existing
        problem = self._account_problem(name, creation_setting_applies)
        if problem is not None:
            return refuse(problem)
        return self._lock.run(
            self._create_account, name, password_hash, email, comment, creation_setting_applies
        )

    def _create_account(
        self,
        username: str,
        password_hash: str,
        email: str,
        comment: str,
        creation_setting_applies: bool,
    ) -> defer.Deferred:
        problem = self._account_problem(username, creation_setting_applies)
        if problem is not None:
            return refuse(problem)
        player_id = len(self._state.players) + 1
        state, messages = ruleset.add_player(self._state, username, join_rng(self.setup.seed, player_id))
        account = Account(username, password_hash, player_id, email, comment)  # the account's own name

        def stored() -> int:
            self._state = state
            self._accounts[username] = account
            for message in messages:
                self._post(message)
            self._publish()
            self._start_if_ready()
            return player_id

        change = SeatChanged(JOINED, player_id, self._state.turn)
        after = self._preview(state=state)
        return self._write(change, (StoreAccount(account, messages),), stored, after)

    @staticmethod
    def _taken_elsewhere(failure: Failure) -> None:
        """The store has a server account of that name with another password hash than the one
        the game joined or made it with: made, or given a new password, meanwhile."""
        failure.trap(ConflictError)
        raise Refused(WRONG_ACCOUNT_PASSWORD)

    def add_computer_player(self, level: Level, username: str | None = None) -> defer.Deferred:
        """Add a seat the computer plays, from the start and every turn, at `level` (the
        stand-in's machinery, `server.game.stand_in`): the operator's `add-computer`, a game
        created with computer players, and what a page offering a game against the computer
        calls. Without `username` it is named after its level ("computer-hard", then
        "computer-hard-2", …). Nobody logs in to it: its account has no password. Fires with the
        player id; Refused for a name that is taken or bad, a full game or one that is over."""
        return self._lock.run(self._add_computer_player, level, username)

    def _add_computer_player(self, level: Level, username: str | None) -> defer.Deferred:
        if username is None:
            named = self._computer_name(level, set())
            return named.addCallback(lambda name: self._add_computer_player(level, name))
        problem = self._account_problem(username, creation_setting_applies=False)
        if problem is not None:
            return refuse(problem)
        username = prepare_username(username)
        player_id = len(self._state.players) + 1
        state, messages = ruleset.add_player(self._state, username, join_rng(self.setup.seed, player_id))
        account = Account(username, "", player_id, comment=f"computer player ({level.value})")
        seat = computer_seat(player_id, level)

        def stored() -> int:
            self._state = state
            self._accounts[username] = account
            self._attendance[player_id] = seat
            for message in messages:
                self._post(message)
            self._publish()
            log.info(
                "game {game}: computer player {player} ({user}) joined at {ai_level}",
                game=self.setup.name,
                player=player_id,
                user=username,
                ai_level=level.value,
            )
            self._start_if_ready()
            # (A hard seat's search starts when the next turn opens; in the turn it joined, at the
            # turn's end. An operator's command may add it to a stored game, with no server to think.)
            if self._started and not self.busy:
                if self._finished:
                    self._check_turn_end()  # the others may all have finished already
                self._end_if_only_stand_ins_act()
            return player_id

        attendance = dict(self._attendance)
        attendance[player_id] = seat
        after = self._preview(state=state, attendance=MappingProxyType(attendance))
        change = SeatChanged(JOINED, player_id, self._state.turn)
        steps = (StoreAccount(account, messages), StoreAttendance((seat,), ()))
        return self._write(change, steps, stored, after)

    def _computer_name(self, level: Level, skipped: set[str]) -> defer.Deferred:
        """Deferred[the first name after `level` free in this game whose server account, if
        there is one, is a computer player's (no password): every game's `computer-normal` is
        one account nobody logs in to, and a person's account of that name is passed over."""
        name = self._free_computer_name(level, skipped)

        def found(existing: tuple[str, str] | None) -> str | defer.Deferred:
            if existing is None or not existing[1]:
                return name
            skipped.add(name)
            return self._computer_name(level, skipped)

        return self.find_server_account(name).addCallback(found)

    def _free_computer_name(self, level: Level, skipped: Collection[str] = ()) -> str:
        taken = list(self._accounts) + [p.name for p in self._state.players] + list(skipped)
        base = f"computer-{level.value}"
        name, number = base, 1
        while looks_taken(name, taken) is not None:
            number += 1
            name = f"{base}-{number}"
        return name

    def _account_problem(self, username: str, creation_setting_applies: bool) -> Problem | None:
        if creation_setting_applies and not self.setup.account_creation:
            return CREATION_DISABLED
        try:
            username = prepare_username(username)
        except BadName:
            return BAD_NAME
        taken = looks_taken(username, list(self._accounts) + [p.name for p in self._state.players])
        if taken is not None:
            return ACCOUNT_EXISTS if username_key(taken) == username_key(username) else looks_like(taken)
        if self._state.phase is Phase.OVER:
            return GAME_ENDED
        if self.setup.max_players and len(self._state.players) >= self.setup.max_players:
            return GAME_FULL
        if not ruleset.can_deal_hand(self._state):
            return POOL_EXHAUSTED
        return None

    def remove_player(self, username: str) -> defer.Deferred:
        """An operator removes a player: they can no longer log in or give orders, and the turn
        no longer waits for them (their fleets stay; orders already accepted are kept).
        Fires with the player id (removing twice is not an error); Refused(NO_SUCH_PLAYER)."""
        return self._lock.run(self._remove_player, username)

    def _remove_player(self, username: str) -> defer.Deferred:
        player_id = self.player_id(username)
        if player_id is None:
            return refuse(NO_SUCH_PLAYER)
        if player_id in self._removed:
            return defer.succeed(player_id)
        # everyone is told, the removed player too (they read it if taken back)
        name = self.snapshot.usernames.get(player_id, username)
        notices = self._notices_for_everyone(operator_notices.removed(name))

        def removed() -> int:
            self._post_notices(notices)
            self._removed.add(player_id)
            self._finished.discard(player_id)
            self._publish()  # the player's Player frame says "Removed" from now on
            log.info(
                "game {game}: player {player} ({user}) removed",
                game=self.setup.name,
                player=player_id,
                user=username,
            )
            if self._started and self._finished and not self.busy:
                self._check_turn_end()  # the others may all have finished already
            return player_id

        change = SeatChanged(REMOVED_SEAT, player_id, self._state.turn)
        after = self._preview(
            removed_players=frozenset(self._removed | {player_id}),
            finished=frozenset(self._finished - {player_id}),
        )
        return self._write(change, (MarkRemoved(player_id), StoreNotices(notices)), removed, after)

    def reinstate_player(self, username: str) -> defer.Deferred:
        """An operator takes back a removal: the player can log in and give orders again and
        the turn waits for them again. Fires with (player id, whether they were removed);
        Refused(NO_SUCH_PLAYER)."""
        return self._lock.run(self._reinstate_player, username)

    def _reinstate_player(self, username: str) -> defer.Deferred:
        player_id = self.player_id(username)
        if player_id is None:
            return refuse(NO_SUCH_PLAYER)
        if player_id not in self._removed:
            return defer.succeed((player_id, False))
        name = self.snapshot.usernames.get(player_id, username)
        # told after the removal is taken back: the reinstated player reads it too
        notices = self._notices_for_everyone(operator_notices.reinstated(name), self._removed - {player_id})

        def stored() -> tuple[int, bool]:
            self._removed.discard(player_id)
            self._post_notices(notices)
            self._publish()  # the Player frame is "Human" again
            log.info(
                "game {game}: player {player} ({user}) reinstated",
                game=self.setup.name,
                player=player_id,
                user=username,
            )
            return (player_id, True)

        change = SeatChanged(REINSTATED, player_id, self._state.turn)
        after = self._preview(removed_players=frozenset(self._removed - {player_id}))
        return self._write(change, (MarkReinstated(player_id), StoreNotices(notices)), stored, after)
