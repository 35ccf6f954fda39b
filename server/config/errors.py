"""One-line messages for files that do not match their schema (msgspec validation errors).

msgspec says ``Expected `int`, got `str` - at `$.game.seed``` or ``Object contains unknown
field `colour` - at `$.game```; operators read ``game.seed: expected int, not str`` and
``game: unknown setting 'colour'``.
"""

from __future__ import annotations

import re

import msgspec


class ConfigError(ValueError):
    """Configuration that cannot be used; the message names the setting (or the flag)."""


_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$")
_EXPECTED = re.compile(r"^Expected `(?P<expected>[^`]+)`, got `(?P<got>[^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")


def _dotted(path: str) -> str:
    """`$.game.seed` / `$.listen[0]` as `game.seed` / `listen[0]`."""
    return path.lstrip(".")


def describe_validation_error(error: msgspec.ValidationError) -> str:
    match = _AT.match(str(error))
    assert match is not None  # the pattern matches any text
    what, path = match.group("what"), _dotted(match.group("path") or "")
    unknown = _UNKNOWN.match(what)
    if unknown:
        return (
            f"{path}: unknown setting {unknown.group('name')!r}"
            if path
            else (f"unknown setting {unknown.group('name')!r}")
        )
    expected = _EXPECTED.match(what)
    if expected:
        wanted = expected.group("expected").replace(" | null", "")
        return f"{path or 'the file'}: expected {wanted}, not {expected.group('got')}"
    return f"{path}: {what[:1].lower()}{what[1:]}" if path else what
