"""The data of every page and API answer, as plain JSON-ready dicts built from snapshots.

* `public_game(snapshot)`: what anyone may see of a game (the R27 view of nobody, player 0):
  the board, leaders, players with who is waited for, conflicts, and — only once the game is
  over — the final standing (`server.views.standing`: places, final scores, each player's
  categories before and after the alien artifacts were shared out). No colonist type, no score,
  no order, no message before that.
* `my_view(snapshot, player, history)`: one player's own view: their hand with its types, their
  leaders and bombers, their scores and score history, board messages and orders.

Pages and the JSON API render the same documents, so a page cannot show what the API would not.
The parts that do not depend on the time are built once per snapshot (`snapshot.derived`).
"""

from __future__ import annotations

from typing import Any

from ruleset import Kind, OrderType, Phase, Role, allowed_order_types, visible_to
from ruleset import messages as subjects
from ruleset.kinds import SCORE_KEYS, SCORE_TITLES
from ruleset.orders import ORDER_NAMES, ORDERS_PER_TURN
from server.model.snapshot import GameSnapshot
from server.views.conflicts import conflict_document
from server.views.deadline import deadline_fields
from server.views.own_seat import own_seat_note
from server.views.standing import state_standing_document
from server.views.web.galaxy import LEADER_NAMES, Galaxy, galaxy
from server.views.web.history import HistoryBook, TurnSummary
from server.views.web.mapsvg import owner_colour

#: The key earlier releases spelled Raw Materials with; answers still carry it beside
#: `raw_materials` (`ruleset.kinds.SCORE_KEYS`) for one release, for scripts that read it.
OLD_RAW_KEY = "raw"
NORMAL_TYPES = {Role.LEADER: OrderType.MOVE, Role.BOMBER: OrderType.ATTACK}


def public_galaxy(snapshot: GameSnapshot) -> Galaxy:
    """The map everyone sees (it depends on the state alone: once for all its snapshots)."""
    return snapshot.of_state(
        ("web", "galaxy"), lambda: galaxy(snapshot.state.board, visible_to(snapshot.state, 0))
    )


def accepting_players(snapshot: GameSnapshot) -> bool:
    setup = snapshot.setup
    full = bool(setup.max_players) and len(snapshot.state.players) >= setup.max_players
    return setup.account_creation and not snapshot.over and not full


def public_game(snapshot: GameSnapshot) -> dict[str, Any]:
    """Everything public about the game but the time left (see `with_time`)."""
    return snapshot.derived(("web", "public"), lambda: _public_game(snapshot))


def with_time(document: dict[str, Any], snapshot: GameSnapshot, now: float) -> dict[str, Any]:
    """The document with the turn's time: `seconds_left` (-1: no deadline), `deadline` (ISO 8601
    with its UTC offset, or None; `server.views.deadline`), `paused`."""
    deadline = snapshot.deadline if snapshot.started else None
    return {
        **document,
        **deadline_fields(deadline, now),
        "paused": snapshot.paused,  # an operator stopped the turn clock (no deadline runs)
    }


def _public_game(snapshot: GameSnapshot) -> dict[str, Any]:
    state = snapshot.state
    view = visible_to(state, 0)
    board = state.board
    waiting = set(snapshot.waiting_for())
    acting = set(snapshot.acting_players())
    counts: dict[int, dict[Role, int]] = {}
    for fleet in view.fleets.values():
        by_role = counts.setdefault(fleet.owner, {})
        by_role[fleet.role] = by_role.get(fleet.role, 0) + 1
    players = [
        {
            "id": pid,
            "name": name,
            "colour": owner_colour(pid),
            "acting": pid in acting,
            "finished": pid in snapshot.finished and pid in acting,
            "waiting": pid in waiting,
            "removed": pid in snapshot.removed_players,
            "seat": snapshot.seat_label(pid),
            "stand_in": pid in snapshot.stand_ins(),
            "colonists": counts.get(pid, {}).get(Role.COLONIST, 0),
            "bombers": counts.get(pid, {}).get(Role.BOMBER, 0),
        }
        for pid, name in view.players
    ]
    timer = snapshot.setup.timer
    return {
        "name": snapshot.name,
        "description": snapshot.setup.description,
        "turn": snapshot.turn,
        "phase": snapshot.phase.value,
        "over": snapshot.over,
        "started": snapshot.started,
        "resolving": snapshot.resolving,
        "timer": {
            "kind": timer.kind,
            "turn_length": timer.turn_length,
            "players_min": timer.turn_players_min,
            "description": timer.describe(),  # one line; a calendar's schedule and zone
        },
        "accepting_players": accepting_players(snapshot),
        "players": players,
        "pool_total": view.pool_total,
        "width": max((len(row) for row in board.rows), default=0),
        "height": len(board.rows),
        "conflicts": [conflict_document(snapshot, i) for i in range(len(view.conflicts))],
        **standing_fields(snapshot),
    }


