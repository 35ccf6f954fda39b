"""The bot's decisions: a pure function from what the wire shows to a list of order intents.

Nothing here talks to a server. ``view_from_game(TaeGame)`` copies what one player's cache
knows into a ``View`` (plain values: the board squares, every leader, this player's fleets with
the order types the server allows them now, its scores, the running conflict); a strategy turns
a ``View`` into ``Intent`` values (fleet, order type name, target system id). ``clients.bot``
sends them. Tests build ``View`` values by hand.

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

``RandomStrategy`` sends random legal orders from the same view (a baseline over the wire).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .game_api import ColonyKind, FleetKind, TaeGame

__all__ = [
    "BotStrategy",
    "CombatInfo",
    "Intent",
    "LeaderInfo",
    "MyFleet",
    "RandomStrategy",
    "Square",
    "Strategy",
    "View",
    "Weights",
    "intents_summary",
    "parse_combat",
    "view_from_game",
]

MERCHANT, SCIENTIST, SETTLER, MINING = (
    ColonyKind.MERCHANT,
    ColonyKind.SCIENTIST,
    ColonyKind.SETTLER,
    ColonyKind.MINING,
)
KINDS = (MERCHANT, SCIENTIST, SETTLER, MINING)
WAR_ORDER = (SETTLER, SCIENTIST, MERCHANT, MINING)  # R16: conflicts queue in this order

COLONIZE, COLONIZE_MINING, MOVE, ATTACK, REINFORCE = (
    "Colonize",
    "ColonizeMining",
    "Move",
    "Attack",
    "Reinforce",
)
ORDERS_PER_TURN = 2  # R11
HABITABLE, UNINHABITABLE = ".", "M"

#: Share of each kind in the full pool (R3): what a hidden colonist probably is.
POOL_SHARE = {MERCHANT: 30 / 153, SCIENTIST: 57 / 153, SETTLER: 30 / 153, MINING: 36 / 153}

Pos = tuple[int, int]


# ------------------------------------------------------------------------------------------
# The view: what the wire told one player, as plain values
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Square:
    """One board system. ``terrain`` is '.' (habitable) or 'M'; ``region`` is the server's
    Region (TP04; 0 = none) and is only used to spot pending unification systems."""

    x: int
    y: int
    system_id: int
    terrain: str = HABITABLE
    colony: ColonyKind | None = None
    artifact: bool = False
    destroyed: bool = False
    region: int = 0

    @property
    def pos(self) -> Pos:
        return (self.x, self.y)


@dataclass(frozen=True, slots=True)
class LeaderInfo:
    """A leader of any player; ``pos`` None when it is at home."""

    id: int
    owner: int
    kind: ColonyKind
    pos: Pos | None = None


@dataclass(frozen=True, slots=True)
class MyFleet:
    """One of this player's fleets. ``role`` is ``FleetKind``; ``allowed`` the order type names
    the server accepts for it now; ``queued`` the orders already in its queue, as
    (type name, target system id or None)."""

    id: int
    role: FleetKind
    kind: ColonyKind | None = None
    pos: Pos | None = None
    allowed: frozenset[str] = frozenset()
    queued: tuple[tuple[str, int | None], ...] = ()


@dataclass(frozen=True, slots=True)
class CombatInfo:
    """The running conflict, from the latest "COMBAT!" message (attacker named first)."""

    internal: bool
    attacker: str
    attacker_strength: int
    defender: str
    defender_strength: int


@dataclass(frozen=True)
class View:
    """Everything a strategy may look at. ``scores`` is (M, T, P, R, A) from the latest
    "Turn complete"; ``hands`` the number of colonist fleets each player holds (kinds of
    opponents' colonists are hidden, R27); ``exact_regions`` says the Region parameter is on the
    wire (TP04), so a member square with Region 0 is a pending unification system; ``stalled``
    counts the previous turns in which nothing changed on the board (the bot keeps it)."""

    me: int
    squares: Mapping[Pos, Square]
    leaders: tuple[LeaderInfo, ...] = ()
    fleets: tuple[MyFleet, ...] = ()
    scores: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    hands: Mapping[int, int] = field(default_factory=dict)
    name: str = ""
    players: Mapping[int, str] = field(default_factory=dict)
    turn: int = 0
    combat: CombatInfo | None = None
    combat_turn: bool = False
    over: bool = False
    exact_regions: bool = True
    stalled: int = 0

    @property
    def in_combat(self) -> bool:
        """A combat turn in which we are a combatant: some fleet of ours may Reinforce."""
        return any(REINFORCE in f.allowed for f in self.fleets)

    @property
    def bystander(self) -> bool:
        """A combat turn fought by two other players (the "COMBAT!" message names them): we
        may not act, and the server does not wait for us (R18)."""
        return (
            self.combat_turn
            and self.combat is not None
            and bool(self.name)
            and self.name not in (self.combat.attacker, self.combat.defender)
            and not self.in_combat
        )

    def fleet(self, fleet_id: int) -> MyFleet | None:
        return next((f for f in self.fleets if f.id == fleet_id), None)


@dataclass(frozen=True, slots=True)
class Intent:
    """One order to send: ``order`` is the order type's name, ``target`` a star system id
    (None for Reinforce). ``alternate`` intents are fallbacks, tried only when a chosen
    order is refused."""

    fleet: int
    order: str
    target: int | None = None
    value: float = 0.0
    reason: str = ""
    alternate: bool = False


_COMBAT = re.compile(
    r"next turn is an (INTERNAL|EXTERNAL) combat turn! Combatants are:\s+(.+?) with an initial "
    r"strength of (-?\d+) and (.+?) with an initial strength of (-?\d+)\s*$",
    re.DOTALL,
)


def parse_combat(body: str) -> CombatInfo | None:
    """The combatants and initial strengths named by a "COMBAT!" message body (R26)."""
    match = _COMBAT.search(body)
    if match is None:
        return None
    return CombatInfo(
        match.group(1) == "INTERNAL", match.group(2), int(match.group(3)), match.group(4), int(match.group(5))
    )


def view_from_game(game: TaeGame, *, stalled: int = 0) -> View:
    """Copy what ``game``'s cache knows into a ``View`` (call after ``cache.update()``)."""
    me = game.player_id if game.player_id is not None else -1
    squares = {}
    for pos, system in game.systems().items():
        squares[pos] = Square(
            system.x,
            system.y,
            system.id,
            HABITABLE if system.habitable else UNINHABITABLE,
            system.colony,
            system.artifact,
            system.destroyed,
            system.region,
        )
    names = {desc.id: desc.name for desc in game.cache.order_descs.values()}
    leaders, fleets, hands = [], [], {}
    for fleet in game.fleets():
        if fleet.kind is FleetKind.LEADER and fleet.colony_kind is not None and fleet.owner is not None:
            leaders.append(LeaderInfo(fleet.id, fleet.owner, fleet.colony_kind, fleet.position))
        if fleet.kind is FleetKind.COLONIST and fleet.owner is not None:
            hands[fleet.owner] = hands.get(fleet.owner, 0) + 1
        if fleet.owner != me:
            continue
        queued = []
        for order in fleet.orders:
            if order is None:
                continue
            target = next((a.object_id for a in order.args if hasattr(a, "object_id")), None)
            queued.append((names.get(order.type, str(order.type)), target))
        fleets.append(
            MyFleet(
                fleet.id,
                fleet.kind,
                fleet.colony_kind,
                fleet.position,
                frozenset(names[t] for t in fleet.order_types if t in names),
                tuple(queued),
            )
        )
    players = {pid: player.name for pid, player in game.cache.players.items()}
    if game.cache.me is not None:
        players.setdefault(game.cache.me.id, game.cache.me.name)
    scores = game.scores()
    score_tuple = (
        (0, 0, 0, 0, 0)
        if scores is None
        else (scores.money, scores.technology, scores.people, scores.raw_materials, scores.artifacts)
    )
    turn = game.turn or 0
    combat, combat_turn = None, False
    for message in reversed(game.messages("COMBAT!")):
        if message.turn == turn:  # posted at the end of the last turn: this one is a combat turn
            combat, combat_turn = parse_combat(message.body), True
        break
    return View(
        me=me,
        squares=squares,
        leaders=tuple(leaders),
        fleets=tuple(fleets),
        scores=score_tuple,
        hands=hands,
        name=game.player_name(me) or "",
        players=players,
        turn=turn,
        combat=combat,
        combat_turn=combat_turn,
        over=game.is_over,
        exact_regions=game.regions_from_server,
        stalled=stalled,
    )


# ------------------------------------------------------------------------------------------
# A local model of the board (R4, R5, R9, R10, R14, R20, R21)
# ------------------------------------------------------------------------------------------


class _Geometry:
    """What never changes in a game: squares, terrain, neighbours, system ids."""

    __slots__ = ("terrain", "system_id", "neighbours", "by_system", "positions")

    def __init__(self, squares: Mapping[Pos, Square]):
        self.terrain = {pos: s.terrain for pos, s in squares.items()}
        self.system_id = {pos: s.system_id for pos, s in squares.items()}
        self.by_system = {s.system_id: pos for pos, s in squares.items()}
        self.positions = tuple(sorted(squares))
        self.neighbours = {
            (x, y): tuple(n for n in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)) if n in squares)
            for (x, y) in squares
        }


