"""The one place where a failure becomes a Thousand Parsec Fail frame.

Like the per-command `errors` map of Twisted's AMP (twisted/protocols/amp.py): handlers raise
(or their Deferreds fail with) what went wrong, and `fail_for` maps each kind of failure to the
Fail the client gets:

* `Refused` (a write the game refused: the ruleset's order problems, account problems) →
  the problem's code and text, with the references the request's command names;
* `TPRefusal` (the TP layer's own refusals: a bad sequence key, an empty request…) → as given;
* `ProtocolError` (a body that does not decode) → its code, text and references;
* `OutcomeUnknown` (the connection broke while the database committed, and the game could not
  find out whether it kept the write) → code 3, "it may or may not have been done: look again";
* `StoreUnavailable` / `StoreError` (the database is away or refused the write) → code 3,
  "try again": nothing was stored, so nothing the player was told is lost.

Anything else is a bug: `fail_for` returns None and the caller logs it and answers with an
internal-error Fail. `protocol.fit_fail` then makes the Fail fit the connection's version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import protocol as tp
from protocol import FailCode, ProtocolError
from protocol.records import Reference
from server.model.refusals import Refused
from server.model.store import OutcomeUnknown, StoreError, StoreUnavailable

STORE_UNAVAILABLE_TEXT = (
    "The game's database is unavailable right now; nothing was changed. Try again shortly."
)
OUTCOME_UNKNOWN_TEXT = (
    "The game's database did not confirm the change; it may or may not have been done: look again."
)
STORE_REFUSED_TEXT = "The game's database refused the change; nothing was changed."
INTERNAL_ERROR_TEXT = "Internal server error; the request was not carried out"


class TPRefusal(Exception):
    """A request the TP layer itself refuses, with the Fail code and text to send."""

    def __init__(self, code: int, message: str, refs: Iterable[tuple[int, int]] = ()):
        super().__init__(message)
        self.code = code
        self.message = message
        self.refs = tuple(refs)


def fail(code: int, text: str, refs: Iterable[tuple[int, int]] = ()) -> tp.Fail:
    return tp.Fail(code, text, tuple(Reference(t, i) for t, i in refs))


def _refused(error: Refused, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(int(error.problem.code), error.problem.message, refs)


def _tp_refusal(error: TPRefusal, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(error.code, error.message, error.refs)


def _protocol_error(error: ProtocolError, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(int(error.code), error.message, error.references)


def _outcome_unknown(error: OutcomeUnknown, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(FailCode.UNAVAILABLE_TEMPORARILY, OUTCOME_UNKNOWN_TEXT, refs)


def _store_unavailable(error: StoreUnavailable, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(FailCode.UNAVAILABLE_TEMPORARILY, STORE_UNAVAILABLE_TEXT, refs)


def _store_refused(error: StoreError, refs: tuple[tuple[int, int], ...]) -> tp.Fail:
    return fail(FailCode.UNAVAILABLE_TEMPORARILY, STORE_REFUSED_TEXT, refs)


#: Failure class → how it becomes a Fail; the first class the error is an instance of wins.
ERRORS: tuple[tuple[type[BaseException], Callable], ...] = (
    (Refused, _refused),
    (TPRefusal, _tp_refusal),
    (ProtocolError, _protocol_error),
    (OutcomeUnknown, _outcome_unknown),
    (StoreUnavailable, _store_unavailable),
    (StoreError, _store_refused),
)


def fail_for(error: BaseException, refs: Iterable[tuple[int, int]] = ()) -> tp.Fail | None:
    """The Fail for a known kind of failure; None for anything else (a bug: log it)."""
    refs = tuple(refs)
    for kind, build in ERRORS:
        if isinstance(error, kind):
            return build(error, refs)
    return None


def internal_error() -> tp.Fail:
    return fail(FailCode.FRAME, INTERNAL_ERROR_TEXT)
