"""Which key a msgspec validation error is about, so a file's error message can name it.

The client's files (settings, turn files) are checked by one msgspec schema each. msgspec says
what failed in a fixed form ("Expected `int`, got `str` - at `$.port`", "Object contains unknown
field `hots`", "Object missing required field `orders`"); ``key_problem`` reads that form back
into the key and the kind of problem, and the file's module words the one-line message a user
sees (its own wording, which the tests pin).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

import msgspec

__all__ = ["KeyProblem", "Problem", "key_problem"]


class Problem(enum.Enum):
    UNKNOWN = "unknown"  # a key the schema does not have
    MISSING = "missing"  # a required key is absent
    INVALID = "invalid"  # wrong type or out of range
    NOT_A_TABLE = "not-a-table"  # the value itself is not a table/object


@dataclass(frozen=True, slots=True)
class KeyProblem:
    """``key`` is the top-level key at fault (None: the value as a whole)."""

    problem: Problem
    key: str | None


_UNKNOWN = re.compile(r"^Object contains unknown field `([^`]*)`")
_MISSING = re.compile(r"^Object missing required field `([^`]*)`")
_AT = re.compile(r" - at `\$\.([A-Za-z_][A-Za-z0-9_]*)")


def key_problem(error: msgspec.ValidationError) -> KeyProblem:
    """The key and kind of problem of a ``msgspec.convert`` error on a table."""
    text = str(error)
    for pattern, problem in ((_UNKNOWN, Problem.UNKNOWN), (_MISSING, Problem.MISSING)):
        match = pattern.match(text)
        if match is not None:
            return KeyProblem(problem, match.group(1))
    match = _AT.search(text)
    if match is not None:
        return KeyProblem(Problem.INVALID, match.group(1))
    return KeyProblem(Problem.NOT_A_TABLE, None)
