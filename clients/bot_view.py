"""What the bot sees and what it answers: the ``View`` of one player's turn and ``Intent`` orders.

Nothing here talks to a server. ``view_from_game(TaeGame)`` copies what one player's cache
knows into a ``View`` (plain values: the board squares, every leader, this player's fleets with
the order types the server allows them now, its scores, the running conflict); a ``Strategy``
turns a ``View`` into ``Intent`` values (fleet, order type name, target system id), which
``clients.bot`` sends. Tests build ``View`` values by hand.

The running conflict comes from the board and the COMBAT! message's references, never from its
prose (``clients.game_messages``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .conflict_view import running_conflict
from .game_api import TaeGame
from .game_messages import COMBAT
from .tae_model import REINFORCE, ColonyKind, FleetKind

__all__ = [
    "CombatInfo",
    "Intent",
    "LeaderInfo",
    "MyFleet",
    "Square",
    "Strategy",
    "View",
    "intents_summary",
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

ORDERS_PER_TURN = 2  # R11
HABITABLE, UNINHABITABLE = ".", "M"

#: Share of each kind in the full pool (R3): what a hidden colonist probably is.
POOL_SHARE = {MERCHANT: 30 / 153, SCIENTIST: 57 / 153, SETTLER: 30 / 153, MINING: 36 / 153}

Pos = tuple[int, int]


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
    """The running conflict (``clients.conflict_view``): internal or not, the combatants' names
    (attacker first) and their initial strengths; when the COMBAT! message references them, the
    leaders' kind, the two leaders and the unification system's position."""

    internal: bool
    attacker: str
    attacker_strength: int
    defender: str
    defender_strength: int
    kind: ColonyKind | None = None
    attacker_leader: int | None = None
    defender_leader: int | None = None
    unification: Pos | None = None


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
    leaders: list[LeaderInfo] = []
    fleets: list[MyFleet] = []
    hands: dict[int, int] = {}
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
    posted = game.messages(COMBAT)
    # Posted at the end of the last turn: this one is a combat turn.
    combat_turn = bool(posted) and posted[-1].turn == turn
    combat = None
    conflict = running_conflict(game)
    if conflict is not None:
        a, d = conflict.attacker.strength, conflict.defender.strength
        if a is not None and d is not None:
            combat = CombatInfo(
                conflict.internal,
                conflict.attacker.name,
                a,
                conflict.defender.name,
                d,
                conflict.kind,
                conflict.attacker.leader_id,
                conflict.defender.leader_id,
                None if conflict.unification is None else conflict.unification.position,
            )
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


class Strategy:
    """What a bot asks: ``decide(view)`` → intents, chosen ones first, then alternates."""

    def decide(self, view: View) -> list[Intent]:  # pragma: no cover - interface
        raise NotImplementedError


def intents_summary(intents: Iterable[Intent]) -> str:
    """A one-line description of intents, for logs."""
    return (
        "; ".join(
            f"{i.order} {i.fleet}->{i.target} ({i.value:+.2f} {i.reason})" for i in intents if not i.alternate
        )
        or "no orders"
    )
