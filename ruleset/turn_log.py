"""What resolving a turn produces: board messages and events, collected as it goes, and the outcome."""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Mention, Message, Phrase, unique_mentions
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
    """Messages and events collected while a turn is resolved.

    With `messages` False (a playout, a simulation) the log keeps neither board messages nor
    events, and the rules code builds no message text for it: it checks `log.telling` first.
    """

    def __init__(self, turn: int, messages: bool = True):
        self.turn = turn
        self.telling = messages
        self.messages: list[Message] = []
        self.events: list[Event] = []
        # Bodies told to several players (Turn Order, COMBAT!) by id, with their references each
        # named once; the body is kept, so its id stays its own while the log lives.
        self._unique: dict[int, tuple[Phrase, tuple[Mention, ...]]] = {}

    def tell(self, player: int, subject: str, body: Phrase, *, unique: bool = False) -> None:
        """Post `body` to `player`'s board; `unique`: its mentions are known to name each thing once."""
        if not self.telling:
            return
        mentions = body.mentions
        if unique:
            pass
        elif len(mentions) > 2:
            known = self._unique.get(id(body))
            if known is None or known[0] is not body:
                known = self._unique[id(body)] = (body, unique_mentions(mentions))
            mentions = known[1]
        else:
            mentions = unique_mentions(mentions)
        self.messages.append(Message(player, self.turn, subject, body.text, mentions))

    def tell_all(self, players: list[int], subject: str, body: Phrase) -> None:
        """The same message to each of `players`."""
        for player_id in players:
            self.tell(player_id, subject, body)

    def note(
        self,
        kind: str,
        player: int | None = None,
        fleet: int | None = None,
        cell: int | None = None,
        detail: str = "",
    ) -> None:
        if not self.telling:
            return
        self.events.append(Event(kind, player, fleet, cell, detail))

    def outcome(self, state: GameState) -> TurnOutcome:
        return TurnOutcome(state, tuple(self.messages), tuple(self.events))
