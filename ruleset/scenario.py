"""Scenario files: set up a TaE position, play turns from it, print the result as JSON.

    python -m ruleset.scenario FILE.toml

The format is `shared/spec/scenario-format.md`. Exit status 0 when the file was played (even if
orders were refused), 2 with one line on stderr naming the key or line when it is malformed.
This module reads a file, which is I/O; the rest of the ruleset stays pure.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any

from .board import ARTIFACT, DEFAULT_BOARD, UNINHABITABLE, Board, MapError, parse_map
from .kinds import FULL_POOL, HAND_SIZE, KINDS, STARTING_BOMBERS, Kind, Role, Score
from .orders import NOT_ALLOWED, ORDER_TYPES_BY_NAME, Order, OrderType, Problem, check_order
from .randomness import game_rng
from .regions import group_regions, label_regions
from .setup import SetupError, add_player, new_game
from .state import GameState, Phase
from .turn import resolve_turn

EXIT_MALFORMED = 2
EXIT_INTERNAL = 1

TOP_KEYS = {"title", "seed", "map", "first", "destroyed", "players", "pool", "colonies", "leaders", "turns"}
PLAYER_KEYS = {"name", "hand", "bombers", "scores"}
SCORE_KEYS = {s.label: s for s in Score}
KIND_KEYS = {k.label: k for k in KINDS}
COLONY_KEYS = {"at", "kind"}
LEADER_KEYS = {"owner", "kind", "at"}
TURN_KEYS = {"orders"}
ORDER_KEYS = {"player", "order", "fleet", "target", "count"}

NO_SUCH_FLEET = "no such fleet"
GAME_OVER = "game over"


class ScenarioError(ValueError):
    """A malformed scenario file; the message names the key or line."""


# -- reading values -------------------------------------------------------------------------


def _check_keys(table: Any, allowed: set[str], where: str) -> dict:
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: expected a table")
    for key in table:
        if key not in allowed:
            raise ScenarioError(f"{where}: unknown key {key!r}" if where else f"unknown key {key!r}")
    return table


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where}: expected an integer, not {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(f"{where}: {value} is below {minimum}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: expected a string, not {value!r}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: expected a list, not {value!r}")
    return value


def _kind(value: Any, where: str) -> Kind:
    name = _str(value, where)
    if name not in KIND_KEYS:
        raise ScenarioError(f"{where}: unknown kind {name!r} (merchant, scientist, settler or mining)")
    return KIND_KEYS[name]


def _cell(board: Board, value: Any, where: str) -> int:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise ScenarioError(f"{where}: a coordinate is [x, y] with two integers, not {value!r}")
    cell = board.cell_at(value[0], value[1])
    if cell is None:
        raise ScenarioError(f"{where}: [{value[0]}, {value[1]}] is not a system on the board")
    return cell


# -- the scenario ---------------------------------------------------------------------------


@dataclass
class Scenario:
    """A position set up from a file and the turns still to play."""

    state: GameState
    turns: list
    messages: dict[int, list] = field(default_factory=dict)
    refused: list = field(default_factory=list)


def load(text: str) -> Scenario:
    """Parse scenario TOML and set up its position; raises ScenarioError when malformed."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"not valid TOML: {error}") from None
    _check_keys(data, TOP_KEYS, "")
    if "title" in data:
        _str(data["title"], "title")
    seed = _int(data.get("seed", 0), "seed")
    board = DEFAULT_BOARD
    if "map" in data:
        try:
            board = parse_map(_str(data["map"], "map"))
        except MapError as error:
            raise ScenarioError(f"map: {error}") from None

    players = _list(data.get("players", []), "players")
    if not players:
        raise ScenarioError("players: a scenario needs at least one [[players]] table")
    names: list[str] = []
    hands: list[list[Kind] | None] = []
    for i, table in enumerate(players):
        where = f"players[{i}]"
        _check_keys(table, PLAYER_KEYS, where)
        if "name" not in table:
            raise ScenarioError(f"{where}: missing key 'name'")
        name = _str(table["name"], f"{where}.name")
        if not name or name in names:
            raise ScenarioError(f"{where}.name: {name!r} is empty or used twice")
        names.append(name)
        if "hand" in table:
            hand = [
                _kind(k, f"{where}.hand[{j}]") for j, k in enumerate(_list(table["hand"], f"{where}.hand"))
            ]
            if len(hand) > HAND_SIZE:
                raise ScenarioError(f"{where}.hand: at most {HAND_SIZE} colonists, not {len(hand)}")
            hands.append(hand)
        else:
            hands.append(None)

    if "pool" in data:
        pool_table = _check_keys(data["pool"], set(KIND_KEYS), "pool")
        pool = [0, 0, 0, 0]
        for name, kind in KIND_KEYS.items():
            pool[kind] = _int(pool_table.get(name, 0), f"pool.{name}", minimum=0)
    else:
        pool = list(FULL_POOL)
        for hand in hands:
            for kind in hand or ():
                pool[kind] -= 1
        for kind in KINDS:
            if pool[kind] < 0:
                raise ScenarioError(f"pool: the hands hold more {kind.label} colonists than the full pool")

    state = new_game(board, seed, pool)
    deal = game_rng(seed, 0)
    for i, table in enumerate(players):
        where = f"players[{i}]"
        bombers = _int(table.get("bombers", STARTING_BOMBERS), f"{where}.bombers", minimum=0)
        scores = [0, 0, 0, 0, 0]
        for key, value in _check_keys(table.get("scores", {}), set(SCORE_KEYS), f"{where}.scores").items():
            scores[SCORE_KEYS[key]] = _int(value, f"{where}.scores.{key}", minimum=0)
        try:
            state, _ = add_player(state, names[i], deal, hand=hands[i], bombers=bombers, scores=scores)
        except SetupError as error:
            raise ScenarioError(
                f"{where}: {error}" if hands[i] is not None else "pool: too small to deal the missing hands"
            ) from None

    destroyed = set()
    for i, value in enumerate(_list(data.get("destroyed", []), "destroyed")):
        cell = _cell(board, value, f"destroyed[{i}]")
        if board.terrain[cell] == ARTIFACT:
            raise ScenarioError(
                f"destroyed[{i}]: {_xy(board, cell)} is an artifact system, which is a colony"
            )
        destroyed.add(cell)

    colonies = dict(state.colonies)
    for i, table in enumerate(_list(data.get("colonies", []), "colonies")):
        where = f"colonies[{i}]"
        _check_keys(table, COLONY_KEYS, where)
        for key in ("at", "kind"):
            if key not in table:
                raise ScenarioError(f"{where}: missing key {key!r}")
        cell = _cell(board, table["at"], f"{where}.at")
        kind = _kind(table["kind"], f"{where}.kind")
        if cell in destroyed:
            raise ScenarioError(f"{where}.at: {_xy(board, cell)} is destroyed")
        if cell in colonies:
            raise ScenarioError(f"{where}.at: {_xy(board, cell)} already holds a colony")
        if (kind is Kind.MINING) != (board.terrain[cell] == UNINHABITABLE):
            terrain = "uninhabitable ('M')" if board.terrain[cell] == UNINHABITABLE else "habitable"
            raise ScenarioError(
                f"{where}: a {kind.label} colony cannot be on {terrain} system {_xy(board, cell)}"
            )
        colonies[cell] = kind

    leader_at: dict[int, int] = {}
    occupied: dict[int, str] = {}
    for i, table in enumerate(_list(data.get("leaders", []), "leaders")):
        where = f"leaders[{i}]"
        _check_keys(table, LEADER_KEYS, where)
        for key in ("owner", "kind", "at"):
            if key not in table:
                raise ScenarioError(f"{where}: missing key {key!r}")
        owner = _str(table["owner"], f"{where}.owner")
        if owner not in names:
            raise ScenarioError(f"{where}.owner: no player named {owner!r}")
        kind = _kind(table["kind"], f"{where}.kind")
        cell = _cell(board, table["at"], f"{where}.at")
        if board.terrain[cell] == UNINHABITABLE:
            raise ScenarioError(f"{where}.at: a leader cannot be on uninhabitable system {_xy(board, cell)}")
        if cell in destroyed:
            raise ScenarioError(f"{where}.at: {_xy(board, cell)} is destroyed")
        if cell in colonies or cell in occupied:
            raise ScenarioError(f"{where}.at: {_xy(board, cell)} already holds a colony or a leader")
        leader = state.leader(names.index(owner) + 1, kind)
        if leader.id in leader_at:
            raise ScenarioError(f"{where}: {owner}'s {kind.label} leader is listed twice")
        leader_at[leader.id] = cell
        occupied[cell] = owner

    rotation = 0
    if "first" in data:
        first = _str(data["first"], "first")
        if first not in names:
            raise ScenarioError(f"first: no player named {first!r}")
        rotation = names.index(first)

    turns = _list(data.get("turns", []), "turns")
    for i, table in enumerate(turns):
        _check_keys(table, TURN_KEYS, f"turns[{i}]")
        _list(table.get("orders", []), f"turns[{i}].orders")

    state = replace(
        state, colonies=colonies, leader_at=leader_at, destroyed=frozenset(destroyed), rotation=rotation
    )
    return Scenario(state=state, turns=turns, messages={p.id: [] for p in state.players})


