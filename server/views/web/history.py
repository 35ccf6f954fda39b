"""What each turn did, in words anyone may read, and each player's scores turn by turn.

A turn's events (`ruleset.Event`) mix public facts (a colony placed, a leader moved, a system
destroyed, a conflict and its outcome, artifacts collected) with private ones (scores gained,
colonists drawn, reinforcements sent, orders that failed). `summarise` keeps only the public
ones (R27). `HistoryBook` keeps the summaries of one game and, apart, the scores of every player
after every turn, which only the player's own view shows (and, at the end, the ranking).
Turns played before this process started are read back from the store once.
"""

from __future__ import annotations

from dataclasses import dataclass

from twisted.internet import defer

from ruleset import EndReason, Event, GameState, Kind, Phase
from ruleset.messages import end_reason_line
from server.model.snapshot import GameSnapshot
from server.model.store import TurnArchive
from server.views.web.galaxy import LEADER_NAMES


@dataclass(frozen=True, slots=True)
class TurnSummary:
    """The public account of one turn: what it did, and what the next turn is."""

    turn: int  # the turn's TP number: the first is 0
    combat: bool  # the turn was a combat turn
    lines: tuple[str, ...]
    phase_after: Phase


def summarise(
    turn: int, before: GameState | None, after: GameState, events: tuple[Event, ...]
) -> TurnSummary:
    """The public lines of turn `turn` (its TP number, from 0) from its events; `before` (the
    state it started from, when known) names a conflict's loser."""
    names = {p.id: p.name for p in after.players}
    board = after.board

    def who(player: int | None) -> str:
        return names.get(player, "nobody") if player is not None else "nobody"

    def system(cell: int | None) -> str:
        return board.system_name(cell) if cell is not None and 0 <= cell < board.size else "a system"

    def leader(fleet_id: int | None) -> str:
        fleet = after.fleets.get(fleet_id) if fleet_id is not None else None
        if fleet is None or fleet.kind is None:
            return "a leader"
        return f"{who(fleet.owner)}'s {LEADER_NAMES[fleet.kind]}"

    lines = []
    for event in events:
        kind, detail = event.kind, event.detail
        if kind == "colonized":
            lines.append(f"{who(event.player)} placed a {detail} colony on {system(event.cell)}.")
        elif kind == "moved":
            lines.append(f"{leader(event.fleet)} moved to {system(event.cell)}.")
        elif kind == "destroyed":
            lines.append(f"{who(event.player)}'s bomber destroyed {system(event.cell)}.")
        elif kind == "leader sent home":
            why = "its system was bombed" if detail == "bombed" else "no scientist colony supports it"
            lines.append(f"{leader(event.fleet)} went home: {why}.")
        elif kind == "conflict queued":
            scope, _, conflict_kind = detail.partition(" ")
            where = f" over {system(event.cell)}" if scope == "external" else ""
            lines.append(f"{leader(event.fleet)} starts an {scope} {conflict_kind} conflict{where}.")
        elif kind == "conflict started":
            lines.append(_started(after, detail, who))
        elif kind == "conflict resolved":
            lines.append(_resolved(before, event, who, leader))
        elif kind == "conflict discarded":
            lines.append(f"A {detail} conflict was called off: its leaders no longer face each other.")
        elif kind == "artifacts collected":
            count = int(detail) if detail.isdigit() else 0
            lines.append(f"{who(event.player)} collected {count} alien artifact{'s' if count != 1 else ''}.")
        elif kind == "game over":
            lines.append(_game_over(after, detail))
        # "scored", "drawn", "reinforced" and "order failed" are private (R27): never shown.
    combat = before is not None and before.phase is Phase.COMBAT
    return TurnSummary(turn, combat, tuple(lines), after.phase)


def _game_over(after: GameState, detail: str) -> str:
    """Why the game ended, as the players' GAME OVER! message says it (`ruleset.EndReason`)."""
    try:
        reason = EndReason(detail)
    except ValueError:
        return "The game ended."
    return end_reason_line(reason, len(after.artifacts))


