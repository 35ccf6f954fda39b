"""Logins under attack: failed logins are slowed per connection, limited per source address and
logged (rate-limited), and password hashing is shared out so that a flood cannot lock out the
real player.

Every login (and account creation, which hashes too) asks the guard first, through the
`GuardedClient` of its connection:

* **Hashing slots.** At most `slots` logins hash at a time (one per hashing thread, so an admitted
  login starts hashing at once).
  The others wait in queues per source address, served round-robin, so a flood from one address
  never delays another address's players. Within an address, connections that have never
  failed go first; connections that have failed wait behind them. When an address has many
  logins waiting, its newest is served first ("adaptive LIFO", as in Facebook's "Fail at Scale",
  2015): the waiting crowd is the flood, and the newcomer is most likely the real player.
* **Per connection.** The answer to a connection's k-th failed login waits
  `login_failure_delay × 2**(k-1)` seconds (at most `login_failure_delay_max`), and after
  `login_failures_per_connection` failures the connection is closed. A connection answers its
  requests one at a time, so it cannot try again before the delay has passed.
* **Per address.** An address may fail `login_failures_per_address` times per
  `login_failure_window` (a token bucket). Past that, its connections that have failed before are
  refused without hashing (Fail 3, TOO_MANY_FAILED_LOGINS), and a failure on a fresh connection is
  answered after the longest delay and closes it. A fresh connection's login is always tried:
  the real player, on a connection that has not failed, is never locked out.
* **Per account.** An account may fail `login_failures_per_account` times per
  `login_account_window` from places it never logged in from. Past that, logins to it are
  refused untried (Fail 3) from every client that is not *known* to it: a known client is an
  address (its key: IPv6 by /64) the account logged in from before, and its logins are always
  tried. So 20 addresses guessing one account are stopped after 20 guesses in all, while the
  player, from where they usually play, is let in.
* **Globally.** Past `login_failures_global` failures per `login_failure_window` in the whole
  server (a guess spread over many addresses), every failing connection not known to its
  account is treated as if its address were over budget.
* **Every hash.** Every password check (a login, an account creation, a password change) is
  counted per address (`password_hashes_per_address`) and per account
  (`password_hashes_per_account`, for clients not known to it) per `password_hash_window`;
  past either, the check is refused untried. The hashing slots bound them all together.
* **Account creation.** An address may create `accounts_per_address` accounts per
  `login_account_window` (`admit(..., creating=True)`).
* **Unknown names** go through exactly the same steps (and `server.game.game.Game.authenticate` hashes
  them against a dummy hash), so timing does not tell which names exist.
* **Logging.** Every failed login is logged with the address and the (clipped) name, never the
  password: the first `failed_login_log_lines` per address and window one by one, then one
  summary line per address at the end of the window (`server.guards.failed_login_log`, which the web
  listener's logins share).

The guard knows nothing of TP or HTTP: `server.tp.network` drives it for TP connections, and
`server.web.logins` for the web listener's logins, account creations and password changes (a
web client is one HTTP connection, per client address), so every listener has the same brake
and one budget per address and per account.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime

from ruleset import Problem
from server.config.limits import Limits
from server.guards.failed_login_log import FailedLoginLog
from server.guards.rates import TokenBucket, per_window
from server.model.names import lookup_key
from server.model.refusals import (
    TOO_MANY_ACCOUNT_FAILURES,
    TOO_MANY_ACCOUNTS,
    TOO_MANY_FAILED_LOGINS,
    TOO_MANY_PASSWORD_CHECKS,
    Refused,
)

#: Logins waiting at one address beyond which its newest is served first.
LIFO_AFTER = 8
#: Per-address records kept before idle ones are forgotten.
MAX_ADDRESSES = 4096
#: Places remembered per account (the addresses it logged in from), and for how long.
KNOWN_PLACES = 8
KNOWN_FOR_S = 30 * 24 * 3600.0
#: Accounts whose known places are remembered.
MAX_ACCOUNTS = 65_536


def admin_account_key(name: str) -> str:
    """What the per-account budget counts an admin account by: apart from every player's
    account (`account_key`), whose names end in `@GAME`."""
    return f"{name.casefold()[:64]} (admin)"


def account_key(name: str, default_game: str | None = None) -> str:
    """What the per-account budget counts by: the account name as names are compared
    (`server.model.names.username_key`) and its game (`NAME@GAME`; no game: `default_game`)."""
    user, at, game = name.partition("@")
    key = lookup_key(user) or user.casefold()[:64]
    return f"{key}@{(game if at else default_game) or ''}"


@dataclass
class _Waiter:
    client: GuardedClient
    admitted: defer.Deferred
    clean: bool
    name: str
    account: str
    known: bool
    creating: bool
    cancelled: bool = False


@dataclass
class _Address:
    """What the guard knows of one source address."""

    key: str
    failures: TokenBucket | None
    clean: deque[_Waiter] = field(default_factory=deque)
    suspect: deque[_Waiter] = field(default_factory=deque)
    connections: int = 0
    in_clean_ring: bool = False
    in_suspect_ring: bool = False


class Ticket:
    """A hashing slot held by one login; `done` gives it back and says how the login went."""

    def __init__(self, guard: LoginGuard, waiter: _Waiter):
        self._guard = guard
        self._client = waiter.client
        self._name = waiter.name
        self._account = waiter.account
        self._known = waiter.known
        self._creating = waiter.creating
        self._done = False

    def done(self, succeeded: bool, counts: bool = True, new_account: bool = True) -> float:
        """The login finished (`counts`: a failure counts against the connection, address and
        account, as a wrong password does; an account creation that was refused does not).
        Returns the seconds to wait before answering; `client.must_close` says whether to
        close afterwards."""
        if self._done:
            return 0.0
        self._done = True
        self._guard._release()
        if succeeded:
            # an account creation that joined an existing account proved its password: a login
            self._guard._succeeded(self._client, self._account, self._creating and new_account)
            return 0.0
        if not counts:
            return 0.0
        return self._guard._failed(self._client, self._name, self._account, self._known)


class GuardedClient:
    """One connection's side of the guard."""

    def __init__(self, guard: LoginGuard, address: str, listener: str = ""):
        self.guard = guard
        self.address = address
        self.listener = listener  # named in the log of failed logins ("web"); TP: ""
        self.failures = 0
        self.must_close = False
        self._waiting: _Waiter | None = None
        self._lost = False

    def admit(self, name: str, *, account: str | None = None, creating: bool = False) -> defer.Deferred:
        """Fires with a `Ticket` when this connection's login (for user `name`, `NAME@GAME`;
        `account`: its `account_key` when the caller knows the game) may hash; fails with
        Refused for a login refused untried (a connection that failed before at an address over
        its budget, an account over its budget from an unknown place, too many password checks
        or, `creating` an account, too many new accounts from the address; `must_close` is set
        when the connection should go)."""
        return self.guard._admit(self, name, account, creating)

    def attempt(
        self,
        name: str,
        request: Callable[[], Any],
        succeeded: Callable[[Any], bool],
        *,
        account: str | None = None,
        creating: bool = False,
        counts: bool | Callable[[Any], bool] = True,
        new_account: Callable[[Any], bool] = lambda answer: True,
        hurry: Callable[[], bool] = lambda: False,
    ) -> defer.Deferred:
        """One password check of a connection that answers with bytes (TP, admin) through the
        guard: `request()` (its answer, or a Deferred of it) runs once `admit` lets it, and
        `succeeded(answer)` says how it went (`counts`, or `counts(answer)`: a failure counts as
        a failed login; `new_account(answer)`: a creation made a new account, rather than
        joining an existing one, and counts against the address's account creations).
        Fires with the answer, a failure's after the delay it earns (none when `hurry()`: the
        connection is going); fails with Refused when the check is refused untried."""

        def run(ticket: Ticket) -> defer.Deferred:
            def finished(answer: Any) -> Any:
                delay = ticket.done(
                    succeeded(answer),
                    counts=counts(answer) if callable(counts) else counts,
                    new_account=new_account(answer),
                )
                if delay <= 0 or hurry():
                    return answer
                return task.deferLater(self.guard.clock, delay, lambda: answer)

            def broken(failure: Any) -> Any:
                ticket.done(True, counts=False)
                return failure

            return defer.maybeDeferred(request).addCallbacks(finished, broken)

        return self.admit(name, account=account, creating=creating).addCallback(run)

    def lost(self) -> None:
        """The connection is gone: a login still waiting for a slot is dropped."""
        self._lost = True
        if self._waiting is not None:
            self._waiting.cancelled = True
            self._waiting = None
        self.guard._client_lost(self)