def _xy(board: Board, cell: int) -> str:
    x, y = board.coords[cell]
    return f"[{x}, {y}]"


# -- playing turns --------------------------------------------------------------------------


def play(scenario: Scenario) -> None:
    """Play every listed turn; refusals are recorded, not errors."""
    for i, table in enumerate(scenario.turns):
        _play_turn(scenario, table.get("orders", []), f"turns[{i}]")


def _play_turn(scenario: Scenario, entries: list, where: str) -> None:
    state = scenario.state
    names = {p.name: p.id for p in state.players}
    accepted: list[Order] = []
    number = state.turn + 1

    def refuse(player: str, order_name: str, code: int, reason: str) -> None:
        scenario.refused.append(
            {"turn": number, "player": player, "order": order_name, "code": int(code), "reason": reason}
        )

    for j, entry in enumerate(entries):
        spot = f"{where}.orders[{j}]"
        player_name, order_type, fleet_label, cell, count = _read_order(state, entry, names, spot)
        player_id = names[player_name]
        order_name = order_type.title
        if state.phase is Phase.OVER:
            for _ in range(count):
                refuse(player_name, order_name, NOT_ALLOWED.code, GAME_OVER)
            continue
        if order_type is OrderType.REINFORCE:
            conflict = state.active_conflict
            owners = (
                ()
                if conflict is None
                else (state.fleets[conflict.attacker].owner, state.fleets[conflict.defender].owner)
            )
            for _ in range(count):
                if player_id not in owners:
                    refuse(player_name, order_name, NOT_ALLOWED.code, NOT_ALLOWED.message)
                    continue
                fleet = _free_fleet(state, player_id, Role.COLONIST, conflict.reinforcement_kind, accepted)
                if fleet is None:
                    refuse(player_name, order_name, 4, NO_SUCH_FLEET)
                    continue
                _submit(state, Order(player_id, fleet, order_type), accepted, refuse, player_name)
            continue
        role, kind = _fleet_wanted(order_type, fleet_label)
        fleet = _free_fleet(state, player_id, role, kind, accepted)
        if fleet is None:
            refuse(player_name, order_name, 4, NO_SUCH_FLEET)
            continue
        target = state.board.system_id(cell)
        _submit(state, Order(player_id, fleet, order_type, target), accepted, refuse, player_name)

    if state.phase is Phase.OVER:
        return
    outcome = resolve_turn(state, accepted, game_rng(state.seed, number))
    for message in outcome.messages:
        scenario.messages[message.player].append(
            {"turn": message.turn, "subject": message.subject, "body": message.body}
        )
    scenario.state = outcome.state


