"""A headless simulator: random-legal-orders players, and whole games played to Phase.OVER.

The property tests, the benchmarks and later bots use it. A *strategy* is any callable
``(state, player_id, rng) -> list[Order]``; `RandomPlayer` is the baseline, whose orders
`check_order` always accepts in sequence. Like the rest of the ruleset it is pure: no clock, no
I/O, and every choice comes from a `random.Random` it is handed (`game_rng(seed, turn, purpose)`).

Every game of random players ends: a colonization drains the pool, and a position where no
colonist can be placed ends at once (R24a). Strategies that never act can still stall a game;
`play_game` reports that (`GameDidNotEnd`, reason "stalled") instead of looping until `max_turns`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from .board import DEFAULT_BOARD, HABITABLE, UNINHABITABLE, Board
from .kinds import Kind, Role
from .orders import Order, OrderType, acting_players
from .randomness import game_rng, join_rng
from .regions import label_regions
from .setup import add_player, new_game
from .state import Fleet, GameState, Phase
from .turn import resolve_turn
from .turn_log import TurnOutcome

Strategy = Callable[[GameState, int, random.Random], list[Order]]
Resolver = Callable[[GameState, list[Order], random.Random], TurnOutcome]
Observer = Callable[[GameState, list[Order], TurnOutcome], None]
Strategies = Strategy | Sequence[Strategy] | Mapping[int | None, Strategy] | None

DEFAULT_MAX_TURNS = 1000
# Normal turns in a row without progress (no colonist left the pool, no artifact collected)
# after which a game is declared stalled. Random players progress every few turns.
DEFAULT_STALL_TURNS = 150

# Enum members read in hot loops, as plain names (reading `Role.COLONIST` goes through the enum
# metaclass's __getattr__ hook, several times slower than a global).
_COLONIST, _LEADER, _MINING = Role.COLONIST, Role.LEADER, Kind.MINING
_OVER, _COMBAT, _NORMAL = Phase.OVER, Phase.COMBAT, Phase.NORMAL
_COLONIZE, _COLONIZE_MINING = OrderType.COLONIZE, OrderType.COLONIZE_MINING
_MOVE, _ATTACK = OrderType.MOVE, OrderType.ATTACK


class GameDidNotEnd(RuntimeError):
    """A simulated game that did not reach Phase.OVER.

    `reason` is "stalled" (no progress for `stall_turns` normal turns, e.g. players that never
    act) or "max_turns". `record` is the game so far.
    """

    def __init__(self, reason: str, detail: str, record: GameRecord):
        super().__init__(
            f"game {reason} at turn {record.turns} (seed {record.seed}, {record.players} players): {detail}"
        )
        self.reason = reason
        self.detail = detail
        self.record = record


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A simulated game: its final state and the orders submitted in each turn (turn 1 first).

    Replaying `orders` from the same set-up with `game_rng(seed, turn)` reproduces `state`.
    """

    state: GameState
    seed: int
    players: int
    turns: int
    combat_turns: int
    orders: tuple[tuple[Order, ...], ...]

    @property
    def ended(self) -> bool:
        return self.state.phase is Phase.OVER

    @property
    def winners(self) -> tuple[str, ...]:
        """Names of the winner(s); () when the game has not ended."""
        if self.state.result is None:
            return ()
        return tuple(self.state.player(pid).name for pid in self.state.result.winners)


# -- what the board offers this turn, computed once per state --------------------------------


class _BoardCells:
    """Per-board constants: habitable and uninhabitable cells."""

    __slots__ = ("board", "habitable", "mining")

    def __init__(self, board: Board):
        self.board = board
        terrain = board.terrain
        self.habitable = tuple(i for i, t in enumerate(terrain) if t == HABITABLE)
        self.mining = tuple(i for i, t in enumerate(terrain) if t == UNINHABITABLE)