def _started(after: GameState, detail: str, who) -> str:
    scope, _, rest = detail.partition(" ")
    conflict_kind, _, strengths = rest.partition(" ")
    conflict = after.active_conflict
    if conflict is None:
        return f"An {scope} {conflict_kind} conflict starts ({strengths})."
    attacker = who(after.fleets[conflict.attacker].owner)
    defender = who(after.fleets[conflict.defender].owner)
    return (
        f"Combat next turn: {scope} {conflict_kind} conflict, {attacker} (strength "
        f"{conflict.attacker_strength}) attacks {defender} (strength {conflict.defender_strength})."
    )


def _resolved(before: GameState | None, event: Event, who, leader) -> str:
    conflict_kind, _, rest = event.detail.partition(" ")
    strengths, _, removed_text = rest.partition(" removed ")
    attack, _, defence = strengths.partition(":")
    strength = max(int(attack), int(defence)) if attack.isdigit() and defence.isdigit() else 0
    removed = int(removed_text) if removed_text.isdigit() else 0
    loser = ""
    conflict = before.active_conflict if before is not None else None
    if conflict is not None:
        lost = conflict.defender if event.fleet == conflict.attacker else conflict.attacker
        loser = f" against {leader(lost)}"
    text = f"{leader(event.fleet)} won the {conflict_kind} conflict{loser} with a strength of {strength}"
    if removed:
        text += (
            f"; {removed} {Kind[conflict_kind.upper()].label} colon{'ies' if removed != 1 else 'y'} removed"
        )
    return text + "."


class HistoryBook:
    """One game's turn summaries and score history, filled from snapshots and the archive."""

    def __init__(self, archive: TurnArchive | None, game_id: int):
        self.archive = archive
        self.game_id = game_id
        self.summaries: list[TurnSummary] = []  # [turn]: turns by TP number, from 0
        self.scores: list[dict[int, tuple[int, ...]]] = []  # [turn] -> player -> scores after it
        self._last_state: GameState | None = None
        self._loading = False
        self._waiters: list[defer.Deferred] = []

    @property
    def known(self) -> int:
        return len(self.summaries)

    def ensure(self, snapshot: GameSnapshot) -> defer.Deferred:
        """Fires once every turn up to the snapshot's is known (fails when the store lacks one)."""
        if self.known >= snapshot.turn:
            return defer.succeed(None)
        if self.known == snapshot.turn - 1 and (self._last_state is not None or snapshot.turn == 1):
            self._add(snapshot.turn, snapshot.state, snapshot.last_turn_events)
            return defer.succeed(None)
        waiter: defer.Deferred = defer.Deferred()
        self._waiters.append(waiter)
        if not self._loading:
            self._loading = True
            defer.ensureDeferred(self._load(snapshot.turn))
        return waiter.addCallback(lambda _: self.ensure(snapshot))

    async def _load(self, upto: int) -> None:
        failure = None
        try:
            while self.known < upto:
                turn = self.known + 1
                record = None
                if self.archive is not None:
                    record = await defer.maybeDeferred(self.archive.turn_record, self.game_id, turn)
                if record is None:
                    raise LookupError(f"turn {turn} of game {self.game_id} is not in the store")
                self._add(turn, record.state, tuple(record.events))
        except Exception:
            failure = defer.Failure()
        self._loading = False
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if failure is None:
                waiter.callback(None)
            else:
                waiter.errback(failure)

    def _add(self, played: int, state: GameState, events: tuple[Event, ...]) -> None:
        """The `played`-th turn played (the archive's count, from 1): TP turn `played - 1`."""
        self.summaries.append(summarise(played - 1, self._last_state, state, events))
        self.scores.append({p.id: p.scores for p in state.players})
        self._last_state = state

    def scores_of(self, player: int) -> list[tuple[int, tuple[int, ...]]]:
        """(turn, scores after it) for every turn the player was in the game (TP numbers)."""
        return [(i, by_player[player]) for i, by_player in enumerate(self.scores) if player in by_player]