def _submit(state: GameState, order: Order, accepted: list[Order], refuse, player_name: str) -> None:
    problem: Problem | None = check_order(state, order, accepted)
    if problem is None:
        accepted.append(order)
    else:
        refuse(player_name, OrderType(order.type).title, problem.code, problem.message)


def _read_order(state: GameState, entry: Any, names: dict[str, int], where: str):
    _check_keys(entry, ORDER_KEYS, where)
    for key in ("player", "order"):
        if key not in entry:
            raise ScenarioError(f"{where}: missing key {key!r}")
    player = _str(entry["player"], f"{where}.player")
    if player not in names:
        raise ScenarioError(f"{where}.player: no player named {player!r}")
    order_name = _str(entry["order"], f"{where}.order")
    if order_name not in ORDER_TYPES_BY_NAME:
        raise ScenarioError(f"{where}.order: unknown order {order_name!r} ({', '.join(ORDER_TYPES_BY_NAME)})")
    order_type = ORDER_TYPES_BY_NAME[order_name]
    fleet = None
    if "fleet" in entry:
        fleet = _str(entry["fleet"], f"{where}.fleet")
        allowed = {"bomber"} if order_type is OrderType.ATTACK else set(KIND_KEYS)
        if order_type is OrderType.REINFORCE or fleet not in allowed:
            raise ScenarioError(f"{where}.fleet: {fleet!r} cannot be given to {order_name}")
    elif order_type in (OrderType.COLONIZE, OrderType.MOVE):
        raise ScenarioError(f"{where}: {order_name} needs a 'fleet' (the colonist or leader kind)")
    if order_type is OrderType.REINFORCE:
        if "target" in entry:
            raise ScenarioError(f"{where}.target: Reinforce takes no target")
        return player, order_type, None, None, _int(entry.get("count", 1), f"{where}.count", minimum=0)
    if "count" in entry:
        raise ScenarioError(f"{where}.count: only Reinforce takes a count")
    if "target" not in entry:
        raise ScenarioError(f"{where}: {order_name} needs a 'target'")
    cell = _cell(state.board, entry["target"], f"{where}.target")
    return player, order_type, fleet, cell, 1