class TurnCandidates:
    """Plausible targets for one state, shared by every player choosing orders on it.

    Cheap checks only (empty, not destroyed, matching terrain, scientist next door for leaders);
    the expensive region checks (R9 bordering, R14) are left to execution, which may still refuse.
    """

    __slots__ = ("state", "habitable", "mining", "leader_targets", "fleets_by_owner", "_attack", "_collect")

    def __init__(self, state: GameState, cells: _BoardCells):
        self.state = state
        colonies = state.colonies
        blocked = set(state.leader_at.values())
        blocked.update(colonies)
        blocked.update(state.destroyed)
        self.habitable = [c for c in cells.habitable if c not in blocked]
        self.mining = [c for c in cells.mining if c not in blocked]
        neighbours = state.board.neighbours
        scientist = Kind.SCIENTIST
        near_science = {n for cell, kind in colonies.items() if kind is scientist for n in neighbours[cell]}
        self.leader_targets = [c for c in self.habitable if c in near_science]
        by_owner: dict[int, list[Fleet]] = {p.id: [] for p in state.players}
        for fleet in state.fleets.values():
            by_owner[fleet.owner].append(fleet)
        self.fleets_by_owner = by_owner
        self._attack: list[int] | None = None
        self._collect: list[int] | None = None

    def attack_targets(self) -> list[int]:
        """Colonies without an artifact and leader systems, minus pending unification systems (R20)."""
        if self._attack is None:
            state = self.state
            skip = state.artifacts | state.unification_cells
            found = [c for c in state.colonies if c not in skip]
            found.extend(c for c in state.leader_at.values() if c not in skip)
            found.sort()
            self._attack = found
        return self._attack

    def collection_targets(self) -> list[int]:
        """Leader targets from which a merchant leader would collect artifacts (R22): bordering
        exactly one region, which holds ≥ 2 artifacts and no merchant leader."""
        if self._collect is None:
            state = self.state
            labels = state.cached_region_labels()
            if labels is None:
                members = (set(state.colonies) | set(state.leader_at.values())) - state.unification_cells
                labels = label_regions(state.board, members)
            count: dict[int, int] = {}
            for cell in state.artifacts:
                if cell in labels:
                    count[labels[cell]] = count.get(labels[cell], 0) + 1
            rich = {label for label, n in count.items() if n >= 2}
            for fleet_id, cell in state.leader_at.items():
                if state.fleets[fleet_id].kind is Kind.MERCHANT:
                    rich.discard(labels.get(cell))
            found = []
            if rich:
                neighbours = state.board.neighbours
                for cell in self.leader_targets:
                    around = {labels[n] for n in neighbours[cell] if n in labels}
                    if len(around) == 1 and not around.isdisjoint(rich):
                        found.append(cell)
            self._collect = found
        return self._collect


