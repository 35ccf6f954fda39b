"""What resolving a turn produces: board messages and events, collected as it goes, and the outcome."""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Message, Phrase, message
from .state import GameState


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a turn, for logs, audits and turn records.

    For "order failed" the detail is the name of the condition that failed (`ruleset.conditions`).
    """

    kind: str
    player: int | None = None
    fleet: int | None = None
    cell: int | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """The state after a turn, the board messages it posted and what happened in it."""

    state: GameState
    messages: tuple[Message, ...]
    events: tuple[Event, ...]


class TurnLog:
    """Messages and events collected while a turn is resolved."""

    def __init__(self, turn: int):
        self.turn = turn
        self.messages: list[Message] = []
        self.events: list[Event] = []

    def tell(self, player: int, subject: str, body: Phrase) -> None:
        self.messages.append(message(player, self.turn, subject, body))

    def tell_all(self, players: list[int], subject: str, body: Phrase) -> None:
        """The same message to each of `players`."""
        mentions = tuple(dict.fromkeys(body.mentions))
        for player_id in players:
            self.messages.append(Message(player_id, self.turn, subject, body.text, mentions))

    def note(
        self,
        kind: str,
        player: int | None = None,
        fleet: int | None = None,
        cell: int | None = None,
        detail: str = "",
    ) -> None:
        self.events.append(Event(kind, player, fleet, cell, detail))

    def outcome(self, state: GameState) -> TurnOutcome:
        return TurnOutcome(state, tuple(self.messages), tuple(self.events))