def public_systems(snapshot: GameSnapshot) -> list[dict[str, Any]]:
    """Every system of the public map (the JSON API's; the pages draw the map instead)."""
    return snapshot.derived(
        ("web", "systems"), lambda: [system_document(s) for s in public_galaxy(snapshot).systems]
    )


def system_document(system) -> dict[str, Any]:
    leader = system.leader
    return {
        "id": system.object_id,
        "x": system.x,
        "y": system.y,
        "terrain": {"M": "uninhabitable", "A": "artifact"}.get(system.terrain, "habitable"),
        "colony": None if system.colony is None else system.colony.label,
        "artifact": system.artifact,
        "destroyed": system.destroyed,
        "leader": None
        if leader is None
        else {"fleet": leader.fleet, "owner": leader.owner, "kind": leader.kind.label},
        "region": system.region,
        "unification": system.unification,
    }


def with_old_raw_key(named: dict[str, int]) -> dict[str, int]:
    """Scores by name with the old key `raw` beside `raw_materials` (kept one release)."""
    return {**named, OLD_RAW_KEY: named["raw_materials"]}


def scores_document(scores: tuple[int, ...]) -> dict[str, int]:
    """A player's five scores by name (`ruleset.kinds.SCORE_KEYS`, and the old `raw`)."""
    return with_old_raw_key(dict(zip(SCORE_KEYS, scores, strict=True)))


def standing_fields(snapshot: GameSnapshot) -> dict[str, Any]:
    """`standing`: the final standing once the game is over (None before), as every surface
    renders it (`server.views.standing.standing_document`); `ranking`: the same places in the
    row shape of earlier releases, kept one release for scripts (`place` is the rank, shared by
    players equal in all four categories; `scores` are the five scores before the artifacts
    were shared out)."""
    standing = state_standing_document(snapshot.state) if snapshot.over else None
    if standing is None:
        return {"standing": None, "ranking": None}
    ranking = [
        {
            "place": place["rank"],
            "player": place["player"],
            "name": place["name"],
            "colour": owner_colour(place["player"]),
            "final": place["final"],
            "winner": place["winner"],
            "scores": with_old_raw_key(place["categories_before"]),
        }
        for place in standing["places"]
    ]
    return {"standing": standing, "ranking": ranking}


def summary_document(summary: TurnSummary) -> dict[str, Any]:
    return {"turn": summary.turn, "combat": summary.combat, "lines": list(summary.lines)}


def seat_document(snapshot: GameSnapshot, player: int) -> dict[str, Any]:
    """Who plays the player's seat, for the player only: with their missed turns in a row, the
    end of their vacation (Unix time), which public documents leave out, and while the stand-in
    plays it the `note` on how to take it back (`server.views.own_seat`; null otherwise)."""
    attendance = snapshot.attendance.get(player)
    return {
        "seat": snapshot.seat_label(player),
        "stand_in": player in snapshot.stand_ins(),
        "missed_turns": attendance.missed if attendance is not None else 0,
        "vacation_until": attendance.until if attendance is not None else None,
        "note": own_seat_note(snapshot, player),
    }


def lobby_entry(snapshot: GameSnapshot, now: float) -> dict[str, Any]:
    public = public_game(snapshot)
    keys = (
        "name",
        "description",
        "turn",
        "phase",
        "over",
        "started",
        "timer",
        "accepting_players",
        "standing",
    )
    entry = {key: public[key] for key in keys}
    entry["players"] = [
        {k: p[k] for k in ("id", "name", "colour", "finished", "waiting", "removed", "seat", "stand_in")}
        for p in public["players"]
    ]
    return with_time(entry, snapshot, now)


