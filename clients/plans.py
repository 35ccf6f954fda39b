"""Plans: conversations with the server written once, run by any transport.

A plan is a generator. It yields what it wants sent and receives the answers:

* ``reply = yield message`` sends one request; the plan gets the reply, or the request's
  ``ClientError`` is raised inside the plan at the ``yield`` (so ``try``/``except`` works);
* ``outcomes = yield [m1, m2, …]`` sends the messages pipelined (all written before any answer
  is read, as CL4 does for GetOrder) and gets a list with, for each, the reply or the
  ``ClientError`` *instance* (not raised), in the same order;
* ``return value`` ends the plan; the transport's ``run(plan)`` returns that value.

The cache update, the order helpers and the turn helpers are plans, so the blocking transport
runs them synchronously and the Twisted transport runs them with Deferreds, with the same code
and no I/O in either the cache or the game API.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, TypeVar

from protocol import Message

from .errors import ClientError

T = TypeVar("T")

#: What a plan yields: one message, or a batch to pipeline.
Step = Message | Sequence[Message]
Plan = Generator[Step, Any, T]


def is_batch(step: Step) -> bool:
    """True if ``step`` is a batch (a list or tuple of messages) rather than one message."""
    return not isinstance(step, Message)


class PlanDone(Exception):
    """Internal: raised by ``advance`` with the plan's return value."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def advance(plan: Plan, outcome: Any = None, *, first: bool = False, single: bool = False):
    """Resume ``plan`` with the outcome of its last step; return its next step.

    ``first`` starts the plan. For a single-message step (``single``), an outcome that is a
    ``ClientError`` is thrown into the plan; for a batch it is passed as a value. Raises
    ``PlanDone(value)`` when the plan returns (and whatever the plan raises).
    """
    try:
        if first:
            return next(plan)
        if single and isinstance(outcome, ClientError):
            return plan.throw(outcome)
        return plan.send(outcome)
    except StopIteration as stop:
        raise PlanDone(stop.value) from None
