"""A game's status as operators read it: `tae-server status` (text and `--json`) and the admin
protocol's `status` render one value, `GameStatus`, computed from a snapshot.

A running server computes it from the game's live snapshot; a command without a server (or a
cluster node asked about a game another node runs) from the game as stored, whose clock holds
the deadline the running server recorded (`deadline_recorded`). Nothing private is in it while
the game is played (no colonist types, no scores); once the game is over its final standing is
public and is shown as `server.views.standing` renders it for every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ruleset import FinalStanding
from server.model.snapshot import GameSnapshot
from server.views.deadline import deadline_iso
from server.views.standing import categories_words, place_words, standing_of, state_standing_document


@dataclass(frozen=True, slots=True)
class PlayerStatus:
    """A player and where they are in the open turn: `state` is "finished", "waiting",
    "stand-in" (the server's stand-in plays the seat), "not playing" (the turn does not wait
    for them), "removed", or "over" once the game has ended. `seat` is who plays the seat
    (`GameSnapshot.seat_label`)."""

    id: int
    name: str
    seat: str
    state: str
    removed: bool


@dataclass(frozen=True, slots=True)
class GameStatus:
    """What `status` says of a game (see the module docstring). `seconds_left` and `deadline`
    are None without a deadline (and while paused); `paused_left` the seconds the turn gets back
    at resume (None: none). `deadline_known` is False when the status comes from the database
    and no running server recorded the deadline the timer gives. `server` says which server runs
    the game (None: none runs)."""

    snapshot: GameSnapshot
    players: tuple[PlayerStatus, ...]
    waiting_for: tuple[str, ...]
    needs_players: int  # players still to join before the turn clock starts (0: it can run)
    seconds_left: int | None
    deadline: float | None
    deadline_known: bool
    server: str | None
    standing: FinalStanding | None

    @property
    def setup(self):
        return self.snapshot.setup


def status_of(
    snapshot: GameSnapshot, now: float, *, server: str | None, deadline_recorded: bool = False
) -> GameStatus:
    """The status of the game in `snapshot` at clock time `now`. `deadline_recorded`: the
    snapshot is of the stored game, whose clock has only what a server recorded."""
    state = snapshot.state
    waiting = set(snapshot.waiting_for())
    names = dict(snapshot.usernames)
    players = []
    for player in state.players:
        pid = player.id
        removed = pid in snapshot.removed_players
        if snapshot.over:
            where = "over"
        elif removed:
            where = "removed"
        elif pid in snapshot.stand_ins():
            where = "stand-in"
        elif pid in snapshot.finished:
            where = "finished"
        elif pid in waiting:
            where = "waiting"
        else:
            where = "not playing"
        players.append(
            PlayerStatus(pid, names.get(pid, player.name), snapshot.seat_label(pid), where, removed)
        )
    timer = snapshot.setup.timer
    needed = max(1, timer.turn_players_min) - len(state.players)
    seconds = snapshot.seconds_left(now)
    running = not snapshot.over and not snapshot.paused and seconds >= 0
    return GameStatus(
        snapshot=snapshot,
        players=tuple(players),
        waiting_for=tuple(names.get(pid, str(pid)) for pid in sorted(waiting)) if not snapshot.over else (),
        needs_players=0 if snapshot.over or snapshot.started else max(0, needed),
        seconds_left=seconds if running else None,
        deadline=snapshot.deadline if running else None,
        deadline_known=not deadline_recorded or snapshot.deadline is not None or snapshot.paused,
        server=server,
        standing=standing_of(state),
    )


# -- for programs ------------------------------------------------------------------------------


def _player_document(player: PlayerStatus) -> dict[str, Any]:
    return {
        "id": player.id,
        "name": player.name,
        "seat": player.seat,
        "state": player.state,
        "removed": player.removed,
        # Deprecated (removed in the next release): the state in the words of version 0.1.
        "turn": _old_turn_words(player),
    }


def _old_turn_words(player: PlayerStatus) -> str:
    if player.state == "over":
        return "over"
    if player.state == "stand-in":
        return f"{player.seat}: the stand-in plays"
    return "not playing this turn" if player.state == "not playing" else player.state


def status_document(status: GameStatus) -> dict[str, Any]:
    """The status as JSON: plain values only (numbers, names, keys), the final standing as
    `server.views.standing` documents it."""
    snapshot = status.snapshot
    setup = snapshot.setup
    board = snapshot.state.board
    standing = state_standing_document(snapshot.state)
    removed = sum(1 for p in status.players if p.removed)
    return {
        "id": snapshot.game_id,
        "name": snapshot.name,
        "description": setup.description,
        "seed": setup.seed,
        "custom_map": setup.map_text is not None,
        "board_size": [max(len(row) for row in board.rows), len(board.rows)],
        "turn": snapshot.turn,
        "phase": snapshot.phase.value,
        "players": [_player_document(p) for p in status.players],
        "removed": removed,
        "max_players": setup.max_players,
        "timer": setup.timer.kind,
        "turn_length": setup.timer.turn_length,
        "timer_description": setup.timer.describe(),
        "timer_brief": setup.timer.brief(),
        "account_creation": setup.account_creation,
        "auto_add": setup.auto_add,
        "absent_after_missed_turns": setup.absent_after_missed_turns,
        "vacation_days_max": setup.vacation_days_max,
        "paused": snapshot.paused,
        "paused_left": None
        if snapshot.paused_left is None or not snapshot.paused
        else round(snapshot.paused_left),
        "needs_players": status.needs_players,
        "waiting_for": list(status.waiting_for),
        # as every surface writes a deadline (server.views.deadline): ISO 8601 with its offset,
        # and whole seconds left, -1 without a deadline
        "deadline": deadline_iso(status.deadline),
        "seconds_left": -1 if status.seconds_left is None else status.seconds_left,
        "server": status.server,
        "winners": [place.name for place in status.standing.winners] if status.standing else [],
        "standing": standing,
        # Deprecated (removed in the next release): use "standing".
        "final_scores": {place.name: place.final for place in status.standing.places}
        if status.standing
        else {},
    }


# -- for people --------------------------------------------------------------------------------


def _player_words(player: PlayerStatus) -> str:
    if player.state == "stand-in" and player.seat.startswith("computer"):
        return f"{player.seat}: the computer plays"
    if player.state == "stand-in":
        return f"{player.seat}: the stand-in plays"
    return "not playing this turn" if player.state == "not playing" else player.state


def _time_left(status: GameStatus) -> str:
    snapshot = status.snapshot
    timer = snapshot.setup.timer
    if snapshot.paused:
        left = snapshot.paused_left
        if left is not None:
            return f"paused by an operator, {round(left)} s left when resumed"
        if timer.turns_have_a_deadline():
            return "paused by an operator (the turn gets its time when it resumes)"
        return "paused by an operator (no deadline)"
    if status.seconds_left is not None:
        if status.server is None and status.seconds_left == 0:
            return "the turn ends when the server starts"
        return f"{status.seconds_left} s" + (" (the server is not running)" if status.server is None else "")
    if not timer.turns_have_a_deadline():
        return "no deadline"
    if not status.deadline_known:
        return "no deadline known" + (" (the server is not running)" if status.server is None else "")
    if status.needs_players:
        return "no deadline yet: the turn clock starts with the game"
    return "no deadline set"


def status_text(status: GameStatus) -> str:
    """The status in lines, as `tae-server status` prints it and the admin `status` answers."""
    snapshot = status.snapshot
    setup = snapshot.setup
    board = snapshot.state.board
    turn = (
        f"over at turn {snapshot.turn}"
        if snapshot.over
        else f"turn {snapshot.turn} open ({snapshot.phase.value} turn)"
    )
    lines = [f"game {snapshot.name!r} (id {snapshot.game_id}): {turn}"]
    if setup.description:
        lines.append(f"  {setup.description}")
    lines.append(
        f"  map: {'custom' if setup.map_text is not None else 'standard'} "
        f"{max(len(row) for row in board.rows)}×{len(board.rows)}, seed {setup.seed}"
    )
    lines.append(f"  timer: {setup.timer.describe()}" + (" — PAUSED" if snapshot.paused else ""))
    removed = sum(1 for p in status.players if p.removed)
    lines.append(
        f"  players: {len(status.players) - removed}"
        + (f" of at most {setup.max_players}" if setup.max_players else "")
        + (f", {removed} removed" if removed else "")
        + "; "
        + ("players may create accounts" if setup.account_creation else "no new accounts")
    )
    standing = status.standing
    places = {place.player: place for place in standing.places} if standing else {}
    for player in status.players:
        place = places.get(player.id)
        if place is None:
            words = _player_words(player)
        else:
            words = ("removed; " if player.removed else "") + place_words(place, len(places))
        lines.append(f"    {player.id:>3}  {player.name:<20} {words}")
        if place is not None:
            lines.append(f"         {'':<20} {categories_words(place)}")
    lines.append(
        "  absent players: "
        + (
            f"the stand-in plays after {setup.absent_after_missed_turns} missed turns"
            if setup.absent_after_missed_turns
            else "never marked"
        )
        + "; vacations: "
        + (f"up to {setup.vacation_days_max} days" if setup.vacation_days_max else "none")
    )
    if standing is not None:
        document = state_standing_document(snapshot.state)
        assert document is not None
        lines.append(f"  the game ended: {document['reason_text']}")
        lines.append(f"  winners: {', '.join(place.name for place in standing.winners) or 'none'}")
    else:
        lines.append(f"  time left: {_time_left(status)}")
        if status.needs_players:
            more = status.needs_players
            lines.append(f"  turns start when {more} more player{'s' if more != 1 else ''} have joined")
        if status.waiting_for:
            lines.append(f"  waiting for: {', '.join(status.waiting_for)}")
    lines.append("  server: " + (f"running ({status.server})" if status.server else "not running"))
    return "\n".join(lines) + "\n"