def my_game_entry(snapshot: GameSnapshot, player: int, now: float) -> dict[str, Any]:
    """One game of an account (`GET /api/me`): the seat's name and player, the turn, its
    deadline, whether the turn waits for this player, who plays the seat, and once the game is
    over the player's `place` (rank, of, shared, winner, final score; null before)."""
    public = public_game(snapshot)
    me = next(p for p in public["players"] if p["id"] == player)
    standing = public["standing"]
    place = None
    if standing is not None:
        mine = next((p for p in standing["places"] if p["player"] == player), None)
        if mine is not None:
            place = {key: mine[key] for key in ("rank", "of", "shared", "winner", "final")}
    entry = {
        "game": public["name"],
        "player": player,
        "name": me["name"],
        "turn": public["turn"],
        "phase": public["phase"],
        "started": public["started"],
        "over": public["over"],
        "waiting_for_me": me["waiting"],
        "finished": me["finished"],
        "seat": me["seat"],
        "removed": me["removed"],
        "place": place,
    }
    return with_time(entry, snapshot, now)


# -- a player's own view -------------------------------------------------------------------


def order_type_for(snapshot: GameSnapshot, fleet_id: int) -> int:
    """The order a fleet takes now, or the one it takes in a normal turn when it takes none now
    (a probe of it then meets the ruleset's own refusal)."""
    state = snapshot.state
    allowed = allowed_order_types(state, fleet_id)
    if allowed:
        return int(allowed[0])
    fleet = state.fleets.get(fleet_id)
    if fleet is None:
        return int(OrderType.COLONIZE)
    if fleet.role is Role.COLONIST:
        return int(OrderType.COLONIZE_MINING if fleet.kind is Kind.MINING else OrderType.COLONIZE)
    return int(NORMAL_TYPES[fleet.role])


def my_orders(snapshot: GameSnapshot, player: int) -> list[dict[str, Any]]:
    """The player's orders for the open turn, in the order they were given: `number` (1 first,
    as the map's order marks count them), the fleet (`fleet`, `fleet_name`, `fleet_role`,
    `fleet_kind`: only the player's own fleets, whose kinds they know), the order's type and its
    target (`target`: the system's id, `target_name` and `x`, `y`: its coordinates)."""
    state = snapshot.state
    board = state.board
    rows: list[dict[str, Any]] = []
    for object_id in sorted(snapshot.queues):
        for slot, queued in enumerate(snapshot.queue(object_id)):
            if queued.order.player != player:
                continue
            entry = queued.entry
            cell = board.cell_of_object(entry.target)
            order_type = OrderType(entry.type) if entry.type in ORDER_NAMES else None
            fleet = state.fleets.get(object_id)
            takes_target = order_type is None or order_type.takes_target
            at = board.coords[cell] if cell is not None and takes_target else None
            rows.append(
                {
                    "fleet": object_id,
                    "fleet_name": _fleet_name(snapshot, object_id),
                    "fleet_role": fleet.role.name.lower() if fleet is not None else None,
                    "fleet_kind": fleet.kind.label if fleet is not None and fleet.kind is not None else None,
                    "slot": slot,
                    "type": entry.type,
                    "type_name": ORDER_NAMES.get(order_type, str(entry.type))
                    if order_type
                    else str(entry.type),
                    "target": entry.target if takes_target else None,
                    "target_name": board.system_name(cell) if cell is not None else None,
                    "x": at[0] if at is not None else None,
                    "y": at[1] if at is not None else None,
                    "seq": entry.seq,
                }
            )
    rows.sort(key=lambda row: row["seq"])
    for number, row in enumerate(rows, 1):
        row["number"] = number
    return rows


ORDER_DONE = (subjects.COLONIZE_DONE, subjects.MOVE_DONE, subjects.ATTACK_DONE)
ORDER_FAILED = (subjects.COLONIZE_FAILED, subjects.MOVE_FAILED, subjects.ATTACK_FAILED)
COMBAT_NEWS = (subjects.COMBAT, subjects.COMBAT_COMPLETE)


