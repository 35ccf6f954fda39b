"""What a player is told, built from one `GameSnapshot`: one `OutboxEntry` per event and player.

Events (`kind`): "turn_started" (with the deadline, if any), "reminder" (the deadline is near
and the player has not finished), "last_one" (everyone else who acts has finished),
"conflict" (a war or revolt the player is in is queued or about to be fought), "game_over"
(with the final standing, `server.views.standing`), and "test" (a player tries their channels).

Each payload holds only what that player may see: the game's public facts (turn, phase,
deadline, players' names, leaders in a conflict, which are public on the board) and, once the
game is over, the public ranking. Never an opponent's colonist kinds or scores before the end.
Each carries an idempotency key, `"{game id}:{turn}:{kind}:{player id}"`, the same however
often the event is derived, so the outbox keeps it once per channel and a receiver can drop
repeats.

The functions here are pure: they take the snapshot and `now` (the game clock's time).
"""

from __future__ import annotations

from typing import Any

from ruleset import FinalStanding, Phase
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.notifications.channels import EVENT_KINDS
from server.views.conflicts import conflicts_of
from server.views.deadline import deadline_fields, deadline_words, in_words
from server.views.standing import categories_words, place_words, standing_document, standing_of
from server.views.web.documents import standing_fields

TURN_STARTED, REMINDER, LAST_ONE, CONFLICT, GAME_OVER, TEST = (
    "turn_started",
    "reminder",
    "last_one",
    "conflict",
    "game_over",
    "test",
)
KINDS = (*EVENT_KINDS, TEST)  # EVENT_KINDS: the five above, in this order


def idempotency_key(game_id: int, turn: int, kind: str, player: int) -> str:
    return f"{game_id}:{turn}:{kind}:{player}"


def open_turn(snapshot: GameSnapshot) -> int:
    """The number of the turn being played, as every tool shows it: the TP Universe's turn
    counter (a game starts at turn 0; docs/operating.md, "Turn numbers")."""
    return snapshot.turn


def _deadline_fields(snapshot: GameSnapshot, now: float) -> dict[str, Any]:
    """The deadline as every surface gives it (`server.views.deadline`: ISO 8601 with its
    offset, and the seconds left), with the line people read."""
    return {
        **deadline_fields(snapshot.deadline, now),
        "deadline_utc": None if snapshot.deadline is None else deadline_words(snapshot.deadline, now),
    }


def _deadline_sentence(snapshot: GameSnapshot, now: float) -> str:
    if snapshot.deadline is None:
        return "It ends when everyone has finished."
    return f"It ends {deadline_words(snapshot.deadline, now)} or when everyone has finished."


def _entry(
    snapshot: GameSnapshot,
    player: int,
    kind: str,
    turn: int,
    title: str,
    text: str,
    now: float,
    **extra: Any,
) -> OutboxEntry:
    key = idempotency_key(snapshot.game_id, turn, kind, player)
    payload: dict[str, Any] = {
        "key": key,
        "event": kind,
        "game": snapshot.name,
        "turn": turn,
        "phase": snapshot.phase.value,
        "player": snapshot.usernames.get(player, ""),
        "title": title,
        "text": text,
        **_deadline_fields(snapshot, now),
        **extra,
    }
    return OutboxEntry(snapshot.game_id, player, key, kind, payload)


def turn_started(
    snapshot: GameSnapshot, player: int, now: float, *, gather: float = 0.0, with_conflicts: bool = False
) -> OutboxEntry:
    """The turn has started and waits for `player`. It is sent `gather` seconds late: when
    everyone else finishes meanwhile (players who play at once, computer players), the
    `last_one` that follows takes its place, and the player gets one message, not two. With
    `with_conflicts`, the player's conflicts of the new turn are told in the same message."""
    turn = open_turn(snapshot)
    combat = snapshot.phase is Phase.COMBAT
    what = "a combat turn: your leader fights" if combat else "your orders are awaited"
    title = f"{snapshot.name}: turn {turn} has started"
    text = f"Turn {turn} of game {snapshot.name} has started ({what}). {_deadline_sentence(snapshot, now)}"
    extra: dict[str, Any] = {}
    documents = conflicts_of(snapshot, player) if with_conflicts else []
    if documents:
        sentence = _conflict_sentence(documents)
        extra = {"conflicts": documents, "conflict_text": sentence[0].upper() + sentence[1:]}
        text += " " + extra["conflict_text"]
    entry = _entry(snapshot, player, TURN_STARTED, turn, title, text, now, **extra)
    return OutboxEntry(entry.game_id, player, entry.key, TURN_STARTED, entry.payload, not_before=now + gather)


def reminder(snapshot: GameSnapshot, player: int, now: float) -> OutboxEntry:
    turn = open_turn(snapshot)
    left = in_words((snapshot.deadline or now) - now)
    title = f"{snapshot.name}: turn {turn} ends in {left}"
    text = (
        f"Turn {turn} of game {snapshot.name} ends in {left}"
        + (f", {deadline_words(snapshot.deadline, now)}" if snapshot.deadline is not None else "")
        + ", and you have not finished it yet."
    )
    return _entry(snapshot, player, REMINDER, turn, title, text, now)