_NO_LABELS: frozenset[int] = frozenset()


class _Board:
    """A mutable copy of the board as the view shows it, with derived regions (computed once
    per change, with everything the strategy asks about a region)."""

    __slots__ = (
        "geo",
        "colony",
        "artifact",
        "destroyed",
        "leaders",
        "leader_at",
        "at_pos",
        "pending",
        "fighting",
        "_labels",
        "_groups",
        "_leaders_in",
        "_counts",
        "_artifacts",
        "_border",
        "_frontier",
        "_empty",
    )

    def __init__(
        self,
        geo: _Geometry,
        colony: dict,
        artifact: set,
        destroyed: set,
        leaders: dict[int, LeaderInfo],
        leader_at: dict[int, Pos],
        pending: set,
    ):
        self.geo = geo
        self.colony = colony
        self.artifact = artifact
        self.destroyed = destroyed
        self.leaders = leaders
        self.leader_at = leader_at
        self.at_pos = {pos: lid for lid, pos in leader_at.items()}
        self.pending = pending
        self.fighting: set[int] = set()  # leaders in a conflict queued this turn (R14, R17)
        self.invalidate()

    @classmethod
    def from_view(cls, view: View, geo: _Geometry) -> _Board:
        colony = {pos: s.colony for pos, s in view.squares.items() if s.colony is not None}
        artifact = {pos for pos, s in view.squares.items() if s.artifact}
        destroyed = {pos for pos, s in view.squares.items() if s.destroyed}
        leaders = {l.id: l for l in view.leaders}
        leader_at = {l.id: l.pos for l in view.leaders if l.pos is not None and l.pos in view.squares}
        occupied = set(leader_at.values())
        pending = set()
        if view.exact_regions:
            pending = {
                pos
                for pos, s in view.squares.items()
                if s.region == 0 and not s.destroyed and (s.colony is not None or pos in occupied)
            }
        return cls(geo, colony, artifact, destroyed, leaders, leader_at, pending)

    def copy(self) -> _Board:
        board = _Board(
            self.geo,
            dict(self.colony),
            set(self.artifact),
            set(self.destroyed),
            self.leaders,
            dict(self.leader_at),
            set(self.pending),
        )
        board.fighting = set(self.fighting)
        return board

    def invalidate(self) -> None:
        self._labels: dict[Pos, int] | None = None
        self._groups: dict[int, list[Pos]] = {}
        self._leaders_in: dict[int, list[int]] = {}
        self._counts: dict[int, dict[ColonyKind, int]] = {}
        self._artifacts: dict[int, int] = {}
        self._border: dict[Pos, frozenset[int]] = {}
        self._frontier: dict[tuple[int | None, str], frozenset[Pos]] = {}
        self._empty: dict[str, tuple[Pos, ...]] = {}

    # -- regions (R5) ----------------------------------------------------------------------

    @property
    def labels(self) -> dict[Pos, int]:
        if self._labels is None:
            self._derive()
        return self._labels

    def _derive(self) -> None:
        members = (set(self.colony) | set(self.at_pos)) - self.destroyed - self.pending
        labels: dict[Pos, int] = {}
        groups: dict[int, list[Pos]] = {}
        neighbours, system_id = self.geo.neighbours, self.geo.system_id
        for start in members:
            if start in labels:
                continue
            component, stack = [start], [start]
            labels[start] = -1
            while stack:
                for n in neighbours[stack.pop()]:
                    if n in members and n not in labels:
                        labels[n] = -1
                        component.append(n)
                        stack.append(n)
            label = min(system_id[p] for p in component)
            for p in component:
                labels[p] = label
            groups[label] = component
        counts: dict[int, dict[ColonyKind, int]] = {}
        artifacts: dict[int, int] = {}
        for pos, kind in self.colony.items():
            label = labels.get(pos)
            if label is not None:
                per = counts.setdefault(label, {})
                per[kind] = per.get(kind, 0) + 1
        for pos in self.artifact:
            label = labels.get(pos)
            if label is not None:
                artifacts[label] = artifacts.get(label, 0) + 1
        leaders_in: dict[int, list[int]] = {}
        for pos, lid in self.at_pos.items():
            label = labels.get(pos)
            if label is not None:
                leaders_in.setdefault(label, []).append(lid)
        for found in leaders_in.values():
            found.sort()
        self._labels, self._groups, self._counts = labels, groups, counts
        self._artifacts, self._leaders_in = artifacts, leaders_in

    def cells(self, label: int | None) -> list[Pos]:
        if self._labels is None:
            self._derive()
        return self._groups.get(label, [])

    def bordering(self, pos: Pos) -> frozenset[int]:
        found = self._border.get(pos)
        if found is None:
            labels = self.labels
            found = frozenset(labels[n] for n in self.geo.neighbours[pos] if n in labels) or _NO_LABELS
            self._border[pos] = found
        return found

    def region_of(self, pos: Pos) -> int | None:
        return self.labels.get(pos)

    def leaders_in(self, label: int | None, kind: ColonyKind | None = None) -> list[int]:
        if self._labels is None:
            self._derive()
        found = self._leaders_in.get(label, [])
        if kind is not None:
            leaders = self.leaders
            found = [lid for lid in found if leaders[lid].kind is kind]
        return found

    def the_leader(self, label: int, kind: ColonyKind) -> int | None:
        if self._labels is None:
            self._derive()
        leaders = self.leaders
        for lid in self._leaders_in.get(label, ()):
            if leaders[lid].kind is kind:
                return lid
        return None

    def owner(self, leader_id: int) -> int:
        return self.leaders[leader_id].owner

    def count_kind(self, label: int | None, kind: ColonyKind) -> int:
        if self._labels is None:
            self._derive()
        return self._counts.get(label, {}).get(kind, 0)

    def artifacts_in(self, label: int | None) -> int:
        if self._labels is None:
            self._derive()
        return self._artifacts.get(label, 0)

    def frontier(self, label: int | None, terrain: str) -> frozenset[Pos]:
        """Empty squares next to region ``label`` that border no other region, of one terrain
        ('.' or 'M'; '*' for both): where colonies will join that region alone (R13)."""
        key = (label, terrain)
        found = self._frontier.get(key)
        if found is None:
            cells = set()
            geo_terrain, neighbours = self.geo.terrain, self.geo.neighbours
            for cell in self.cells(label):
                for n in neighbours[cell]:
                    if n in cells or not self.empty(n):
                        continue
                    if terrain != "*" and geo_terrain[n] != terrain:
                        continue
                    if len(self.bordering(n)) == 1:
                        cells.add(n)
            found = frozenset(cells)
            self._frontier[key] = found
        return found

    # -- squares ---------------------------------------------------------------------------

    def empty_squares(self, terrain: str) -> tuple[Pos, ...]:
        """Empty, undestroyed squares of one terrain ('.' or 'M'), or, for 'L', the squares a
        leader may enter if regions allow: empty, habitable, next to a scientist colony (R9)."""
        found = self._empty.get(terrain)
        if found is None:
            geo_terrain = self.geo.terrain
            if terrain == "L":
                found = tuple(p for p in self.empty_squares(HABITABLE) if self.borders_scientist(p))
            else:
                found = tuple(p for p in self.geo.positions if geo_terrain[p] == terrain and self.empty(p))
            self._empty[terrain] = found
        return found

    def empty(self, pos: Pos) -> bool:
        return pos not in self.colony and pos not in self.at_pos and pos not in self.destroyed

    def borders_scientist(self, pos: Pos) -> bool:
        colony = self.colony
        return any(colony.get(n) is SCIENTIST for n in self.geo.neighbours[pos])

    def scientists_around(self, pos: Pos) -> int:
        colony = self.colony
        return sum(1 for n in self.geo.neighbours[pos] if colony.get(n) is SCIENTIST)

    def can_colonize(self, pos: Pos, kind: ColonyKind) -> bool:
        """R10 and the first part of R14 (three leader regions)."""
        if not self.empty(pos) or (kind is MINING) != (self.geo.terrain[pos] == UNINHABITABLE):
            return False
        around = self.bordering(pos)
        if len(around) >= 3 and sum(1 for label in around if self.leaders_in(label)) >= 3:
            return False
        if len(around) >= 2 and self.fighting and any(self.in_conflict(label) for label in around):
            return False
        return True

    def in_conflict(self, label: int) -> bool:
        return any(lid in self.fighting for lid in self.leaders_in(label))

    def can_move_to(self, pos: Pos) -> bool:
        """R9 for a leader already lifted from the board."""
        if not (self.geo.terrain[pos] == HABITABLE and self.empty(pos) and self.borders_scientist(pos)):
            return False
        around = self.bordering(pos)
        return len(around) == 0 or (
            len(around) == 1 and not (self.fighting and self.in_conflict(next(iter(around))))
        )

    def can_attack(self, pos: Pos) -> bool:
        """R20."""
        return pos not in self.destroyed and pos not in self.artifact and pos not in self.pending

    # -- changes ---------------------------------------------------------------------------

    def lift(self, leader_id: int) -> None:
        pos = self.leader_at.pop(leader_id, None)
        if pos is not None:
            del self.at_pos[pos]
            self.invalidate()

    def place(self, leader_id: int, pos: Pos) -> None:
        self.lift(leader_id)
        self.leader_at[leader_id] = pos
        self.at_pos[pos] = leader_id
        self.invalidate()

    def colonize(self, pos: Pos, kind: ColonyKind, war: bool = False) -> None:
        if war:  # R16: the leaders of each kind present on two sides go to war
            around = sorted(self.bordering(pos))
            for kind_at_war in KINDS:
                found = [lid for label in around if (lid := self.the_leader(label, kind_at_war)) is not None]
                if len(found) >= 2:
                    self.fighting.update(found[:2])
            self.pending.add(pos)
        self.colony[pos] = kind
        self.invalidate()

    def bomb(self, pos: Pos) -> list[int]:
        """Destroy a square (R20) and withdraw unsupported leaders (R21); the leaders sent home."""
        self.destroyed.add(pos)
        self.colony.pop(pos, None)
        self.artifact.discard(pos)
        home = []
        if pos in self.at_pos:
            home.append(self.at_pos[pos])
            self.lift(self.at_pos[pos])
        for lid, at in list(self.leader_at.items()):
            if not self.borders_scientist(at):
                home.append(lid)
                self.lift(lid)
        self.invalidate()
        return home