def my_last_turn(snapshot: GameSnapshot, player: int, history: HistoryBook | None) -> dict[str, Any] | None:
    """What the turn that just ended did for the player, from their own messages of it (the
    results of their orders, combats, who goes first next, the game's end) and their score
    history (what each score gained). None before the first turn has ended."""
    turn = snapshot.turn
    if turn == 0:
        return None
    news = []
    for item in snapshot.board(player):
        message = item.message
        if message.turn != turn:  # a message arrives in the turn that follows the one it reports
            continue
        if message.subject in ORDER_DONE:
            kind = "done"
        elif message.subject in ORDER_FAILED:
            kind = "failed"
        elif message.subject in COMBAT_NEWS:
            kind = "combat"
        elif message.subject == subjects.GAME_OVER:
            kind = "over"
        elif message.subject == subjects.TURN_ORDER:
            kind = "info"
        else:
            continue  # "Turn complete" is told as the score changes below
        news.append({"kind": kind, "subject": message.subject, "text": message.body})
    points = history.scores_of(player) if history is not None else []
    after = dict(points).get(turn - 1)
    before = dict(points).get(turn - 2, (0,) * len(SCORE_KEYS))
    gained = []
    if after is not None:
        for key, title, old, new in zip(SCORE_KEYS, SCORE_TITLES, before, after, strict=True):
            if new != old:
                gained.append({"score": key, "title": title, "change": new - old, "now": new})
    return {"turn": turn - 1, "news": news, "scores": gained}


def _fleet_name(snapshot: GameSnapshot, object_id: int) -> str:
    fleet = snapshot.state.fleets.get(object_id)
    if fleet is None:
        return f"object {object_id}"
    if fleet.role is Role.COLONIST and fleet.kind is not None:
        return f"{fleet.kind.label.capitalize()} colonists"
    return fleet.name


def my_view(snapshot: GameSnapshot, player: int, history: HistoryBook | None) -> dict[str, Any]:
    state = snapshot.state
    me = state.player(player)
    board = state.board
    hand: list[dict[str, Any]] = []
    leaders: list[dict[str, Any]] = []
    bombers: list[dict[str, Any]] = []
    for fleet in state.fleets_of(player):
        types = [ORDER_NAMES[t] for t in allowed_order_types(state, fleet.id)]
        if fleet.kind is None:  # a bomber
            bombers.append({"fleet": fleet.id, "order_types": types})
        elif fleet.role is Role.COLONIST:
            hand.append({"fleet": fleet.id, "kind": fleet.kind.label, "order_types": types})
        elif fleet.role is Role.LEADER:
            at = state.leader_at.get(fleet.id)
            leaders.append(
                {
                    "fleet": fleet.id,
                    "kind": fleet.kind.label,
                    "name": LEADER_NAMES[fleet.kind],
                    "at": None if at is None else board.system_id(at),
                    "at_name": None if at is None else board.system_name(at),
                    "order_types": types,
                }
            )
    conflict = state.active_conflict
    combat = None
    if conflict is not None:
        sides = (state.fleets[conflict.attacker].owner, state.fleets[conflict.defender].owner)
        combat = {
            **conflict_document(snapshot, 0),
            "mine": player in sides,
            "can_reinforce_with": [f["fleet"] for f in hand if "Reinforce" in f["order_types"]],
        }
    points = history.scores_of(player) if history is not None else []
    orders = my_orders(snapshot, player)
    normal = snapshot.phase is Phase.NORMAL
    return {
        "game": snapshot.name,
        "player": {"id": player, "name": me.name, "colour": owner_colour(player)},
        "turn": snapshot.turn,
        "phase": snapshot.phase.value,
        "over": snapshot.over,
        "must_act": player in snapshot.acting_players(),
        "finished": player in snapshot.finished,
        "removed": player in snapshot.removed_players,
        **seat_document(snapshot, player),
        "scores": scores_document(me.scores),
        "score_titles": dict(zip(SCORE_KEYS, SCORE_TITLES, strict=True)),
        # each turn's five scores by name, as "scores" (no unlabelled arrays)
        "score_history": [
            {"turn": turn, "scores": dict(zip(SCORE_KEYS, scores, strict=True))} for turn, scores in points
        ],
        "hand": hand,
        "leaders": leaders,
        "bombers": bombers,
        "combat": combat,
        "orders": orders,
        # a normal turn takes at most ORDERS_PER_TURN orders (R11); a combat turn's Reinforce has no limit
        "orders_left": max(0, ORDERS_PER_TURN - len(orders)) if normal else None,
        "last_turn": my_last_turn(snapshot, player, history),
        "first_turn": not points,  # no turn has ended since the player joined
        "messages": [
            {
                "index": item.index,
                "turn": item.message.turn,
                "subject": item.message.subject,
                "body": item.message.body,
            }
            for item in snapshot.board(player)
        ],
    }
