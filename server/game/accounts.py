"""Players and accounts of one game: logins, passwords, new accounts, removing and reinstating.

`PlayerAccounts` is the part of the write side (`server.game.game.Game`) that changes accounts; like
every write of the game it runs under the game's lock and changes nothing until the store has it.
"""

from __future__ import annotations

from dataclasses import replace

from twisted.internet import defer
from twisted.logger import Logger

import ruleset
from ruleset import Phase, Problem, join_rng
from server.game.records import log_failed_write
from server.game.write_side import GameWriteSide
from server.model.attendance import Presence, attendance_of
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
    NO_SUCH_PLAYER,
    POOL_EXHAUSTED,
    REMOVED_LOGIN,
    RESIGNED,
    Refused,
    looks_like,
    refuse,
)
from server.model.store import Account
from server.model.writes import MarkReinstated, MarkRemoved, StoreAccount, StoreNotices, StorePasswordHash
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

        def checked(ok: bool) -> int:
            if not ok or account is None:
                raise Refused(BAD_LOGIN)
            if account.player_id in self._removed:
                raise Refused(REMOVED_LOGIN)
            if attendance_of(self._attendance, account.player_id).presence is Presence.RESIGNED:
                raise Refused(RESIGNED)
            if self.hasher.policy.needs_upgrade(account.password_hash):
                self._upgrade_hash(account, password)
            return account.player_id

        return d.addCallback(checked)

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

        Operators hand over `password_hash` (made by `server.game.passwords.hash_password`) instead
        of a password."""
        problem = self._account_problem(username, creation_setting_applies)
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

    def _create_account(
        self, username: str, password_hash: str, email: str, comment: str, creation_setting_applies: bool
    ) -> defer.Deferred:
        problem = self._account_problem(username, creation_setting_applies)
        if problem is not None:
            return refuse(problem)
        player_id = len(self._state.players) + 1
        state, messages = ruleset.add_player(self._state, username, join_rng(self.setup.seed, player_id))
        account = Account(username, password_hash, player_id, email, comment)

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
