"""The cheap policy that plays the turns of a search's playouts, and the evaluation of a position.

Playouts run on a sampled world (`ruleset.ai.worlds`), a full state, so the policy may read every
piece of it: it is the greedy player's idea (`ruleset.ai.greedy`) made cheap. Per state it finds
once the empty systems next to a region and what a colony there would score (R13: the acting
leader of the colony's kind, else the settler leader); per player it takes the colony that scores
best for itself (a point for its weakest category first), or brings a leader from home next to a
scientist colony, or (the searching seat only) moves its merchant leader where it collects
artifacts (R22), two orders at most, never next to each other (R11). In a combat turn it
reinforces with everything it may. Its orders need not all succeed: `resolve_turn` checks them.
"""

from __future__ import annotations

import random

from ..board import HABITABLE, UNINHABITABLE
from ..final_scoring import distribute_artifacts
from ..kinds import Kind, Role
from ..orders import Order, OrderType, acting_players
from ..regions import label_regions
from ..state import GameState, Phase

OWN_POINT = 1.0
WEAKEST_BONUS = 0.5
OPPONENT_POINT = -0.5
NOBODY = 0.05
LEADER_HOME_RETURN = 0.9
LEADER_PER_COLONY = 0.1
ARTIFACT_POINT = 1.5  # per artifact a merchant leader's move collects (R22)

# The evaluation: the weakest category after wildcards (R25: what ranks a player), plus a smaller
# weight for every other point (they become the minimum later), minus what opponents gained.
OTHER_POINTS_WEIGHT = 0.25
OPPONENT_GAIN_WEIGHT = 0.1


class BoardFacts:
    """What the policy needs of one state, computed once and shared by every player on it."""

    __slots__ = ("state", "frontier", "leader_targets", "region_leaders", "region_colonies", "rich")

    def __init__(self, state: GameState):
        self.state = state
        board = state.board
        colonies, leader_at = state.colonies, state.leader_at
        labels = state.cached_region_labels()
        if labels is None:
            members = (set(colonies) | set(leader_at.values())) - state.unification_cells
            labels = label_regions(board, members)
        fleets = state.fleets
        # region label -> kind -> owner of its acting leader (the lowest id, as R13 mostly has it)
        region_leaders: dict[int, dict[Kind, tuple[int, int]]] = {}
        for fid, cell in leader_at.items():
            label = labels.get(cell)
            if label is None:
                continue
            fleet = fleets[fid]
            if fleet.kind is None:
                continue
            held = region_leaders.setdefault(label, {})
            known = held.get(fleet.kind)
            if known is None or fid < known[0]:
                held[fleet.kind] = (fid, fleet.owner)
        self.region_leaders = region_leaders
        region_colonies: dict[int, list[int]] = {}
        for cell, kind in colonies.items():
            label = labels.get(cell)
            if label is not None:
                region_colonies.setdefault(label, [0, 0, 0, 0])[kind] += 1
        self.region_colonies = region_colonies
        artifacts: dict[int, int] = {}
        for cell in state.artifacts:
            label = labels.get(cell)
            if label is not None:
                artifacts[label] = artifacts.get(label, 0) + 1
        # regions whose artifacts a merchant leader arriving there would collect (R22)
        self.rich = {
            label: n
            for label, n in artifacts.items()
            if n >= 2 and Kind.MERCHANT not in region_leaders.get(label, {})
        }
        blocked = set(colonies)
        blocked.update(leader_at.values())
        blocked.update(state.destroyed)
        terrain, neighbours = board.terrain, board.neighbours
        # empty system next to exactly one region -> (label, uninhabitable?)
        frontier: dict[int, tuple[int, bool]] = {}
        near_science: set[int] = set()
        for cell in labels:
            if colonies.get(cell) is Kind.SCIENTIST:
                near_science.update(neighbours[cell])
            for n in neighbours[cell]:
                if n in blocked or n in frontier:
                    continue
                around = {labels[m] for m in neighbours[n] if m in labels}
                if len(around) == 1:
                    frontier[n] = (next(iter(around)), terrain[n] == UNINHABITABLE)
        self.frontier = frontier
        self.leader_targets = sorted(
            c for c in near_science if c in frontier and terrain[c] == HABITABLE and not frontier[c][1]
        )


def _facts(state: GameState, cache: dict[int, BoardFacts]) -> BoardFacts:
    facts = cache.get(id(state))
    if facts is None or facts.state is not state:
        cache.clear()
        facts = cache[id(state)] = BoardFacts(state)
    return facts