def last_one(snapshot: GameSnapshot, player: int, now: float) -> OutboxEntry:
    """Everyone else who acts has finished; the turn waits only for `player`. It takes the
    place of the turn's `turn_started` when that one has not been sent yet."""
    turn = open_turn(snapshot)
    title = f"{snapshot.name}: turn {turn} waits only for you"
    text = (
        f"Everyone else has finished turn {turn} of game {snapshot.name}: the turn ends as soon "
        f"as you finish. {_deadline_sentence(snapshot, now)}"
    )
    entry = _entry(snapshot, player, LAST_ONE, turn, title, text, now)
    started = idempotency_key(snapshot.game_id, turn, TURN_STARTED, player)
    return OutboxEntry(entry.game_id, player, entry.key, LAST_ONE, entry.payload, replaces=started)


def conflict_signature(snapshot: GameSnapshot, player: int) -> tuple:
    """The conflicts `player` is in, as comparable values (a change means news)."""
    state = snapshot.state
    signature = []
    for index, conflict in enumerate(state.conflicts):
        owners = (state.fleets[conflict.attacker].owner, state.fleets[conflict.defender].owner)
        if player in owners:
            running = index == 0 and state.phase is Phase.COMBAT
            signature.append(
                (conflict.internal, int(conflict.kind), conflict.attacker, conflict.defender, running)
            )
    return tuple(signature)


def conflict(snapshot: GameSnapshot, player: int, now: float) -> OutboxEntry | None:
    """The player's conflicts in the coming turn; None when they are in none."""
    documents = conflicts_of(snapshot, player)
    if not documents:
        return None
    turn = open_turn(snapshot)
    title = f"{snapshot.name}: you are in a conflict (turn {turn})"
    text = f"Game {snapshot.name}, turn {turn}: {_conflict_sentence(documents)}"
    return _entry(snapshot, player, CONFLICT, turn, title, text, now, conflicts=documents)


def _conflict_sentence(documents: list[dict[str, Any]]) -> str:
    """ "a war of Settler leaders against bob is queued; ...": the player's conflicts."""
    lines = []
    for doc in documents:
        when = "is fought this turn" if doc["running"] else "is queued"
        lines.append(f"a {doc['type']} of {doc['leader_kind']} leaders against {doc['opponent']} {when}")
    return "; ".join(lines) + "."


def final_ranking(snapshot: GameSnapshot) -> list[dict[str, Any]]:
    """The public result once the game is over, in the row shape of earlier releases (kept one
    release): each place of the standing, best first, with `place` its rank (shared by players
    equal in all four categories) and `scores` the five scores before the artifacts were shared
    out (`raw` beside `raw_materials`)."""
    return [
        {
            "place": row["place"],
            "name": row["name"],
            "final": row["final"],
            "winner": row["winner"],
            "scores": row["scores"],
        }
        for row in standing_fields(snapshot)["ranking"] or []
    ]


def standing_lines(standing: FinalStanding) -> list[str]:
    """One line per place, as every channel's text shows it: "1. ann: rank 1 of 4 (winner), final
    score 5; after artifacts: Money 5, … (before: 4, 6, 5, 6; 2 alien artifacts)"."""
    of = len(standing.places)
    return [
        f"{place.rank}. {place.name}: {place_words(place, of)}; {categories_words(place)}"
        for place in standing.places
    ]


def game_over(snapshot: GameSnapshot, player: int, now: float) -> OutboxEntry:
    """GAME OVER for `player`: why, who won, their own place, and every place of the standing
    (`server.views.standing`; `standing` in the payload, `ranking` in the old row shape)."""
    state = snapshot.state
    standing = standing_of(state) if snapshot.over else None
    document = None if standing is None else standing_document(standing, len(state.artifacts))
    rows = final_ranking(snapshot)
    winners = [] if standing is None else [place.name for place in standing.winners]
    mine = None if standing is None else standing.of(player)
    title = f"{snapshot.name}: the game is over"
    head = f"Game {snapshot.name} is over after turn {max(0, snapshot.turn - 1)}."
    if document is not None:
        head += f" {document['reason_text']}"
    if winners:
        head += f" Winner{'s' if len(winners) > 1 else ''}: {', '.join(winners)}."
    if standing is not None and mine is not None:
        head += f" You: {place_words(mine, len(standing.places))}."
    lines = [head]
    if standing is not None:
        lines += ["Final ranking:", *standing_lines(standing)]
    return _entry(
        snapshot,
        player,
        GAME_OVER,
        snapshot.turn,
        title,
        "\n".join(lines),
        now,
        reason=None if standing is None else standing.reason.value,
        winners=winners,
        standing=document,
        ranking=rows,
        place=None if mine is None else mine.rank,
    )


def test_message(snapshot: GameSnapshot, player: int, now: float, nonce: str) -> OutboxEntry:
    """A player's test of their channels (`nonce` makes each test a new event)."""
    title = f"{snapshot.name}: test notification"
    text = f"This is a test of your notifications for game {snapshot.name}."
    entry = _entry(snapshot, player, TEST, open_turn(snapshot), title, text, now)
    key = f"{entry.key}:{nonce}"
    return OutboxEntry(entry.game_id, player, key, TEST, {**entry.payload, "key": key})
