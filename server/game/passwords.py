"""Passwords: salted scrypt hashes, compared in constant time, computed off the reactor thread.

A hash costs ~30 ms of CPU, so the server never computes one on the reactor thread: a
`ThreadPoolHasher` runs them on a small bounded pool of worker threads and answers with
Deferreds. `InlineHasher` computes them at once, for command-line tools and tests that have no
reactor running.

Every hasher carries the server's `PasswordPolicy`: what a new password must be (not empty, not
shorter than `min_length`, not absurdly long) and the scrypt cost of new hashes. A stored hash
made at a lower cost `needs_upgrade`: the game hashes the password again at the next correct
login (`server.game.game.Game.authenticate`), so raising the cost strengthens every active account.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import threading
from dataclasses import dataclass
from typing import Protocol

from twisted.internet import defer
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from ruleset import Problem
from server.model.names import BadPassword, prepare_password
from server.model.refusals import (
    EMPTY_PASSWORD,
    LONG_PASSWORD,
    MAX_PASSWORD,
    UNUSABLE_PASSWORD,
    short_password,
)

# scrypt cost: 2**14 × 8 × 1 takes ~30 ms here and 16 MiB; enough against offline guessing for a game.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
PREFIX = "scrypt"
HASHING_THREADS = 2
MIN_PASSWORD_LENGTH = 6
MAX_PASSWORD_LENGTH = MAX_PASSWORD
# scrypt's memory is 128 × r × N bytes: allow up to N = 2**20 (1 GiB) for the stronger settings.
SCRYPT_MAXMEM = 129 * SCRYPT_R * 2**20


def hash_password(password: str, *, n: int = SCRYPT_N) -> str:
    """A self-describing hash: ``scrypt$N$r$p$salt-hex$key-hex`` of the password as RFC 8265's
    OpaqueString prepares it (`server.model.names.prepare_password`; BadPassword otherwise)."""
    salt = os.urandom(16)
    key = hashlib.scrypt(
        prepare_password(password).encode(),
        salt=salt,
        n=n,
        r=SCRYPT_R,
        p=SCRYPT_P,
        dklen=32,
        maxmem=SCRYPT_MAXMEM,
    )
    return f"{PREFIX}${n}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches a hash made by `hash_password`; False for any malformed hash
    and for a password that cannot be one (`prepare_password` refuses it)."""
    try:
        prefix, n, r, p, salt, key = stored.split("$")
        if prefix != PREFIX:
            return False
        expected = bytes.fromhex(key)
        actual = hashlib.scrypt(
            prepare_password(password).encode(),
            salt=bytes.fromhex(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
            maxmem=SCRYPT_MAXMEM,
        )
    except (ValueError, TypeError, MemoryError):  # BadPassword is a ValueError
        return False
    return hmac.compare_digest(actual, expected)


@functools.lru_cache(maxsize=4096)
def credential_mark(stored: str) -> str:
    """A short fingerprint of a password hash, which changes whenever the hash does (a password
    change, an operator's set-password, a rehash at a new cost). API tokens carry it, signed
    (`server.web.sessions`), so such a change revokes every token issued before it without
    storing any token. It tells nothing of the password: 12 hex digits of a SHA-256 of the
    salted, slow hash."""
    return hashlib.sha256(b"tae credential mark|" + stored.encode()).hexdigest()[:12]


def hash_cost(stored: str) -> tuple[int, int, int] | None:
    """The (N, r, p) a stored hash was made with; None for a hash that is not ours."""
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != PREFIX:
        return None
    try:
        return int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None


# Hashes of nothing anyone knows, one per cost, verified against when a login names no account,
# so that an unknown name costs the same time as a wrong password.
_nobody: dict[int, str] = {}
_nobody_lock = threading.Lock()


def _nobody_hash(n: int) -> str:
    with _nobody_lock:
        if n not in _nobody:
            _nobody[n] = hash_password(os.urandom(16).hex(), n=n)
        return _nobody[n]


def verify_or_pretend(password: str, stored: str | None, n: int | None = None) -> bool:
    """`verify_password`, spending the same time when there is no stored hash to check (a hash
    at cost `n`, the current cost of new hashes by default)."""
    if stored is None:
        verify_password(password, _nobody_hash(n or SCRYPT_N))
        return False
    return verify_password(password, stored)


def split_login(username: str) -> tuple[str, str | None]:
    """``user@game`` -> ("user", "game"); a name without ``@`` names no game."""
    user, at, game = username.partition("@")
    return user, (game if at else None)


@dataclass(frozen=True, slots=True)
class PasswordPolicy:
    """What a new password must be, and the scrypt cost `n` of new hashes (None: `SCRYPT_N` as
    it is when hashing; benchmarks lower it)."""

    min_length: int = MIN_PASSWORD_LENGTH
    max_length: int = MAX_PASSWORD_LENGTH
    n: int | None = None

    @classmethod
    def with_cost(cls, min_length: int = MIN_PASSWORD_LENGTH, cost: int | None = None) -> PasswordPolicy:
        """A policy from the configuration's settings: `cost` is log2 of scrypt's N."""
        return cls(min_length=min_length, n=None if cost is None else 2**cost)

    @property
    def cost(self) -> int:
        return self.n or SCRYPT_N

    def problem(self, password: str) -> Problem | None:
        """Why `password` cannot be a new password, or None."""
        if not password:
            return EMPTY_PASSWORD
        if len(password) > self.max_length:
            return LONG_PASSWORD
        try:
            password = prepare_password(password)
        except BadPassword:
            return UNUSABLE_PASSWORD
        if len(password) < self.min_length:
            return short_password(self.min_length)
        if len(password) > self.max_length:
            return LONG_PASSWORD
        return None

    def needs_upgrade(self, stored: str) -> bool:
        """Whether a stored hash is weaker than new hashes are (it is made again at the next
        correct login)."""
        made = hash_cost(stored)
        return made is not None and made < (self.cost, SCRYPT_R, SCRYPT_P)


def _hash_at(password: str, n: int) -> str:
    return hash_password(password, n=n)


class PasswordHasher(Protocol):
    policy: PasswordPolicy

    def hash(self, password: str) -> defer.Deferred: ...
    def verify(self, password: str, stored: str | None) -> defer.Deferred: ...


#: The policy of a game made without one (tests, offline tools, library use): it refuses only an
#: empty password. The minimum length is the server's setting (`[limits] password_min_length`),
#: which `server.app` gives the server's hasher; offline tools check it themselves.
PERMISSIVE = PasswordPolicy(min_length=1)


class InlineHasher:
    """Hashes in the calling thread (no reactor needed): command-line tools and tests.
    `n` is the scrypt cost of new hashes (default: `SCRYPT_N` as it is when hashing); the policy
    is `PERMISSIVE` unless given."""

    def __init__(self, n: int | None = None, *, policy: PasswordPolicy | None = None):
        self.policy = policy or PasswordPolicy(min_length=PERMISSIVE.min_length, n=n)

    def hash(self, password: str) -> defer.Deferred:
        return defer.maybeDeferred(hash_password, password, n=self.policy.cost)

    def verify(self, password: str, stored: str | None) -> defer.Deferred:
        return defer.maybeDeferred(verify_or_pretend, password, stored, self.policy.cost)


# Hashing threads run at a lower scheduling priority than the reactor thread (Linux gives each
# thread its own nice value), so that a burst of logins never makes the reactor wait for a core.
HASHING_NICENESS = 5
_niced = threading.local()


def _in_background(work, *args):
    """Run `work(*args)` on a hashing thread, lowering that thread's priority the first time."""
    if not getattr(_niced, "done", False):
        _niced.done = True
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASHING_NICENESS)
        except (AttributeError, OSError):
            pass  # not Linux, or not allowed: hashing at the normal priority still works
    return work(*args)


class ThreadPoolHasher:
    """Hashes on a bounded pool of worker threads (at a lower priority than the reactor's);
    call `stop` when the server stops."""

    def __init__(
        self,
        reactor,
        threads: int = HASHING_THREADS,
        n: int | None = None,
        *,
        policy: PasswordPolicy | None = None,
    ):
        self.reactor = reactor
        self.policy = policy or PasswordPolicy(n=n)
        self.threads = threads
        self.pool = ThreadPool(minthreads=0, maxthreads=threads, name="tae-passwords")
        self.pool.start()

    def hash(self, password: str) -> defer.Deferred:
        return deferToThreadPool(
            self.reactor, self.pool, _in_background, _hash_at, password, self.policy.cost
        )

    def verify(self, password: str, stored: str | None) -> defer.Deferred:
        return deferToThreadPool(
            self.reactor, self.pool, _in_background, verify_or_pretend, password, stored, self.policy.cost
        )

    def stop(self) -> None:
        self.pool.stop()