def _fleet_wanted(order_type: OrderType, label: str | None) -> tuple[Role, Kind | None]:
    if order_type is OrderType.ATTACK:
        return Role.BOMBER, None
    if order_type is OrderType.MOVE:
        return Role.LEADER, KIND_KEYS[label]
    if order_type is OrderType.COLONIZE_MINING:
        return Role.COLONIST, KIND_KEYS[label] if label else Kind.MINING
    return Role.COLONIST, KIND_KEYS[label]


def _free_fleet(
    state: GameState, player: int, role: Role, kind: Kind | None, accepted: list[Order]
) -> int | None:
    """The player's lowest-id fleet of that role and kind with no order yet this turn."""
    busy = {o.fleet for o in accepted}
    for fleet in state.fleets.values():
        if fleet.owner == player and fleet.role is role and fleet.kind is kind and fleet.id not in busy:
            return fleet.id
    return None


# -- the result -----------------------------------------------------------------------------


def result(scenario: Scenario) -> dict:
    """The JSON result of scenario-format.md, keys in its order."""
    state = scenario.state
    board = state.board
    names = {p.id: p.name for p in state.players}

    def at(cell: int) -> list[int]:
        return list(board.coords[cell])

    unification = state.unification_cells
    members = (set(state.colonies) | set(state.leader_at.values())) - unification
    regions = group_regions(label_regions(board, members))
    leaders = sorted(
        (
            (state.fleets[fid].owner, state.fleets[fid].kind.label, cell)
            for fid, cell in state.leader_at.items()
        ),
        key=lambda item: (item[0], item[1]),
    )
    players = []
    for p in state.players:
        hand = {k.label: 0 for k in KINDS}
        bombers = 0
        home = []
        for fleet in state.fleets_of(p.id):
            if fleet.role is Role.COLONIST:
                hand[fleet.kind.label] += 1
            elif fleet.role is Role.BOMBER:
                bombers += 1
            elif fleet.id not in state.leader_at:
                home.append(fleet.kind.label)
        players.append(
            {
                "name": p.name,
                "scores": {s.label: p.scores[s] for s in Score},
                "hand": hand,
                "bombers": bombers,
                "leaders_home": sorted(home),
            }
        )
    conflicts = []
    for c in state.conflicts:
        conflicts.append(
            {
                "type": "internal" if c.internal else "external",
                "leader": c.kind.label,
                "attacker": names[state.fleets[c.attacker].owner],
                "defender": names[state.fleets[c.defender].owner],
                "attacker_strength": c.attacker_strength,
                "defender_strength": c.defender_strength,
            }
        )
    outcome = None
    if state.result is not None:
        outcome = {
            "final": {names[pid]: score for pid, score in sorted(state.result.final.items())},
            "winners": [names[pid] for pid in state.result.winners],
        }
    order = state.rotation_order()
    return {
        "turn": state.turn + 1,
        "phase": state.phase.value,
        "colonies": [
            {"at": at(cell), "kind": state.colonies[cell].label, "artifact": cell in state.artifacts}
            for cell in sorted(state.colonies)
        ],
        "destroyed": [at(cell) for cell in sorted(state.destroyed)],
        "leaders": [{"owner": names[owner], "kind": kind, "at": at(cell)} for owner, kind, cell in leaders],
        "regions": [[at(cell) for cell in cells] for _, cells in sorted(regions.items())],
        "players": players,
        "pool": {k.label: state.pool[k] for k in KINDS},
        "next_first": names[order[0]] if order else None,
        "pending_conflicts": conflicts,
        "messages": {names[pid]: scenario.messages[pid] for pid in sorted(names)},
        "refused": scenario.refused,
        "result": outcome,
    }


def run_file(path: str) -> dict:
    """Load, play and report one scenario file."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("the file is not UTF-8 text") from None
    scenario = load(text)
    play(scenario)
    return result(scenario)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: python -m ruleset.scenario FILE.toml", file=sys.stderr)
        return EXIT_MALFORMED if args[:1] not in (["-h"], ["--help"]) else 0
    path = args[0]
    try:
        output = run_file(path)
    except ScenarioError as error:
        print(f"{path}: {_one_line(str(error))}", file=sys.stderr)
        return EXIT_MALFORMED
    except RecursionError:
        print(f"{path}: the file is nested too deeply", file=sys.stderr)
        return EXIT_MALFORMED
    except Exception as error:  # a bug, not bad input: still one line, never a traceback
        if os.environ.get("TAE_DEBUG"):
            raise
        print(f"{path}: internal error: {type(error).__name__}: {_one_line(str(error))}", file=sys.stderr)
        return EXIT_INTERNAL
    json.dump(output, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
