"""Setting up the position a scenario file describes, and checking what its schema cannot.

`set_up(file)` turns a `ScenarioFile` (already checked key by key) into a `Scenario`: the game
state, the turns to play with every order resolved to a player, a fleet kind and a system. A
coordinate off the board, a piece where none can stand or a name nobody has is a
`ScenarioError` naming the key, before any turn is played.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..board import ARTIFACT, DEFAULT_BOARD, UNINHABITABLE, Board, MapError, parse_map
from ..kinds import FULL_POOL, HAND_SIZE, KINDS, Kind
from ..order_types import ORDER_TYPES_BY_NAME, OrderType
from ..randomness import join_rng
from ..setup import SetupError, add_player, new_game
from ..state import GameState
from .schema import UNSET, Coordinate, OrderEntry, ScenarioError, ScenarioFile

KIND_BY_LABEL = {k.label: k for k in KINDS}
BOMBER = "bomber"


@dataclass(frozen=True, slots=True)
class ScenarioOrder:
    """One order line of a turn: `fleet` is the kind label it names (None: the default fleet for
    the order), `cell` the target (None for Reinforce), `count` how many Reinforce orders."""

    player: int
    type: OrderType
    fleet: str | None
    cell: int | None
    count: int = 1


@dataclass
class Scenario:
    """A position set up from a file, the turns still to play, and what playing them produced."""

    state: GameState
    turns: list[list[ScenarioOrder]]
    messages: dict[int, list[dict[str, object]]] = field(default_factory=dict)
    refused: list[dict[str, object]] = field(default_factory=list)


def xy(board: Board, cell: int) -> str:
    x, y = board.coords[cell]
    return f"[{x}, {y}]"


def cell_of(board: Board, value: Coordinate, where: str) -> int:
    cell = board.cell_at(value[0], value[1])
    if cell is None:
        raise ScenarioError(f"{where}: [{value[0]}, {value[1]}] is not a system on the board")
    return cell


def set_up(file: ScenarioFile) -> Scenario:
    """The position of a checked scenario file; ScenarioError for what the schema cannot check."""
    board = DEFAULT_BOARD
    if file.map is not UNSET:
        try:
            board = parse_map(file.map)
        except MapError as error:
            raise ScenarioError(f"map: {error}") from None

    if not file.players:
        raise ScenarioError("players: a scenario needs at least one [[players]] table")
    names: list[str] = []
    hands: list[list[Kind] | None] = []
    for i, entry in enumerate(file.players):
        where = f"players[{i}]"
        if not entry.name or entry.name in names:
            raise ScenarioError(f"{where}.name: {entry.name!r} is empty or used twice")
        names.append(entry.name)
        if entry.hand is UNSET:
            hands.append(None)
            continue
        if len(entry.hand) > HAND_SIZE:
            raise ScenarioError(f"{where}.hand: at most {HAND_SIZE} colonists, not {len(entry.hand)}")
        hands.append([KIND_BY_LABEL[label] for label in entry.hand])

    if file.pool is not UNSET:
        pool = [file.pool.merchant, file.pool.scientist, file.pool.settler, file.pool.mining]
    else:
        pool = list(FULL_POOL)
        for hand in hands:
            for kind in hand or ():
                pool[kind] -= 1
        for kind in KINDS:
            if pool[kind] < 0:
                raise ScenarioError(f"pool: the hands hold more {kind.label} colonists than the full pool")

    state = new_game(board, file.seed, pool)
    for i, entry in enumerate(file.players):
        s = entry.scores
        scores = (s.money, s.technology, s.people, s.raw, s.artifacts)
        try:
            state, _ = add_player(
                state,
                names[i],
                join_rng(file.seed, i + 1),
                hand=hands[i],
                bombers=entry.bombers,
                scores=scores,
            )
        except SetupError as error:
            if hands[i] is not None:
                raise ScenarioError(f"players[{i}]: {error}") from None
            raise ScenarioError("pool: too small to deal the missing hands") from None

    destroyed: set[int] = set()
    for i, value in enumerate(file.destroyed):
        cell = cell_of(board, value, f"destroyed[{i}]")
        if board.terrain[cell] == ARTIFACT:
            raise ScenarioError(f"destroyed[{i}]: {xy(board, cell)} is an artifact system, which is a colony")
        destroyed.add(cell)

    colonies = dict(state.colonies)
    for i, colony in enumerate(file.colonies):
        where = f"colonies[{i}]"
        cell = cell_of(board, colony.at, f"{where}.at")
        kind = KIND_BY_LABEL[colony.kind]
        if cell in destroyed:
            raise ScenarioError(f"{where}.at: {xy(board, cell)} is destroyed")
        if cell in colonies:
            raise ScenarioError(f"{where}.at: {xy(board, cell)} already holds a colony")
        if (kind is Kind.MINING) != (board.terrain[cell] == UNINHABITABLE):
            terrain = "uninhabitable ('M')" if board.terrain[cell] == UNINHABITABLE else "habitable"
            raise ScenarioError(
                f"{where}: a {kind.label} colony cannot be on {terrain} system {xy(board, cell)}"
            )
        colonies[cell] = kind

    leader_at: dict[int, int] = {}
    occupied: set[int] = set()
    for i, placed in enumerate(file.leaders):
        where = f"leaders[{i}]"
        if placed.owner not in names:
            raise ScenarioError(f"{where}.owner: no player named {placed.owner!r}")
        kind = KIND_BY_LABEL[placed.kind]
        cell = cell_of(board, placed.at, f"{where}.at")
        if board.terrain[cell] == UNINHABITABLE:
            raise ScenarioError(f"{where}.at: a leader cannot be on uninhabitable system {xy(board, cell)}")
        if cell in destroyed:
            raise ScenarioError(f"{where}.at: {xy(board, cell)} is destroyed")
        if cell in colonies or cell in occupied:
            raise ScenarioError(f"{where}.at: {xy(board, cell)} already holds a colony or a leader")
        leader = state.leader(names.index(placed.owner) + 1, kind)
        assert leader is not None  # every player has one leader of each kind (R2)
        if leader.id in leader_at:
            raise ScenarioError(f"{where}: {placed.owner}'s {kind.label} leader is listed twice")
        leader_at[leader.id] = cell
        occupied.add(cell)

    rotation = 0
    if file.first is not UNSET:
        if file.first not in names:
            raise ScenarioError(f"first: no player named {file.first!r}")
        rotation = names.index(file.first)

    turns = [
        [_order(board, names, entry, f"turns[{i}].orders[{j}]") for j, entry in enumerate(turn.orders)]
        for i, turn in enumerate(file.turns)
    ]
    state = replace(
        state, colonies=colonies, leader_at=leader_at, destroyed=frozenset(destroyed), rotation=rotation
    )
    return Scenario(state=state, turns=turns, messages={p.id: [] for p in state.players})


def _order(board: Board, names: list[str], entry: OrderEntry, where: str) -> ScenarioOrder:
    if entry.player not in names:
        raise ScenarioError(f"{where}.player: no player named {entry.player!r}")
    player = names.index(entry.player) + 1
    if entry.order not in ORDER_TYPES_BY_NAME:
        raise ScenarioError(
            f"{where}.order: unknown order {entry.order!r} ({', '.join(ORDER_TYPES_BY_NAME)})"
        )
    order_type = ORDER_TYPES_BY_NAME[entry.order]
    fleet = None
    if entry.fleet is not UNSET:
        fleet = entry.fleet
        allowed = {BOMBER} if order_type is OrderType.ATTACK else set(KIND_BY_LABEL)
        if order_type is OrderType.REINFORCE or fleet not in allowed:
            raise ScenarioError(f"{where}.fleet: {fleet!r} cannot be given to {entry.order}")
    elif order_type in (OrderType.COLONIZE, OrderType.MOVE):
        raise ScenarioError(f"{where}: {entry.order} needs a 'fleet' (the colonist or leader kind)")
    if order_type is OrderType.REINFORCE:
        if entry.target is not UNSET:
            raise ScenarioError(f"{where}.target: Reinforce takes no target")
        count = 1 if entry.count is UNSET else entry.count
        return ScenarioOrder(player, order_type, None, None, count)
    if entry.count is not UNSET:
        raise ScenarioError(f"{where}.count: only Reinforce takes a count")
    if entry.target is UNSET:
        raise ScenarioError(f"{where}: {entry.order} needs a 'target'")
    return ScenarioOrder(player, order_type, fleet, cell_of(board, entry.target, f"{where}.target"))
