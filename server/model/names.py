"""Account names and passwords as people type them: prepared once, compared one way everywhere.

A name or a password arrives from a TP client, a web form, the JSON API or an operator's
command, in whatever Unicode form the sender's keyboard produced: `Ann`, `ａｎｎ` (full-width),
`Ann` in NFD, `Аnn` with a Cyrillic А. The PRECIS framework (RFC 8264) and its profiles for
user names and passwords (RFC 8265), as `precis-i18n` implements them, say what each is:

* `prepare_username` (UsernameCasePreserved: width-mapped, NFC, only letters, digits and the
  printable ASCII symbols, no spaces) is the name an account is created and shown with;
* `username_key` (UsernameCaseMapped: the same, case-folded) is what two names are compared by:
  `Ann`, `ann` and `ａｎｎ` are one account;
* `name_skeleton` maps every character that looks like another (Unicode's confusables, from
  `confusable-homoglyphs`) to one representative, so that `аnn` (Cyrillic а) is refused as a
  new name next to an existing `ann` (`looks_taken`);
* `prepare_password` (OpaqueString: non-ASCII spaces to ASCII, NFC; controls and unpaired
  surrogates refused) is what a password is hashed and verified as.

Every function is pure; `BadName` / `BadPassword` carry the one-line reason a person is told.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

from precis_i18n import get_profile

from server.model.refusals import MAX_NAME, MAX_PASSWORD

# Longer input is refused before PRECIS looks at it, so a huge name costs nothing.

_PRESERVED = get_profile("UsernameCasePreserved")
_MAPPED = get_profile("UsernameCaseMapped")
_OPAQUE = get_profile("OpaqueString")


class BadName(ValueError):
    """A name that cannot be an account name; the message says why."""


class BadPassword(ValueError):
    """A password that cannot be used (a control character, an unpaired surrogate)."""


def _reason(error: UnicodeError) -> str:
    """PRECIS's reason (`DISALLOWED/spaces`, `empty`) in words."""
    text = str(error)
    if "spaces" in text:
        return "it contains a space"
    if "empty" in text:
        return "it is empty"
    if "bidi" in text:
        return "it mixes writing directions"
    if "controls" in text or "other" in text or "unassigned" in text:
        return "it contains a character that cannot be used in a name"
    return "it contains a character that cannot be used in a name"


def prepare_username(name: str) -> str:
    """The name as an account is created and shown with (RFC 8265 UsernameCasePreserved)."""
    if not isinstance(name, str) or not name:
        raise BadName("a user name is needed")
    if len(name) > MAX_NAME:
        raise BadName(f"a user name has at most {MAX_NAME} characters")
    if "@" in name:
        raise BadName("a user name cannot contain '@' (it separates the name from the game)")
    if KEPT_APART in name:
        raise BadName(f"a user name cannot contain '{KEPT_APART}' (it marks accounts kept apart)")
    try:
        prepared = _PRESERVED.enforce(name)
    except UnicodeError as error:
        raise BadName(f"that user name cannot be used: {_reason(error)}") from None
    if len(prepared) > MAX_NAME:
        raise BadName(f"a user name has at most {MAX_NAME} characters")
    return str(prepared)


#: Marks the name of an account kept apart (`kept_apart_name`): never in a new name.
KEPT_APART = "~"


def kept_apart_name(name: str, game: str, game_id: int) -> str:
    """The server account name of a per-game account (before accounts were per server) whose
    name another game's account had first: `alice~g2` until its owner proves both passwords."""
    long = f"{name}{KEPT_APART}{game}"
    return long if len(long) <= MAX_NAME else f"{name[: MAX_NAME - 12]}{KEPT_APART}{game_id}"


def kept_apart_from(account_name: str) -> str | None:
    """The name an account kept apart claims (`alice` for `alice~g2`); None for any other."""
    base, mark, _ = account_name.partition(KEPT_APART)
    return base if mark and base else None


@functools.lru_cache(maxsize=8192)
def username_key(name: str) -> str:
    """What names are compared by (RFC 8265 UsernameCaseMapped); BadName for a name that
    cannot be one. Names stored before this preparation (with a space, say) compare by their
    case-folded NFC form."""
    try:
        return str(_MAPPED.enforce(prepare_username(name)))
    except (BadName, UnicodeError):
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            raise BadName("that is not a user name") from None
        return unicodedata.normalize("NFC", unicodedata.normalize("NFKC", name).casefold())


def lookup_key(name: str) -> str | None:
    """`username_key`, or None for a name that can name no account (a login with it fails)."""
    try:
        return username_key(name)
    except BadName:
        return None


def _confusable_map() -> dict[str, str]:
    from confusable_homoglyphs.confusables import confusables_data

    mapping: dict[str, str] = {}
    for char, entries in confusables_data.items():
        if len(char) != 1:
            continue
        candidates = [char] + [e["c"] for e in entries if isinstance(e.get("c"), str) and len(e["c"]) == 1]
        # ASCII first, then the lowest code point: every look-alike of 'a' maps to 'a'
        mapping[char] = min(candidates, key=lambda c: (not c.isascii(), ord(c)))
    return mapping


@functools.lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    return _confusable_map()


@functools.lru_cache(maxsize=8192)
def name_skeleton(name: str) -> str:
    """A name with every look-alike character replaced by one representative (after the
    comparison key: case, width and composition are already one): `аnn` and `ann` have the
    same skeleton."""
    key = lookup_key(name)
    if key is None:
        key = name.casefold()
    table = _confusables()
    shown = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", key))
    return unicodedata.normalize("NFC", shown).casefold()


def looks_taken(name: str, existing: Iterable[str]) -> str | None:
    """The existing name that `name` is, or looks like (same key or same skeleton), if any."""
    key = lookup_key(name)
    skeleton = name_skeleton(name)
    for other in existing:
        if key is not None and lookup_key(other) == key:
            return other
        if name_skeleton(other) == skeleton:
            return other
    return None


def prepare_password(password: str) -> str:
    """The password as it is hashed and verified (RFC 8265 OpaqueString)."""
    if not isinstance(password, str) or not password:
        raise BadPassword("a password is needed")
    if len(password) > MAX_PASSWORD:
        raise BadPassword(f"a password can have at most {MAX_PASSWORD} characters")
    try:
        return str(_OPAQUE.enforce(password))
    except UnicodeError:
        raise BadPassword("a password cannot contain control characters or unpaired surrogates") from None
