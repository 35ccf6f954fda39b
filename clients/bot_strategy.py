"""The greedy TaE bot: ``BotStrategy`` turns a ``View`` into the orders of one turn.

``BotStrategy`` (the default) plays TaE greedily, one order at a time, on a local model of the
board that follows the rules of spec/ruleset.md §16:

* **Legal orders only.** Colonize needs an empty, undestroyed square of the right terrain and
  not three leader regions around it (R10, R14); Move needs an empty habitable square next to a
  scientist colony that borders at most one region once the leader is lifted (R9); Attack needs
  an undestroyed square without an artifact (R20). At most two orders a turn, one per fleet and
  one per system (R11); only order types the server lists for the fleet. Combat turns: only
  Reinforce, and only when the server allows it (R18).
* **Scoring colonies first.** A colony is worth the point it gives its region's leader of that
  kind, or the settler leader for other kinds (R13): a point for us is weighted by how much it
  lifts our weakest category (the final score is the minimum after wildcards, R25); a point
  for an opponent counts against. Joining two regions scores nothing; a colony that starts a
  war is judged by its expected outcome (R16); a merge that lets our merchant take artifacts
  is worth the artifacts (R22).
* **Leaders where they will collect.** A leader's worth is a base for being on the board plus
  the empty squares around its region that only that region touches (future points), the
  colonies of its kind already there (war strength) and the scientist colonies next to it
  (revolt strength). The merchant goes to a region with two or more artifacts and no other
  merchant. A revolt (R17) is started only when we should win it.
* **Bombers sparingly.** Only when sending opponents' leaders home (directly, or by removing the
  scientist colony that supports them, R21) is worth more than a bomber.
* **Conflicts.** A combatant reinforces just enough to win for sure if it can, with everything
  when it can only hope, and not at all when it cannot win (R18, tie to the defender).
* **Never stuck.** When nothing is worth doing the bot passes; after ``stalled`` turns without
  any change on the board it plays its least bad colonization so the game keeps moving.

The second order of a turn is chosen on the board as the first leaves it, and in the order the
server runs them (a player's fleets by id, R12): a second order that would run first must not
spoil the first. A tiny fixed per-player preference between equally good squares keeps several
bots from all wanting the same square (the first in the turn rotation would get it).

The random baseline is ``clients.bot_random.RandomStrategy``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .bot_board import Board, Geometry
from .bot_view import (
    HABITABLE,
    KINDS,
    MERCHANT,
    MINING,
    ORDERS_PER_TURN,
    POOL_SHARE,
    SCIENTIST,
    SETTLER,
    UNINHABITABLE,
    WAR_ORDER,
    Intent,
    MyFleet,
    Pos,
    Strategy,
    View,
)
from .tae_model import ATTACK, COLONIZE, COLONIZE_MINING, MOVE, REINFORCE, ColonyKind, FleetKind

__all__ = ["BotStrategy", "Strategy", "Weights"]

_NO_LABELS: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Weights:
    """The knobs of ``BotStrategy`` (values in "points for us")."""

    opponent_point: float = 0.5  # a point for an opponent, against us
    artifact: float = 1.2  # an artifact: a wildcard for our weakest category
    balance: float = 0.6  # how fast a category's worth falls above our weakest one
    leader_base: float = 0.9  # a leader on the board rather than at home
    leader_frontier: float = 0.1  # per empty square only its region touches (at most 6)
    leader_rich: float = 0.04  # per colony of its kind in its region (war strength, ≤5)
    leader_support: float = 0.05  # per scientist colony next to it (revolt strength, ≤3)
    merchant_artifact: float = 0.25  # per artifact in the merchant's region (≤3)
    move_cost: float = 0.3  # moving a leader that is already on the board
    bomb_cost: float = 1.0  # a bomber used
    cycle: float = 0.05  # a colonist placed where it scores for nobody
    science_support: float = 0.1  # a scientist colony next to one of our leaders
    stall_turns: int = 2  # turns without change after which a bad move is played


def _p_win(mine: float, theirs: float, attacker: bool) -> float:
    """Chance to win a conflict: the attacker needs more, the defender wins ties (R18)."""
    margin = mine - theirs - (0.5 if attacker else -0.5)
    return 1.0 / (1.0 + math.exp(-1.5 * margin))


class BotStrategy(Strategy):
    """The greedy TaE player described in the module docstring."""

    def __init__(self, weights: Weights | None = None, *, alternates: int = 6) -> None:
        self.weights = weights or Weights()
        self.alternates = alternates
        self._geometry: tuple[frozenset, Geometry] | None = None

    # -- entry point -----------------------------------------------------------------------

    def decide(self, view: View) -> list[Intent]:
        if view.over:
            return []
        if any(f.allowed & {REINFORCE} for f in view.fleets):
            return self.reinforcements(view)
        if not any(f.allowed & {COLONIZE, COLONIZE_MINING, MOVE, ATTACK} for f in view.fleets):
            return []  # a combat turn we are not part of (or nothing may act)
        return _Turn(self, view).plan()

    def geometry(self, view: View) -> Geometry:
        key = frozenset((pos, s.system_id, s.terrain) for pos, s in view.squares.items())
        if self._geometry is None or self._geometry[0] != key:
            self._geometry = (key, Geometry(view.squares))
        return self._geometry[1]

    # -- combat turns (R18) ----------------------------------------------------------------

    def reinforcements(self, view: View) -> list[Intent]:
        eligible = sorted(f.id for f in view.fleets if REINFORCE in f.allowed and not f.queued)
        if not eligible:
            return []
        combat = view.combat
        if combat is None or view.name not in (combat.attacker, combat.defender):
            # We cannot tell the strengths: fight with everything (the fleets are refilled).
            return [Intent(fid, REINFORCE, None, 1.0, "conflict, strengths unknown") for fid in eligible]
        attacker = combat.attacker == view.name
        mine = combat.attacker_strength if attacker else combat.defender_strength
        theirs = combat.defender_strength if attacker else combat.attacker_strength
        enemy = combat.defender if attacker else combat.attacker
        enemy_id = next((pid for pid, name in view.players.items() if name == enemy), None)
        # Their possible reinforcements: every colonist they hold (kinds are hidden, R27).
        their_hand = view.hands.get(enemy_id, 6) if enemy_id is not None else 6
        need = 1 if attacker else 0  # the defender wins ties

        def needed(against: int) -> int:
            return max(0, against + need - mine)

        sure = needed(theirs + their_hand)
        if sure <= len(eligible):
            count, why = sure, f"sure win {mine}+{sure} vs at most {theirs}+{their_hand}"
        elif needed(theirs) <= len(eligible):
            count, why = len(eligible), f"may win: {mine}+{len(eligible)} vs {theirs}+?"
        else:
            count, why = 0, f"cannot win: {mine}+{len(eligible)} vs {theirs}"
        return [Intent(fid, REINFORCE, None, 1.0, why) for fid in eligible[:count]]


@dataclass(slots=True)
class _Candidate:
    fleet: int
    order: str
    pos: Pos
    value: float
    reason: str
    kind: ColonyKind | None = None  # colonist kind (Colonize) or leader kind (Move)
    war: bool = False
    scores: bool = False  # the colony scores for us


_FRONTIER_TERRAIN = {MINING: UNINHABITABLE, SETTLER: "*", MERCHANT: HABITABLE, SCIENTIST: HABITABLE}


class _Turn:
    """One normal turn's decision for one view."""

    def __init__(self, strategy: BotStrategy, view: View):
        self.strategy = strategy
        self.w = strategy.weights
        self.view = view
        self.me = view.me
        self.geo = strategy.geometry(view)
        self.board = Board.from_view(view, self.geo)
        self.mine_at_home = any(l.pos is None and l.owner == view.me for l in view.leaders)
        self._merges: dict[tuple, float] = {}
        # A small, fixed preference per player and square: bots that value squares alike
        # then want different ones, and fewer orders fail because another took the square.
        self.jitter = {
            (x, y): ((x * 73856093) ^ (y * 19349663) ^ (view.me * 83492791)) % 1000 * 3e-5
            for (x, y) in self.geo.positions
        }

    # -- values ----------------------------------------------------------------------------

    def category_worth(self, scores: tuple[int, ...]) -> dict[ColonyKind, float]:
        """What one more point of each kind is worth to us now (R25: the weakest counts)."""
        values = list(scores[:4])
        for _ in range(scores[4] if len(scores) > 4 else 0):
            values[values.index(min(values))] += 1
        low = min(values)
        return {kind: 1.0 / (1.0 + self.w.balance * (values[i] - low)) for i, kind in enumerate(KINDS)}

    def _worth(self, kind: ColonyKind, frontier: int, count: int, artifacts: int, support: int) -> float:
        w = self.w
        worth = (
            w.leader_base
            + w.leader_frontier * min(frontier, 6)
            + w.leader_rich * min(count, 5)
            + w.leader_support * min(support, 3)
        )
        if kind is MERCHANT:
            worth += w.merchant_artifact * min(artifacts, 3)
        return worth

    def leader_worth(
        self, board: Board, kind: ColonyKind, pos: Pos, joins: int | None = None, virtual: bool = False
    ) -> float:
        """The future a leader of ``kind`` has on ``pos`` (see the module docstring). With
        ``virtual`` the leader is not on ``board`` yet and would join region ``joins``."""
        terrain = _FRONTIER_TERRAIN[kind]
        if virtual:
            label = joins
            allowed = frozenset((label,)) if label is not None else _NO_LABELS
            size = self._grown_frontier(board, terrain, pos, allowed)
        else:
            label = board.region_of(pos)
            size = len(board.frontier(label, terrain))
        count = board.count_kind(label, kind) if label is not None else 0
        artifacts = board.artifacts_in(label) if label is not None else 0
        return self._worth(kind, size, count, artifacts, board.scientists_around(pos))

    def _grown_frontier(self, board: Board, terrain: str, pos: Pos, labels: frozenset[int]) -> int:
        """How many frontier squares the regions ``labels`` have together once ``pos`` (empty
        now) joins them. Squares between two of them that ``pos`` does not touch are left out."""
        frontier: frozenset[Pos]
        if len(labels) == 1:
            (label,) = labels
            frontier = board.frontier(label, terrain)
        elif labels:
            frontier = frozenset().union(*(board.frontier(label, terrain) for label in labels))
        else:
            frontier = frozenset()
        size = len(frontier) - (1 if pos in frontier else 0)
        geo_terrain = self.geo.terrain
        for n in self.geo.neighbours[pos]:
            if (
                n not in frontier
                and board.empty(n)
                and (terrain == "*" or geo_terrain[n] == terrain)
                and board.bordering(n) <= labels
            ):
                size += 1
        return size

    def expected_reinforcement(self, owner: int, kind: ColonyKind) -> float:
        return self.view.hands.get(owner, 6) * POOL_SHARE[kind] * 0.75

    def my_count(self, kind: ColonyKind, excluding: int | None = None) -> int:
        return sum(
            1
            for f in self.view.fleets
            if f.role is FleetKind.COLONIST and f.kind is kind and f.id != excluding
        )

    # -- colonization ----------------------------------------------------------------------

    def colonize_value(
        self, board: Board, kind: ColonyKind, pos: Pos, fleet: int, worth: dict
    ) -> _Candidate | None:
        if not board.can_colonize(pos, kind):
            return None
        w = self.w
        around = board.bordering(pos)
        war = scores = False
        if len(around) >= 2:
            wars = []
            for k in WAR_ORDER:
                found = [lid for label in sorted(around) if (lid := board.the_leader(label, k)) is not None]
                if len(found) >= 2:
                    wars.append((k, found[0], found[1]))
            if wars:
                war = True
                value, reason = -w.cycle, "war"
                for k, a, b in wars:
                    value += self.war_value(board, k, a, b, fleet, worth)
                    reason += f" {k.value}"
            else:
                value, reason = self.merge_value(board, pos, kind), "merge"
        elif around:
            (label,) = around
            scorer = board.the_leader(label, kind)
            if scorer is None and kind is not SETTLER:
                scorer = board.the_leader(label, SETTLER)
            if scorer is None:
                value, reason = w.cycle, "joins a region, scores for nobody"
            elif board.owner(scorer) == self.me:
                value, reason, scores = worth[kind] + w.cycle, f"scores {kind.value} for us", True
            else:
                value, reason = -w.opponent_point, f"would score for player {board.owner(scorer)}"
        else:
            value, reason = w.cycle, "new region"
        if kind is SCIENTIST:
            at_pos = board.at_pos
            for n in self.geo.neighbours[pos]:
                lid = at_pos.get(n)
                if lid is not None:
                    value += (
                        w.science_support
                        if board.owner(lid) == self.me
                        else -w.science_support * w.opponent_point
                    )
            if self.mine_at_home:
                terrain = self.geo.terrain
                spots = sum(1 for n in self.geo.neighbours[pos] if board.empty(n) and terrain[n] == HABITABLE)
                value += 0.03 * min(spots, 3)
        order = COLONIZE_MINING if kind is MINING else COLONIZE
        return _Candidate(fleet, order, pos, value, reason, kind, war, scores)

    def war_value(self, board: Board, kind: ColonyKind, a: int, b: int, fleet: int, worth: dict) -> float:
        """R16 seen from the colonizer (us): worth it when our leader should win."""
        w = self.w
        mine = [lid for lid in (a, b) if board.owner(lid) == self.me]
        if not mine:
            return 0.0  # two opponents fight: one loses colonies, the other scores
        ours = mine[0]
        theirs = b if ours == a else a
        our_label = board.region_of(board.leader_at[ours])
        their_label = board.region_of(board.leader_at[theirs])
        our_strength = board.count_kind(our_label, kind) + self.my_count(kind, excluding=fleet)
        their_strength = board.count_kind(their_label, kind) + self.expected_reinforcement(
            board.owner(theirs), kind
        )
        p = _p_win(our_strength, their_strength, attacker=True)

        def doomed(label: int | None) -> int:  # colonies the loser loses (never artifact systems)
            return sum(
                1 for c in board.cells(label) if board.colony.get(c) is kind and c not in board.artifact
            )

        win = (1 + doomed(their_label)) * worth[kind] + w.opponent_point * self.leader_worth(
            board, kind, board.leader_at[theirs]
        )
        lose = (1 + doomed(our_label)) * w.opponent_point + self.leader_worth(
            board, kind, board.leader_at[ours]
        )
        return p * win - (1 - p) * lose

    def merge_value(self, board: Board, pos: Pos, kind: ColonyKind) -> float:
        """R15: no score; artifacts may become collectable (R22), leaders get more room."""
        key = (id(board), pos, kind)
        cached = self._merges.get(key)
        if cached is not None:
            return cached
        w = self.w
        around = board.bordering(pos)
        value = 0.0
        merchants = [lid for label in around for lid in board.leaders_in(label, MERCHANT)]
        artifacts = sum(board.artifacts_in(label) for label in around)
        if len(merchants) == 1 and artifacts >= 2:
            # All but one artifact of the merged region, less what the merchant's own region
            # holds beyond one (collected anyway, R22).
            own = board.artifacts_in(board.region_of(board.leader_at[merchants[0]]))
            gained = (artifacts - 1 - max(0, own - 1)) * w.artifact
            value += gained if board.owner(merchants[0]) == self.me else -gained * w.opponent_point
        near = self.geo.neighbours[pos]
        for label in around:
            for lid in board.leaders_in(label):
                leader = board.leaders[lid]
                at = board.leader_at[lid]
                terrain = _FRONTIER_TERRAIN[leader.kind]
                support = board.scientists_around(at) + (1 if kind is SCIENTIST and at in near else 0)
                count = sum(board.count_kind(l, leader.kind) for l in around) + (kind is leader.kind)
                after = self._worth(
                    leader.kind, self._grown_frontier(board, terrain, pos, around), count, artifacts, support
                )
                change = after - self.leader_worth(board, leader.kind, at)
                value += change if leader.owner == self.me else -w.opponent_point * change
        self._merges[key] = value
        return value

    # -- leaders ---------------------------------------------------------------------------

    def lifted(self, board: Board, fleet: int) -> tuple[Board, float]:
        """The board without this leader, and what the leader is worth where it stands."""
        current = board.leader_at.get(fleet)
        if current is None:
            return board, 0.0
        leader = board.leaders[fleet]
        now = self.leader_worth(board, leader.kind, current) + self.w.move_cost
        lifted = board.copy()
        lifted.lift(fleet)
        return lifted, now

    def move_value(
        self, lifted: Board, fleet: int, kind: ColonyKind, pos: Pos, now: float, worth: dict
    ) -> _Candidate | None:
        if not lifted.can_move_to(pos):
            return None
        w = self.w
        around = lifted.bordering(pos)
        label = next(iter(around)) if around else None
        worth_there = self.leader_worth(lifted, kind, pos, label, virtual=True)
        incumbent = (
            next((lid for lid in lifted.leaders_in(label, kind) if lid != fleet), None)
            if label is not None
            else None
        )
        if incumbent is not None:
            # A revolt (R17): our leader attacks with its neighbouring scientist colonies.
            their_pos = lifted.leader_at[incumbent]
            ours = lifted.scientists_around(pos) + self.my_count(SCIENTIST)
            theirs = lifted.scientists_around(their_pos) + self.expected_reinforcement(
                lifted.owner(incumbent), SCIENTIST
            )
            p = _p_win(ours, theirs, attacker=True)
            # Losing sends our leader home, gives them +1 T and costs the turn's order.
            value = p * (
                worth[SCIENTIST] + worth_there + w.opponent_point * self.leader_worth(lifted, kind, their_pos)
            ) - (1 - p) * (w.opponent_point + w.move_cost)
            if p < 0.35:
                value -= 1.0  # no long shots
            reason = f"revolt against player {lifted.owner(incumbent)} (p={p:.2f})"
        else:
            value, reason = worth_there, f"{kind.value} leader to a region"
            if kind is MERCHANT and label is not None:
                artifacts = lifted.artifacts_in(label)
                if artifacts >= 2 and not lifted.leaders_in(label, MERCHANT):
                    value += (artifacts - 1) * w.artifact
                    reason = f"merchant takes {artifacts - 1} artifacts"
        return _Candidate(fleet, MOVE, pos, value - now, reason, kind)

    def move_candidates(
        self, board: Board, fleet: MyFleet, worth: dict, where: Iterable[Pos] | None = None
    ) -> list[_Candidate]:
        leader = board.leaders.get(fleet.id)
        kind = fleet.kind if fleet.kind is not None else (leader.kind if leader else None)
        if kind is None:
            return []
        current = board.leader_at.get(fleet.id)
        lifted, now = self.lifted(board, fleet.id)
        found = []
        spots: Iterable[Pos] = lifted.empty_squares("L")
        if where is not None:
            wanted = set(where)
            spots = [p for p in spots if p in wanted]
        for pos in spots:
            if pos != current:
                candidate = self.move_value(lifted, fleet.id, kind, pos, now, worth)
                if candidate is not None:
                    found.append(candidate)
        return found

    # -- bombers ---------------------------------------------------------------------------

    def attack_value(self, board: Board, fleet: int, pos: Pos) -> _Candidate | None:
        if not board.can_attack(pos):
            return None
        w = self.w
        after = board.copy()
        home = after.bomb(pos)
        if not home:
            return None
        value = -w.bomb_cost
        for lid in home:
            leader = board.leaders[lid]
            lost = self.leader_worth(board, leader.kind, board.leader_at[lid])
            value += -lost - w.move_cost if leader.owner == self.me else w.opponent_point * lost
        label = board.region_of(pos)
        if board.colony.get(pos) is not None and any(
            board.owner(l) == self.me for l in board.leaders_in(label)
        ):
            value -= 0.2  # a hole in a region of ours
        return _Candidate(fleet, ATTACK, pos, value, f"sends {len(home)} leader(s) home")

    def attack_targets(self, board: Board) -> set[Pos]:
        """Opponents' leaders' squares and the lone scientist colonies supporting them (R21)."""
        targets = set()
        for lid, pos in board.leader_at.items():
            if board.owner(lid) == self.me:
                continue
            targets.add(pos)
            support = [n for n in self.geo.neighbours[pos] if board.colony.get(n) is SCIENTIST]
            if len(support) == 1:
                targets.add(support[0])
        return targets

    # -- choosing --------------------------------------------------------------------------

    def candidates(
        self,
        board: Board,
        scores: tuple[int, ...],
        fleets: list[MyFleet],
        taken: set[Pos],
        where: Iterable[Pos] | None = None,
    ) -> list[_Candidate]:
        """Every legal order for these fleets (on the squares ``where``, default all)."""
        worth = self.category_worth(scores)
        squares = self.geo.positions if where is None else tuple(where)
        where_set = set(squares)
        found: list[_Candidate] = []
        by_kind: dict[ColonyKind, list[_Candidate]] = {}
        bomber_done = False
        for fleet in fleets:
            if fleet.role is FleetKind.COLONIST and fleet.kind is not None:
                order = COLONIZE_MINING if fleet.kind is MINING else COLONIZE
                if order not in fleet.allowed:
                    continue
                options = by_kind.get(fleet.kind)
                if options is None:
                    options = []
                    empty: Iterable[Pos] = board.empty_squares(
                        UNINHABITABLE if fleet.kind is MINING else HABITABLE
                    )
                    if where is not None:
                        empty = [p for p in empty if p in where_set]
                    for pos in empty:
                        if pos not in taken:
                            candidate = self.colonize_value(board, fleet.kind, pos, fleet.id, worth)
                            if candidate is not None:
                                options.append(candidate)
                    by_kind[fleet.kind] = options
                    found.extend(options)
                else:  # the same kind is worth the same: offer the squares with this fleet too
                    found.extend(
                        _Candidate(fleet.id, c.order, c.pos, c.value, c.reason, c.kind, c.war, c.scores)
                        for c in options
                    )
            elif fleet.role is FleetKind.LEADER and MOVE in fleet.allowed:
                found.extend(
                    c for c in self.move_candidates(board, fleet, worth, squares) if c.pos not in taken
                )
            elif fleet.role is FleetKind.BOMBER and ATTACK in fleet.allowed and not bomber_done:
                bomber_done = True
                targets = self.attack_targets(board)
                if where is not None:
                    targets &= set(squares)
                for pos in sorted(targets - taken):
                    candidate = self.attack_value(board, fleet.id, pos)
                    if candidate is not None:
                        found.append(candidate)
        jitter = self.jitter
        for candidate in found:
            candidate.value += jitter[candidate.pos]
        return found

    def apply(self, board: Board, candidate: _Candidate, scores: tuple[int, ...]) -> tuple[Board, tuple]:
        after = board.copy()
        new_scores = list(scores)
        if candidate.order in (COLONIZE, COLONIZE_MINING):
            assert candidate.kind is not None  # a colonization always has its colonist's kind
            if candidate.scores:
                new_scores[KINDS.index(candidate.kind)] += 1
            after.colonize(candidate.pos, candidate.kind, war=candidate.war)
        elif candidate.order == MOVE:
            after.lift(candidate.fleet)  # R9: lifted first
            around = after.bordering(candidate.pos)
            if len(around) == 1 and candidate.kind is not None:
                rival = after.the_leader(next(iter(around)), candidate.kind)
                if rival is not None:  # a revolt (R17)
                    after.fighting.update((rival, candidate.fleet))
            after.place(candidate.fleet, candidate.pos)
        elif candidate.order == ATTACK:
            after.bomb(candidate.pos)
        return after, tuple(new_scores)

    def plan(self) -> list[Intent]:
        view = self.view
        queued = [order for f in view.fleets for order in f.queued]
        slots = ORDERS_PER_TURN - sum(1 for name, _t in queued if name != REINFORCE)
        taken = {self.geo.by_system[t] for _n, t in queued if t in self.geo.by_system}
        free = [f for f in view.fleets if not f.queued]
        if slots <= 0 or not free:
            return []
        board, scores = self.board, view.scores
        first = self.candidates(board, scores, free, taken)
        first.sort(key=_rank)
        chosen: list[_Candidate] = []
        pick = self._pick(first)
        if pick is not None:
            chosen.append(pick)
            if slots >= 2:
                pick2 = self._second(board, scores, first, pick, free, taken)
                if pick2 is not None:
                    chosen.append(pick2)
        intents = [
            Intent(c.fleet, c.order, self.geo.system_id[c.pos], round(c.value, 3), c.reason) for c in chosen
        ]
        used_fleets = {c.fleet for c in chosen}
        used_pos = {c.pos for c in chosen}
        spare = 0
        for c in first:
            if spare >= self.strategy.alternates or c.value <= 0:
                break
            if c.fleet in used_fleets or c.pos in used_pos:
                continue
            spare += 1
            intents.append(
                Intent(
                    c.fleet, c.order, self.geo.system_id[c.pos], round(c.value, 3), c.reason, alternate=True
                )
            )
        return intents

    def _second(
        self,
        board: Board,
        scores: tuple,
        first: list[_Candidate],
        pick: _Candidate,
        free: list[MyFleet],
        taken: set[Pos],
    ) -> _Candidate | None:
        """The best second order once the first is on the board. Only what the first can have
        changed is evaluated again: the best candidates so far, and the squares in and around
        the region the first order touched."""
        after, scores_after = self.apply(board, pick, scores)
        rest = [f for f in free if f.id != pick.fleet]
        near = set(self.geo.neighbours[pick.pos]) | {pick.pos}
        region = after.region_of(pick.pos)
        where = set(near)
        for cell in after.cells(region) if region is not None else ():
            where.update(self.geo.neighbours[cell])
        label_before = board.region_of(pick.pos)
        for label in board.bordering(pick.pos) | ({label_before} if label_before is not None else set()):
            for cell in board.cells(label):
                where.update(self.geo.neighbours[cell])
        for c in first[:40]:
            where.add(c.pos)
        look: list[Pos] | None = sorted(where)
        if pick.order == ATTACK or (pick.order == MOVE and board.leader_at.get(pick.fleet) is not None):
            look = None  # a region may have split: look everywhere again
        second = self.candidates(after, scores_after, rest, taken | {pick.pos}, look)
        base = {(c.fleet, c.order, c.pos): c.value for c in first}
        adjusted = []
        for c in second:
            if c.fleet < pick.fleet:
                # It runs before the first order (R12: a player's fleets go in id order): count
                # it as on the board without the first, and keep it out of the first's way.
                if c.pos in near or (c.fleet, c.order, c.pos) not in base:
                    continue
                c.value = min(c.value, base[(c.fleet, c.order, c.pos)])
            adjusted.append(c)
        adjusted.sort(key=_rank)
        for c in adjusted:
            if c.value <= 0:
                break
            if c.fleet > pick.fleet or self._still_good(board, scores, c, pick):
                return c
        return None

    def _still_good(self, board: Board, scores: tuple, before: _Candidate, pick: _Candidate) -> bool:
        """Whether ``pick`` still works, and pays, once ``before`` has executed."""
        after, scores_after = self.apply(board, before, scores)
        worth = self.category_worth(scores_after)
        if pick.order in (COLONIZE, COLONIZE_MINING) and pick.kind is not None:
            again = self.colonize_value(after, pick.kind, pick.pos, pick.fleet, worth)
        elif pick.order == MOVE and pick.kind is not None:
            lifted, now = self.lifted(after, pick.fleet)
            again = self.move_value(lifted, pick.fleet, pick.kind, pick.pos, now, worth)
        else:
            again = self.attack_value(after, pick.fleet, pick.pos)
        return again is not None and again.value > 0

    def _pick(self, ranked: list[_Candidate], second: bool = False) -> _Candidate | None:
        if not ranked:
            return None
        best = ranked[0]
        if best.value > 0:
            return best
        if second or self.view.stalled < self.w.stall_turns:
            return None
        # Nothing is worth doing, and nothing has changed for a while: play the least bad
        # colonization so that the pool drains and the game can end (R24).
        colonize = [c for c in ranked if c.order in (COLONIZE, COLONIZE_MINING)]
        return colonize[0] if colonize else None


def _rank(candidate: _Candidate):
    return (-candidate.value, candidate.fleet, candidate.pos)
