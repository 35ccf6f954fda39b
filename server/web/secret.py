"""The web listener's secret key: it signs API tokens and CSRF tokens.

Kept in a file (made on first use, readable by its owner only) so that API tokens survive a
restart; without a file every start makes a new key and earlier tokens stop working.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


class SecretError(ValueError):
    """The secret file cannot be read or made; the message says which file and why."""


def load_secret(path: str | None) -> bytes | None:
    """The key in `path` (made when missing); None without a path (a key per process)."""
    if not path:
        return None
    file = Path(path)
    try:
        if not file.exists():
            descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
        key = file.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise SecretError(f"web_secret_file {path}: {getattr(error, 'strerror', None) or error}") from None
    if len(key) < 32:
        raise SecretError(f"web_secret_file {path}: the key must be at least 32 characters")
    return key.encode()