class RandomPlayer:
    """A player that sends random legal orders (a baseline strategy; one instance serves all players).

    Normal turn: up to two orders, each one a colonization (most of the time, when there is a
    plausible target), a leader move (`move_chance`) or a bombing (`attack_chance`). When none of
    its colonists has a target, the player moves its merchant leader to collect artifacts if it
    can (the only other way a game progresses), else a random leader, else (`stuck_attack_chance`)
    it bombs something.
    Combat turn: a combatant sends a random number of its eligible colonists as reinforcements.
    """

    def __init__(
        self,
        move_chance: float = 0.2,
        attack_chance: float = 0.03,
        stuck_attack_chance: float = 0.2,
        orders_per_turn: int = 2,
    ):
        self.move_chance = move_chance
        self.attack_chance = attack_chance
        self.stuck_attack_chance = stuck_attack_chance
        self.orders_per_turn = orders_per_turn
        self._cells: _BoardCells | None = None
        self._candidates: TurnCandidates | None = None

    def candidates(self, state: GameState) -> TurnCandidates:
        """The targets of `state`, computed on the first call for that state and then reused."""
        cached = self._candidates
        if cached is not None and cached.state is state:
            return cached
        cells = self._cells
        if cells is None or cells.board is not state.board:
            cells = self._cells = _BoardCells(state.board)
        cached = self._candidates = TurnCandidates(state, cells)
        return cached

    def __call__(self, state: GameState, player_id: int, rng: random.Random) -> list[Order]:
        if state.phase is _COMBAT:
            return self.reinforcements(state, player_id, rng)
        if state.phase is not _NORMAL:
            return []
        return self.normal_orders(state, player_id, rng)

    def reinforcements(self, state: GameState, player_id: int, rng: random.Random) -> list[Order]:
        conflict = state.active_conflict
        if conflict is None or player_id not in acting_players(state):
            return []
        kind = conflict.reinforcement_kind
        # (read from the fleets directly: a combat turn needs none of `TurnCandidates`' targets)
        eligible = [
            f.id
            for f in state.fleets.values()
            if f.owner == player_id and f.role is _COLONIST and f.kind is kind
        ]
        chosen = rng.sample(eligible, rng.randint(0, len(eligible)))
        chosen.sort()
        return [Order(player_id, fid, OrderType.REINFORCE) for fid in chosen]

    def normal_orders(self, state: GameState, player_id: int, rng: random.Random) -> list[Order]:
        cands = self.candidates(state)
        miners: list[int] = []
        others: list[int] = []
        leaders: list[int] = []
        bombers: list[int] = []
        for fleet in cands.fleets_by_owner[player_id]:
            if fleet.role is _COLONIST:
                (miners if fleet.kind is _MINING else others).append(fleet.id)
            elif fleet.role is _LEADER:
                leaders.append(fleet.id)
            else:
                bombers.append(fleet.id)
        used: set[int] = set()
        orders: list[Order] = []
        for _ in range(self.orders_per_turn):
            order = self._one_order(state, player_id, rng, cands, miners, others, leaders, bombers, used)
            if order is None:
                break
            # Every candidate passes the static conditions (R7a), `used` keeps one order per
            # system and each fleet is taken once (R11): `check_order` accepts it (the tests check).
            orders.append(order)
            cell = state.board.cell_of_object(order.target)
            assert cell is not None  # every candidate is a board system
            used.add(cell)
        return orders

    def _one_order(
        self,
        state: GameState,
        player_id: int,
        rng: random.Random,
        cands: TurnCandidates,
        miners: list[int],
        others: list[int],
        leaders: list[int],
        bombers: list[int],
        used: set[int],
    ) -> Order | None:
        roll = rng.random()
        if roll < self.attack_chance and bombers:
            order = self._attack(state, player_id, rng, cands, bombers, used)
            if order is not None:
                return order
        if roll < self.attack_chance + self.move_chance and leaders:
            order = self._move(state, player_id, rng, cands, leaders, used)
            if order is not None:
                return order
        order = self._colonize(state, player_id, rng, cands, miners, others, used)
        if order is None and leaders:
            # No colonist can be placed: the game can only progress by collecting artifacts.
            order = self._collect(state, player_id, rng, cands, leaders, used)
        if order is None and leaders:
            order = self._move(state, player_id, rng, cands, leaders, used)
        if order is None and bombers and rng.random() < self.stuck_attack_chance:
            # Nothing else to do: a bombing may withdraw a leader (R21) and free a system.
            order = self._attack(state, player_id, rng, cands, bombers, used)
        return order

    @staticmethod
    def _pick(rng: random.Random, cells: list[int], used: set[int]) -> int | None:
        if not cells:
            return None
        for _ in range(4):
            cell = cells[rng.randrange(len(cells))]
            if cell not in used:
                return cell
        free = [c for c in cells if c not in used]
        return free[rng.randrange(len(free))] if free else None

    def _colonize(
        self,
        state: GameState,
        player_id: int,
        rng: random.Random,
        cands: TurnCandidates,
        miners: list[int],
        others: list[int],
        used: set[int],
    ) -> Order | None:
        groups: list[tuple[list[int], list[int], OrderType]] = [
            (others, cands.habitable, _COLONIZE),
            (miners, cands.mining, _COLONIZE_MINING),
        ]
        # Pick a random colonist: its group goes first, the other group is the fallback.
        if rng.randrange(len(miners) + len(others) or 1) < len(miners):
            groups.reverse()
        for fleets, cells, order_type in groups:
            if not fleets:
                continue
            cell = self._pick(rng, cells, used)
            if cell is None:
                continue
            fleet = fleets.pop(rng.randrange(len(fleets)))
            return Order(player_id, fleet, order_type, state.board.system_id(cell))
        return None

    def _move(
        self,
        state: GameState,
        player_id: int,
        rng: random.Random,
        cands: TurnCandidates,
        leaders: list[int],
        used: set[int],
    ) -> Order | None:
        cell = self._pick(rng, cands.leader_targets, used)
        if cell is None:
            return None
        fleet = leaders.pop(rng.randrange(len(leaders)))
        return Order(player_id, fleet, _MOVE, state.board.system_id(cell))

    def _collect(
        self,
        state: GameState,
        player_id: int,
        rng: random.Random,
        cands: TurnCandidates,
        leaders: list[int],
        used: set[int],
    ) -> Order | None:
        merchant = next((fid for fid in leaders if state.fleets[fid].kind is Kind.MERCHANT), None)
        if merchant is None:
            return None
        cell = self._pick(rng, cands.collection_targets(), used)
        if cell is None:
            return None
        leaders.remove(merchant)
        return Order(player_id, merchant, _MOVE, state.board.system_id(cell))

    def _attack(
        self,
        state: GameState,
        player_id: int,
        rng: random.Random,
        cands: TurnCandidates,
        bombers: list[int],
        used: set[int],
    ) -> Order | None:
        cell = self._pick(rng, cands.attack_targets(), used)
        if cell is None:
            return None
        fleet = bombers.pop(rng.randrange(len(bombers)))
        return Order(player_id, fleet, _ATTACK, state.board.system_id(cell))


