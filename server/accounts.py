"""Passwords: salted scrypt hashes, compared in constant time, computed off the reactor thread.

A hash costs ~30 ms of CPU, so the server never computes one on the reactor thread: a
`ThreadPoolHasher` runs them on a small bounded pool of worker threads and answers with
Deferreds. `InlineHasher` computes them at once, for command-line tools and tests that have no
reactor running.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Protocol

from twisted.internet import defer
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

# scrypt cost: 2**14 × 8 × 1 takes ~30 ms here and 16 MiB; enough against offline guessing for a game.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
PREFIX = "scrypt"
HASHING_THREADS = 2


def hash_password(password: str, *, n: int = SCRYPT_N) -> str:
    """A self-describing hash: ``scrypt$N$r$p$salt-hex$key-hex``."""
    salt = os.urandom(16)
    key = hashlib.scrypt(password.encode(), salt=salt, n=n, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"{PREFIX}${n}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${key.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches a hash made by `hash_password`; False for any malformed hash."""
    try:
        prefix, n, r, p, salt, key = stored.split("$")
        if prefix != PREFIX:
            return False
        expected = bytes.fromhex(key)
        actual = hashlib.scrypt(
            password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


# A hash of nothing anyone knows, verified against when a login names no account, so that an
# unknown name costs the same time as a wrong password.
_NOBODY = hash_password(os.urandom(16).hex())


def verify_or_pretend(password: str, stored: str | None) -> bool:
    """`verify_password`, spending the same time when there is no stored hash to check."""
    if stored is None:
        verify_password(password, _NOBODY)
        return False
    return verify_password(password, stored)


def split_login(username: str) -> tuple[str, str | None]:
    """``user@game`` -> ("user", "game"); a name without ``@`` names no game."""
    user, at, game = username.partition("@")
    return user, (game if at else None)


class PasswordHasher(Protocol):
    def hash(self, password: str) -> defer.Deferred: ...
    def verify(self, password: str, stored: str | None) -> defer.Deferred: ...


class InlineHasher:
    """Hashes in the calling thread (no reactor needed): command-line tools and tests.
    `n` is the scrypt cost of new hashes (default: `SCRYPT_N` as it is when hashing)."""

    def __init__(self, n: int | None = None):
        self.n = n

    def hash(self, password: str) -> defer.Deferred:
        return defer.maybeDeferred(hash_password, password, n=self.n or SCRYPT_N)

    def verify(self, password: str, stored: str | None) -> defer.Deferred:
        return defer.maybeDeferred(verify_or_pretend, password, stored)


class ThreadPoolHasher:
    """Hashes on a bounded pool of worker threads; call `stop` when the server stops."""

    def __init__(self, reactor, threads: int = HASHING_THREADS, n: int | None = None):
        self.reactor = reactor
        self.n = n
        self.pool = ThreadPool(minthreads=0, maxthreads=threads, name="tae-passwords")
        self.pool.start()

    def hash(self, password: str) -> defer.Deferred:
        return deferToThreadPool(self.reactor, self.pool, hash_password, password, n=self.n or SCRYPT_N)

    def verify(self, password: str, stored: str | None) -> defer.Deferred:
        return deferToThreadPool(self.reactor, self.pool, verify_or_pretend, password, stored)

    def stop(self) -> None:
        self.pool.stop()
