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
* **Unknown names** go through exactly the same steps (and `server.game.game.Game.authenticate` hashes
  them against a dummy hash), so timing does not tell which names exist.
* **Logging.** Every failed login is logged with the address and the (clipped) name, never the
  password: the first `failed_login_log_lines` per address and window one by one, then one
  summary line per address at the end of the window (`server.guards.failed_login_log`, which the web
  listener's logins share).

The guard knows nothing of TP: `server.tp.network` drives it for TP connections, and the web
listener can drive it the same way for its logins and password changes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime

from server.config.limits import Limits
from server.guards.failed_login_log import FailedLoginLog
from server.guards.rates import TokenBucket
from server.model.refusals import TOO_MANY_FAILED_LOGINS, Refused

#: Logins waiting at one address beyond which its newest is served first.
LIFO_AFTER = 8
#: Per-address records kept before idle ones are forgotten.
MAX_ADDRESSES = 4096


@dataclass
class _Waiter:
    client: GuardedClient
    admitted: defer.Deferred
    clean: bool
    name: str
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

    def __init__(self, guard: LoginGuard, client: GuardedClient, name: str):
        self._guard = guard
        self._client = client
        self._name = name
        self._done = False

    def done(self, succeeded: bool, counts: bool = True) -> float:
        """The login finished (`counts`: a failure counts against the connection and address,
        as a wrong password does; an account creation that was refused does not). Returns the
        seconds to wait before answering; `client.must_close` says whether to close afterwards."""
        if self._done:
            return 0.0
        self._done = True
        self._guard._release()
        if succeeded or not counts:
            return 0.0
        return self._guard._failed(self._client, self._name)


class GuardedClient:
    """One connection's side of the guard."""

    def __init__(self, guard: LoginGuard, address: str):
        self.guard = guard
        self.address = address
        self.failures = 0
        self.must_close = False
        self._waiting: _Waiter | None = None
        self._lost = False

    def admit(self, name: str) -> defer.Deferred:
        """Fires with a `Ticket` when this connection's login (for user `name`, for the log)
        may hash; fails with Refused(TOO_MANY_FAILED_LOGINS) for a connection that failed before
        at an address that is over its budget (then `must_close` is set)."""
        return self.guard._admit(self, name)

    def lost(self) -> None:
        """The connection is gone: a login still waiting for a slot is dropped."""
        self._lost = True
        if self._waiting is not None:
            self._waiting.cancelled = True
            self._waiting = None
        self.guard._client_lost(self)


def _raise(error: Exception) -> None:
    raise error


class LoginGuard:
    """The login limits of one server (see the module docstring). `clock` schedules the delays
    and the log summaries; `slots` is how many logins hash at a time."""

    def __init__(self, clock: IReactorTime, limits: Limits, slots: int | None = None):
        self.clock = clock
        self.limits = limits
        self.slots = slots if slots is not None else limits.hashing_threads
        self.busy = 0
        self._addresses: dict[str, _Address] = {}
        self._clean_ring: deque[_Address] = deque()
        self._suspect_ring: deque[_Address] = deque()
        self.failure_log = FailedLoginLog(clock, limits.login_failure_window, limits.failed_login_log_lines)

    # -- connections ---------------------------------------------------------------------

    def client(self, address: str) -> GuardedClient:
        record = self._address(address)
        record.connections += 1
        return GuardedClient(self, address)

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

    def _admit(self, client: GuardedClient, name: str) -> defer.Deferred:
        record = self._address(client.address)
        if client.failures and self.over_budget(client.address):
            client.must_close = True
            self._log_failure(record, name, tried=False)
            # answered after the longest delay, like a failure: no quick reconnect
            return task.deferLater(
                self.clock, self.limits.login_failure_delay_max, _raise, Refused(TOO_MANY_FAILED_LOGINS)
            )
        waiter = _Waiter(client, defer.Deferred(), clean=client.failures == 0, name=name)
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
            waiter.admitted.callback(Ticket(self, waiter.client, waiter.name))

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

    def _failed(self, client: GuardedClient, name: str) -> float:
        limits = self.limits
        now = self.clock.seconds()
        record = self._address(client.address)
        client.failures += 1
        if record.failures is not None:
            record.failures.spend(now)
        delay = min(limits.login_failure_delay * 2 ** (client.failures - 1), limits.login_failure_delay_max)
        if self.over_budget(client.address):
            delay = limits.login_failure_delay_max
            client.must_close = True
        if limits.login_failures_per_connection and client.failures >= limits.login_failures_per_connection:
            client.must_close = True
        self._log_failure(record, name)
        return delay

    # -- logging -------------------------------------------------------------------------

    def _log_failure(self, record: _Address, name: str, *, tried: bool = True) -> None:
        self.failure_log.failed(
            record.key,
            name,
            "" if tried else "refused untried: too many failures from this address",
            over_budget=self.over_budget(record.key),
        )

    def stop(self) -> None:
        """Write the pending summaries now (the server stops)."""
        self.failure_log.stop()