# -- whole games ----------------------------------------------------------------------------


def set_up(players: int = 4, board: Board = DEFAULT_BOARD, seed: int = 0) -> GameState:
    """A new game on `board` with players "P1".."Pn" joined, each with its own set-up stream."""
    if players < 1:
        raise ValueError("a game needs at least one player")
    state = new_game(board, seed)
    for i in range(1, players + 1):
        state, _ = add_player(state, f"P{i}", join_rng(seed, i))
    return state


def _strategy_table(strategies: Strategies, players: int) -> dict[int, Strategy]:
    if strategies is None:
        shared = RandomPlayer()
        return {pid: shared for pid in range(1, players + 1)}
    if callable(strategies):
        return {pid: strategies for pid in range(1, players + 1)}
    if isinstance(strategies, Mapping):
        default = strategies.get(None) or RandomPlayer()
        return {pid: strategies.get(pid, default) for pid in range(1, players + 1)}
    listed = list(strategies)
    if len(listed) != players:
        raise ValueError(f"{len(listed)} strategies for {players} players")
    return {pid: s for pid, s in enumerate(listed, start=1)}


def play_game(
    players: int = 4,
    board: Board = DEFAULT_BOARD,
    seed: int = 0,
    strategies: Strategies = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    *,
    stall_turns: int = DEFAULT_STALL_TURNS,
    observer: Observer | None = None,
    resolver: Resolver | None = None,
    state: GameState | None = None,
    messages: bool | None = None,
) -> GameRecord:
    """Play a complete game to Phase.OVER and return its record.

    * `strategies`: None (random players), one strategy for everyone, one per player (a sequence),
      or a mapping player id -> strategy (key None: everyone else).
    * Turn t resolves with `game_rng(seed, t)`; player p chooses with `game_rng(seed, t, "player p")`.
    * `observer(state_before, orders, outcome)` is called after every turn; `resolver` replaces
      `resolve_turn` (the benchmark times it that way); `state` starts from a prepared game
      instead of `set_up(players, board, seed)`.
    * `messages`: whether turns write their board messages (`resolve_turn(..., messages=)`); by
      default only when an observer may read them. The states are the same either way.

    Raises `GameDidNotEnd` after `stall_turns` normal turns without progress, or after `max_turns`
    turns.
    """
    if state is None:
        current = set_up(players, board, seed)
    else:
        current = state
        players = len(current.players)
        seed = current.seed
    table = _strategy_table(strategies, players)
    if resolver is None:
        telling = observer is not None if messages is None else messages
        resolver = partial(resolve_turn, messages=telling)
    log: list[tuple[Order, ...]] = []
    combat_turns = 0
    progress_mark = (sum(current.pool), len(current.artifacts))
    idle = 0

    def record() -> GameRecord:
        return GameRecord(current, seed, players, current.turn, combat_turns, tuple(log))

    while current.phase is not _OVER:
        if current.turn >= max_turns:
            raise GameDidNotEnd("max_turns", f"still {current.phase.value} after {max_turns} turns", record())
        turn = current.turn + 1
        orders: list[Order] = []
        for pid in acting_players(current):
            orders.extend(table[pid](current, pid, game_rng(seed, turn, f"player {pid}")))
        combat = current.phase is _COMBAT
        outcome = resolver(current, orders, game_rng(seed, turn))
        if observer is not None:
            observer(current, orders, outcome)
        current = outcome.state
        log.append(tuple(orders))
        if combat:
            combat_turns += 1
        if current.phase is _OVER:
            break
        mark = (sum(current.pool), len(current.artifacts))
        if mark != progress_mark:
            progress_mark = mark
            idle = 0
            continue
        if combat:
            continue
        idle += 1
        if idle >= stall_turns:
            raise GameDidNotEnd(
                "stalled", f"no colonist placed and no artifact collected in {idle} normal turns", record()
            )
    return record()


def replay(record: GameRecord, resolver: Resolver = resolve_turn) -> list[TurnOutcome]:
    """Re-run a record's set-up and orders on its board; the outcomes of every turn, in order."""
    state = set_up(record.players, record.state.board, record.seed)
    outcomes = []
    for turn, orders in enumerate(record.orders, start=1):
        outcome = resolver(state, list(orders), game_rng(record.seed, turn))
        outcomes.append(outcome)
        state = outcome.state
    return outcomes