def quick_orders(
    state: GameState, player: int, rng: random.Random, cache: dict[int, BoardFacts], collects: bool = False
) -> list[Order]:
    """The playout policy's orders for `player` on `state` (`cache` shares `BoardFacts` per state);
    `collects`: it also moves its merchant leader where it collects artifacts (the searching seat
    does; its opponents are taken to play like `normal`, which does not)."""
    if state.phase is Phase.COMBAT:
        conflict = state.active_conflict
        if conflict is None:
            return []
        kind = conflict.reinforcement_kind
        return [
            Order(player, f.id, int(OrderType.REINFORCE))
            for f in state.fleets.values()
            if f.owner == player and f.role is Role.COLONIST and f.kind is kind
        ]
    facts = _facts(state, cache)
    scores = state.player(player).scores
    weakest = min(scores[:4])
    hand: dict[Kind, int] = {}
    home_leaders: list[tuple[int, Kind]] = []
    for f in state.fleets.values():
        if f.owner != player or f.kind is None:
            continue
        if f.role is Role.COLONIST:
            hand.setdefault(f.kind, f.id)
        elif f.role is Role.LEADER and (
            f.id not in state.leader_at or (collects and f.kind is Kind.MERCHANT)
        ):
            home_leaders.append((f.id, f.kind))
    board = state.board
    options: list[tuple[float, int, int, int]] = []  # value, fleet, order type, cell
    jitter = rng.random
    for cell, (label, mining) in facts.frontier.items():
        leaders = facts.region_leaders.get(label, {})
        for kind, fid in hand.items():
            if (kind is Kind.MINING) != mining:
                continue
            acting = leaders.get(kind)
            scored = kind
            if acting is None and kind is not Kind.SETTLER:
                acting = leaders.get(Kind.SETTLER)
                scored = Kind.SETTLER
            if acting is None:
                value = NOBODY
            elif acting[1] == player:
                value = OWN_POINT + (WEAKEST_BONUS if scores[scored] == weakest else 0.0)
            else:
                value = OPPONENT_POINT
            order_type = OrderType.COLONIZE_MINING if mining else OrderType.COLONIZE
            options.append((value + jitter() * 1e-3, fid, order_type, cell))
    for fid, kind in home_leaders:
        at_home = fid not in state.leader_at
        for cell in facts.leader_targets:
            label = facts.frontier[cell][0]
            if kind in facts.region_leaders.get(label, {}):
                continue  # a revolt (R17): the policy leaves those to the search's first turn
            if collects and kind is Kind.MERCHANT and label in facts.rich:
                value = ARTIFACT_POINT * (facts.rich[label] - 1)
            elif at_home:
                same = facts.region_colonies.get(label, (0, 0, 0, 0))[kind]
                value = LEADER_HOME_RETURN + LEADER_PER_COLONY * min(same, 5)
            else:
                continue
            options.append((value + jitter() * 1e-3, fid, OrderType.MOVE, cell))
    options.sort(reverse=True)
    neighbours = board.neighbours
    picked: list[tuple[float, int, int, int]] = []
    for option in options:
        if len(picked) == 2 or (picked and option[0] <= 0):
            break
        if any(option[1] == p[1] or option[3] == p[3] or option[3] in neighbours[p[3]] for p in picked):
            continue
        picked.append(option)
    if not picked and hand:
        # Nothing next to a region: found a new one anywhere, so the playout moves on.
        kind, fid = next(iter(hand.items()))
        wanted = UNINHABITABLE if kind is Kind.MINING else HABITABLE
        blocked = facts.frontier.keys()
        free = [
            c
            for c in range(board.size)
            if board.terrain[c] == wanted
            and c not in state.colonies
            and c not in state.destroyed
            and c not in blocked
            and c not in state.leader_at.values()
        ]
        if free:
            order_type = OrderType.COLONIZE_MINING if kind is Kind.MINING else OrderType.COLONIZE
            picked.append((0.0, fid, order_type, free[rng.randrange(len(free))]))
    return [Order(player, fid, int(order_type), board.system_id(cell)) for _, fid, order_type, cell in picked]


def all_quick_orders(
    state: GameState, rng: random.Random, cache: dict[int, BoardFacts], collector: int | None = None
) -> list[Order]:
    """Every acting player's orders by the policy; `collector` is the seat that collects artifacts."""
    orders: list[Order] = []
    for player in acting_players(state):
        orders.extend(quick_orders(state, player, rng, cache, player == collector))
    return orders


def worth(scores: tuple[int, ...]) -> float:
    """What a score line is worth: the weakest category after wildcards, and a little for the rest."""
    values = distribute_artifacts(scores)
    low = min(values)
    return low + OTHER_POINTS_WEIGHT * (sum(values) - low)


def evaluate(state: GameState, player: int) -> float:
    """The position for `player`: its own worth minus a little for every point opponents hold
    (their scores start at zero in a sampled world, so that is what they gained)."""
    own = 0.0
    others = 0
    for p in state.players:
        if p.id == player:
            own = worth(p.scores)
        else:
            others += sum(p.scores)
    return own - OPPONENT_GAIN_WEIGHT * others