# ------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------


class Strategy:
    """What a bot asks: ``decide(view)`` → intents, chosen ones first, then alternates."""

    def decide(self, view: View) -> list[Intent]:  # pragma: no cover - interface
        raise NotImplementedError


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
        self._geometry: tuple[frozenset, _Geometry] | None = None

    # -- entry point -----------------------------------------------------------------------

    def decide(self, view: View) -> list[Intent]:
        if view.over:
            return []
        if any(f.allowed & {REINFORCE} for f in view.fleets):
            return self.reinforcements(view)
        if not any(f.allowed & {COLONIZE, COLONIZE_MINING, MOVE, ATTACK} for f in view.fleets):
            return []  # a combat turn we are not part of (or nothing may act)
        return _Turn(self, view).plan()

    def geometry(self, view: View) -> _Geometry:
        key = frozenset((pos, s.system_id, s.terrain) for pos, s in view.squares.items())
        if self._geometry is None or self._geometry[0] != key:
            self._geometry = (key, _Geometry(view.squares))
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
        self.board = _Board.from_view(view, self.geo)
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
        self, board: _Board, kind: ColonyKind, pos: Pos, joins: int | None = None, virtual: bool = False
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

    def _grown_frontier(self, board: _Board, terrain: str, pos: Pos, labels: frozenset[int]) -> int:
        """How many frontier squares the regions ``labels`` have together once ``pos`` (empty
        now) joins them. Squares between two of them that ``pos`` does not touch are left out."""
        if len(labels) == 1:
            (label,) = labels
            frontier = board.frontier(label, terrain)
        elif labels:
            frontier = frozenset().union(*(board.frontier(label, terrain) for label in labels))
        else:
            frontier = _NO_LABELS
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
        self, board: _Board, kind: ColonyKind, pos: Pos, fleet: int, worth: dict
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

    def war_value(self, board: _Board, kind: ColonyKind, a: int, b: int, fleet: int, worth: dict) -> float:
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

        def doomed(label: int) -> int:  # colonies the loser loses (never artifact systems)
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

    def merge_value(self, board: _Board, pos: Pos, kind: ColonyKind) -> float:
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

    def lifted(self, board: _Board, fleet: int) -> tuple[_Board, float]:
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
        self, lifted: _Board, fleet: int, kind: ColonyKind, pos: Pos, now: float, worth: dict
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
        self, board: _Board, fleet: MyFleet, worth: dict, where: Iterable[Pos] | None = None
    ) -> list[_Candidate]:
        leader = board.leaders.get(fleet.id)
        kind = fleet.kind if fleet.kind is not None else (leader.kind if leader else None)
        if kind is None:
            return []
        current = board.leader_at.get(fleet.id)
        lifted, now = self.lifted(board, fleet.id)
        found = []
        spots = lifted.empty_squares("L")
        if where is not None:
            where = set(where)
            spots = [p for p in spots if p in where]
        for pos in spots:
            if pos != current:
                candidate = self.move_value(lifted, fleet.id, kind, pos, now, worth)
                if candidate is not None:
                    found.append(candidate)
        return found

    # -- bombers ---------------------------------------------------------------------------

    def attack_value(self, board: _Board, fleet: int, pos: Pos) -> _Candidate | None:
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

    def attack_targets(self, board: _Board) -> set[Pos]:
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
        board: _Board,
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
                    empty = board.empty_squares(UNINHABITABLE if fleet.kind is MINING else HABITABLE)
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

    def apply(self, board: _Board, candidate: _Candidate, scores: tuple[int, ...]) -> tuple[_Board, tuple]:
        after = board.copy()
        scores = list(scores)
        if candidate.order in (COLONIZE, COLONIZE_MINING):
            if candidate.scores:
                scores[KINDS.index(candidate.kind)] += 1
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
        return after, tuple(scores)

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
        board: _Board,
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
        if pick.order == ATTACK or (pick.order == MOVE and board.leader_at.get(pick.fleet) is not None):
            where = None  # a region may have split: look everywhere again
        second = self.candidates(
            after, scores_after, rest, taken | {pick.pos}, None if where is None else sorted(where)
        )
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

    def _still_good(self, board: _Board, scores: tuple, before: _Candidate, pick: _Candidate) -> bool:
        """Whether ``pick`` still works, and pays, once ``before`` has executed."""
        after, scores_after = self.apply(board, before, scores)
        worth = self.category_worth(scores_after)
        if pick.order in (COLONIZE, COLONIZE_MINING):
            again = self.colonize_value(after, pick.kind, pick.pos, pick.fleet, worth)
        elif pick.order == MOVE:
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