def _raise(error: Exception) -> None:
    raise error


_WHY: dict[Problem | None, str] = {
    TOO_MANY_ACCOUNT_FAILURES: "too many failures on this account from places it never logged in from",
    TOO_MANY_PASSWORD_CHECKS: "too many password checks",
    TOO_MANY_ACCOUNTS: "too many accounts created from this address",
}


class LoginGuard:
    """The login limits of one server (see the module docstring). `clock` schedules the delays
    and the log summaries; `slots` is how many logins hash at a time."""

    def __init__(
        self,
        clock: IReactorTime,
        limits: Limits,
        slots: int | None = None,
        default_game: Callable[[], str | None] | None = None,
    ):
        self.clock = clock
        self.limits = limits
        self.slots = slots if slots is not None else limits.hashing_threads
        # The game a login without @GAME goes to (the server's directory says), so that `ann`
        # and `ann@tae` count as one account.
        self.default_game = default_game or (lambda: None)
        self.busy = 0
        self._addresses: dict[str, _Address] = {}
        self._clean_ring: deque[_Address] = deque()
        self._suspect_ring: deque[_Address] = deque()
        self.failure_log = FailedLoginLog(clock, limits.login_failure_window, limits.failed_login_log_lines)
        self._account_failures = per_window(limits.login_failures_per_account, limits.login_account_window)
        self._global_failures = (
            TokenBucket(
                limits.login_failures_global / limits.login_failure_window,
                limits.login_failures_global,
                clock.seconds(),
            )
            if limits.login_failures_global and limits.login_failure_window > 0
            else None
        )
        self._address_hashes = per_window(limits.password_hashes_per_address, limits.password_hash_window)
        self._account_hashes = per_window(limits.password_hashes_per_account, limits.password_hash_window)
        self._creations = per_window(limits.accounts_per_address, limits.login_account_window)
        # account key -> {address key: when it last logged in from there}
        self._known: dict[str, dict[str, float]] = {}

    # -- connections ---------------------------------------------------------------------

    def client(self, address: str, listener: str = "") -> GuardedClient:
        """A new connection's side of the guard (`listener`: named in the log, "" for TP)."""
        record = self._address(address)
        record.connections += 1
        return GuardedClient(self, address, listener)

    def _client_lost(self, client: GuardedClient) -> None:
        record = self._addresses.get(client.address)
        if record is not None:
            record.connections = max(0, record.connections - 1)

    def _address(self, key: str) -> _Address:
        record = self._addresses.get(key)
        if record is None:
            if len(self._addresses) >= MAX_ADDRESSES:
                self._forget_idle()
            limits = self.limits
            bucket = None
            if limits.login_failures_per_address:
                rate = limits.login_failures_per_address / limits.login_failure_window
                bucket = TokenBucket(rate, limits.login_failures_per_address, self.clock.seconds())
            record = self._addresses[key] = _Address(key, bucket)
        return record

    def _forget_idle(self) -> None:
        now = self.clock.seconds()
        for key, record in list(self._addresses.items()):
            idle = not record.connections and not record.clean and not record.suspect
            if idle and (record.failures is None or record.failures.full(now)):
                del self._addresses[key]

    def over_budget(self, address: str) -> bool:
        """Whether the address has used up its failed logins for now."""
        record = self._addresses.get(address)
        bucket = record.failures if record is not None else None
        return bucket is not None and bucket.available(self.clock.seconds()) < 1

    # -- admission -----------------------------------------------------------------------

    def account_key(self, name: str) -> str:
        return account_key(name, self.default_game())

    def knows(self, account: str, address: str) -> bool:
        """Whether the account logged in from `address` (a known place) lately."""
        places = self._known.get(account)
        seen = places.get(address) if places else None
        return seen is not None and seen + KNOWN_FOR_S > self.clock.seconds()

    def over_global_budget(self) -> bool:
        bucket = self._global_failures
        return bucket is not None and bucket.available(self.clock.seconds()) < 1

    def _refusal(self, client: GuardedClient, account: str, known: bool, creating: bool) -> Problem | None:
        """Why a login is refused untried, or None."""
        now = self.clock.seconds()
        address = client.address
        if client.failures and (self.over_budget(address) or (self.over_global_budget() and not known)):
            return TOO_MANY_FAILED_LOGINS
        if not known and self._account_failures is not None and self._account_failures.empty(account, now):
            return TOO_MANY_ACCOUNT_FAILURES
        if creating and self._creations is not None and self._creations.empty(address, now):
            return TOO_MANY_ACCOUNTS
        if self._address_hashes is not None and self._address_hashes.empty(address, now):
            return TOO_MANY_PASSWORD_CHECKS
        if not known and self._account_hashes is not None and self._account_hashes.empty(account, now):
            return TOO_MANY_PASSWORD_CHECKS
        return None

    def _admit(
        self, client: GuardedClient, name: str, account: str | None = None, creating: bool = False
    ) -> defer.Deferred:
        record = self._address(client.address)
        account = account or self.account_key(name)
        known = self.knows(account, client.address)
        problem = self._refusal(client, account, known, creating)
        if problem is not None:
            self._log_failure(record, name, client.listener, tried=False, why=problem)
            if problem is TOO_MANY_FAILED_LOGINS or client.failures:
                client.must_close = True
                # answered after the longest delay, like a failure: no quick reconnect
                return task.deferLater(
                    self.clock, self.limits.login_failure_delay_max, _raise, Refused(problem)
                )
            return defer.fail(Refused(problem))
        waiter = _Waiter(
            client,
            defer.Deferred(),
            clean=client.failures == 0,
            name=name,
            account=account,
            known=known,
            creating=creating,
        )
        if waiter.clean:
            record.clean.append(waiter)
            if not record.in_clean_ring:
                record.in_clean_ring = True
                self._clean_ring.append(record)
        else:
            record.suspect.append(waiter)
            if not record.in_suspect_ring:
                record.in_suspect_ring = True
                self._suspect_ring.append(record)
        client._waiting = waiter
        self._dispatch()
        return waiter.admitted

    def _release(self) -> None:
        self.busy -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        while self.busy < self.slots:
            waiter = self._next_waiter()
            if waiter is None:
                return
            self.busy += 1
            waiter.client._waiting = None
            now = self.clock.seconds()
            if self._address_hashes is not None:
                self._address_hashes.spend(waiter.client.address, now)
            if self._account_hashes is not None and not waiter.known:
                self._account_hashes.spend(waiter.account, now)
            waiter.admitted.callback(Ticket(self, waiter))

    def _next_waiter(self) -> _Waiter | None:
        for ring, clean in ((self._clean_ring, True), (self._suspect_ring, False)):
            while ring:
                record = ring.popleft()
                queue = record.clean if clean else record.suspect
                waiter = None
                while queue and waiter is None:
                    candidate = queue.pop() if clean and len(queue) > LIFO_AFTER else queue.popleft()
                    if not candidate.cancelled:
                        waiter = candidate
                if queue:
                    ring.append(record)
                elif clean:
                    record.in_clean_ring = False
                else:
                    record.in_suspect_ring = False
                if waiter is not None:
                    return waiter
        return None

    # -- failures ------------------------------------------------------------------------

    def _succeeded(self, client: GuardedClient, account: str, creating: bool) -> None:
        now = self.clock.seconds()
        if creating:
            if self._creations is not None:
                self._creations.spend(client.address, now)
            return
        places = self._known.get(account)
        if places is None:
            if len(self._known) >= MAX_ACCOUNTS:
                del self._known[next(iter(self._known))]
            places = self._known[account] = {}
        places.pop(client.address, None)
        places[client.address] = now
        while len(places) > KNOWN_PLACES:
            del places[next(iter(places))]

    def _failed(self, client: GuardedClient, name: str, account: str = "", known: bool = False) -> float:
        limits = self.limits
        now = self.clock.seconds()
        record = self._address(client.address)
        client.failures += 1
        if record.failures is not None:
            record.failures.spend(now)
        if self._global_failures is not None:
            self._global_failures.spend(now)
        if self._account_failures is not None and account and not known:
            self._account_failures.spend(account, now)
        delay = min(limits.login_failure_delay * 2 ** (client.failures - 1), limits.login_failure_delay_max)
        over_account = (
            not known
            and self._account_failures is not None
            and bool(account)
            and self._account_failures.empty(account, now)
        )
        if self.over_budget(client.address) or over_account or (self.over_global_budget() and not known):
            delay = limits.login_failure_delay_max
            client.must_close = True
        if limits.login_failures_per_connection and client.failures >= limits.login_failures_per_connection:
            client.must_close = True
        self._log_failure(record, name, client.listener)
        return delay

    # -- logging -------------------------------------------------------------------------

    def _log_failure(
        self,
        record: _Address,
        name: str,
        listener: str = "",
        *,
        tried: bool = True,
        why: Problem | None = None,
    ) -> None:
        notes = [listener] if listener else []
        if not tried:
            notes.append(f"refused untried: {_WHY.get(why) or 'too many failures from this address'}")
        self.failure_log.failed(record.key, name, "; ".join(notes), over_budget=self.over_budget(record.key))

    def stop(self) -> None:
        """Write the pending summaries now (the server stops)."""
        self.failure_log.stop()
