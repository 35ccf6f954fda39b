"""Passwords: stored as salted scrypt hashes, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import os

# scrypt cost: 2**14 × 8 × 1 takes ~30 ms here and 16 MiB; enough against offline guessing for a game.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
PREFIX = "scrypt"


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


def split_login(username: str) -> tuple[str, str | None]:
    """``user@game`` -> ("user", "game"); a name without ``@`` names no game."""
    user, at, game = username.partition("@")
    return user, (game if at else None)