class RandomStrategy(Strategy):
    """Random legal orders from the view: up to two colonizations or leader moves a turn, a
    rare bombing, a random number of reinforcements in a conflict. A baseline over the wire."""

    def __init__(
        self, seed: int | None = None, move_chance: float = 0.2, attack_chance: float = 0.03
    ) -> None:
        self.rng = random.Random(seed)
        self.move_chance = move_chance
        self.attack_chance = attack_chance

    def decide(self, view: View) -> list[Intent]:
        if view.over:
            return []
        rng = self.rng
        eligible = [f.id for f in view.fleets if REINFORCE in f.allowed]
        if eligible:
            return [
                Intent(fid, REINFORCE, None, 0.0, "random")
                for fid in sorted(rng.sample(eligible, rng.randint(0, len(eligible))))
            ]
        geo = _Geometry(view.squares)
        board = _Board.from_view(view, geo)
        squares = sorted(geo.terrain)
        fleets = [f for f in view.fleets if not f.queued and f.allowed]
        rng.shuffle(fleets)
        intents: list[Intent] = []
        used: set[Pos] = set()
        for fleet in fleets:
            if len(intents) >= ORDERS_PER_TURN:
                break
            if fleet.role is FleetKind.LEADER and MOVE in fleet.allowed:
                if rng.random() >= self.move_chance:
                    continue
                lifted = board.copy()
                lifted.lift(fleet.id)
                options = [p for p in squares if p not in used and lifted.can_move_to(p)]
                order = MOVE
            elif fleet.role is FleetKind.BOMBER and ATTACK in fleet.allowed:
                if rng.random() >= self.attack_chance:
                    continue
                options = [
                    p
                    for p in squares
                    if p not in used and board.can_attack(p) and (p in board.colony or p in board.at_pos)
                ]
                order = ATTACK
            elif fleet.role is FleetKind.COLONIST and fleet.kind is not None:
                order = COLONIZE_MINING if fleet.kind is MINING else COLONIZE
                if order not in fleet.allowed:
                    continue
                options = [p for p in squares if p not in used and board.can_colonize(p, fleet.kind)]
            else:
                continue
            if options:
                pos = rng.choice(options)
                used.add(pos)
                intents.append(Intent(fleet.id, order, geo.system_id[pos], 0.0, "random"))
        return intents


def intents_summary(intents: Iterable[Intent]) -> str:
    """A one-line description of intents, for logs."""
    return (
        "; ".join(
            f"{i.order} {i.fleet}->{i.target} ({i.value:+.2f} {i.reason})" for i in intents if not i.alternate
        )
        or "no orders"
    )
