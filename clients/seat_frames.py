"""The seat's view for the computer player (`ruleset.ai`), built from what the wire told the bot.

The bot keeps no rules model of its own: ``seat_from_view`` turns the bot's ``View`` (copied from
the cache, ``clients.bot_view.view_from_game``) into the ruleset's ``SeatView`` (R27: the board,
every leader, the player's own fleets and scores, how many colonists each opponent holds, the
running conflict), and ``AiStrategy`` asks `ruleset.ai.decide` for the turn's orders and sends
them as ``Intent``s. What the wire does not tell is left out or estimated the way a player would:
opponents' colonists get placeholder ids (their kinds are hidden anyway), the pool's size is the
full pool minus what is on the board and in the hands, and queued conflicts other than the
running one are unknown. System ids are translated both ways by board position, so the board
the AI reasons on is numbered like the ruleset's whatever ids the server gave.

``--strategy random`` is ``RandomStrategy``: the ruleset's random player (``ruleset.simulator``)
on a world the seat's view allows (``ruleset.ai.worlds``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ruleset import Board, Conflict, FleetView, Kind, Order, OrderType, Phase, PlayerView, Role
from ruleset.ai import DEFAULT_ITERATIONS, DEFAULT_SECONDS, Level, decide, stop_after
from ruleset.ai.worlds import sample_world
from ruleset.board import ARTIFACT, HABITABLE, UNINHABITABLE
from ruleset.kinds import FULL_POOL
from ruleset.order_types import ORDER_NAMES, ORDER_TYPES_BY_NAME
from ruleset.seat import SeatView
from ruleset.simulator import RandomPlayer

from .bot_view import Intent, Pos, Strategy, View
from .tae_model import ColonyKind, FleetKind

__all__ = ["AiStrategy", "RandomStrategy", "SeatFrames", "WireBoardError", "seat_from_view"]

_KIND = {
    ColonyKind.MERCHANT: Kind.MERCHANT,
    ColonyKind.SCIENTIST: Kind.SCIENTIST,
    ColonyKind.SETTLER: Kind.SETTLER,
    ColonyKind.MINING: Kind.MINING,
}
_ROLE = {FleetKind.COLONIST: Role.COLONIST, FleetKind.LEADER: Role.LEADER, FleetKind.BOMBER: Role.BOMBER}
# Placeholder ids of opponents' colonists, which the bot's view counts but does not list.
HIDDEN_FLEET_IDS = 1_000_000_000


class WireBoardError(ValueError):
    """The server's board cannot be read as a TaE map (a square missing inside a row)."""


@dataclass(frozen=True)
class SeatFrames:
    """A `SeatView` and the translation between its system ids and the server's."""

    seat: SeatView
    wire_system: Mapping[int, int]  # ruleset system id -> the server's system id
    ruleset_system: Mapping[int, int]  # the server's system id -> ruleset system id

    def intent(self, order: Order, reason: str) -> Intent:
        name = ORDER_NAMES[OrderType(order.type)]
        target = None if order.type == OrderType.REINFORCE else self.wire_system[order.target]
        return Intent(order.fleet, name, target, 0.0, reason)


def _board(view: View) -> tuple[Board, dict[Pos, int]]:
    """The map as the squares show it (row y = the y-th line from the bottom), and pos -> cell."""
    if not view.squares:
        raise WireBoardError("the server has shown no board")
    height = max(y for _, y in view.squares) + 1
    rows = []
    for y in range(height):
        xs = sorted(x for x, yy in view.squares if yy == y)
        if xs != list(range(len(xs))):
            raise WireBoardError(f"row {y} of the board has a gap: not a TaE map")
        row = []
        for x in xs:
            square = view.squares[(x, y)]
            row.append(ARTIFACT if square.artifact else UNINHABITABLE if square.terrain == "M" else HABITABLE)
        rows.append("".join(row))
    board = Board.from_rows(tuple(rows))
    return board, {xy: i for i, xy in enumerate(board.coords)}


def seat_from_view(view: View) -> SeatFrames:
    """The ruleset's view of the bot's seat (see the module docstring)."""
    board, cell_of = _board(view)
    wire_system = {board.system_id(cell_of[pos]): s.system_id for pos, s in view.squares.items()}
    ruleset_system = {wire: ours for ours, wire in wire_system.items()}
    me = view.me
    fleets: dict[int, FleetView] = {}
    for leader in view.leaders:
        at = cell_of.get(leader.pos) if leader.pos is not None else None
        fleets[leader.id] = FleetView(leader.id, leader.owner, Role.LEADER, _KIND[leader.kind], at)
    allowed: dict[int, tuple[OrderType, ...]] = {}
    accepted: list[Order] = []
    for fleet in view.fleets:
        role = _ROLE[fleet.role]
        kind = _KIND[fleet.kind] if fleet.kind is not None else None
        at = cell_of.get(fleet.pos) if fleet.pos is not None else None
        fleets[fleet.id] = FleetView(fleet.id, me, role, kind, at)
        allowed[fleet.id] = tuple(
            ORDER_TYPES_BY_NAME[n] for n in sorted(fleet.allowed) if n in ORDER_TYPES_BY_NAME
        )
        for name, target in fleet.queued:
            if name in ORDER_TYPES_BY_NAME:
                order_type = ORDER_TYPES_BY_NAME[name]
                ours = 0 if target is None else ruleset_system.get(target, 0)
                accepted.append(Order(me, fleet.id, int(order_type), ours))
    hidden = HIDDEN_FLEET_IDS
    for owner, count in sorted(view.hands.items()):
        if owner == me:
            continue
        for _ in range(count):
            fleets[hidden] = FleetView(hidden, owner, Role.COLONIST, None, None)
            hidden += 1
    colonies = {cell_of[pos]: _KIND[s.colony] for pos, s in view.squares.items() if s.colony is not None}
    artifacts = frozenset(cell_of[pos] for pos, s in view.squares.items() if s.artifact)
    destroyed = frozenset(cell_of[pos] for pos, s in view.squares.items() if s.destroyed)
    placed = sum(1 for cell in colonies if board.terrain[cell] != ARTIFACT)
    pool_total = max(0, sum(FULL_POOL) - placed - sum(view.hands.values()))
    conflicts = _conflicts(view, cell_of)
    phase = Phase.OVER if view.over else Phase.COMBAT if view.combat_turn else Phase.NORMAL
    players = dict(view.players)
    players.setdefault(me, view.name)
    player_view = PlayerView(
        viewer=me,
        turn=view.turn,
        phase=phase,
        players=tuple(sorted(players.items())),
        scores=view.scores,
        fleets=fleets,
        colonies=colonies,
        artifacts=artifacts,
        destroyed=destroyed,
        pool_total=pool_total,
        conflicts=conflicts,
        unification=frozenset(c.unification for c in conflicts if c.unification is not None),
    )
    seat = SeatView(me, player_view, board, allowed, tuple(accepted))
    return SeatFrames(seat, wire_system, ruleset_system)


def _conflicts(view: View, cell_of: Mapping[Pos, int]) -> tuple[Conflict, ...]:
    """The running conflict, when the view knows its leaders (else none: the AI then only
    decides how many colonists to send, which needs no more)."""
    running = view.combat
    if running is None or running.attacker_leader is None or running.defender_leader is None:
        return ()
    if running.kind is None:
        return ()
    kind = _KIND[running.kind]
    cell = cell_of.get(running.unification) if running.unification is not None else None
    return (
        Conflict(
            internal=running.internal,
            kind=kind,
            attacker=running.attacker_leader,
            defender=running.defender_leader,
            unification=None if running.internal else cell,
            attacker_strength=running.attacker_strength,
            defender_strength=running.defender_strength,
        ),
    )


class AiStrategy(Strategy):
    """The computer player at `level` (``tae-client bot --strategy easy|normal|hard``).

    Its stream is seeded per bot and turn (``seed``, the player and the turn), so a bot's
    choices repeat for the same game; ``budget`` is `hard`'s playouts per decision, and
    ``seconds`` the longest it searches (then its best so far: a busy machine plays weaker,
    never slower)."""

    def __init__(
        self,
        level: Level = Level.NORMAL,
        seed: int = 0,
        budget: int = DEFAULT_ITERATIONS,
        seconds: float = DEFAULT_SECONDS,
    ) -> None:
        self.level = level
        self.seed = seed
        self.budget = budget
        self.seconds = seconds

    def decide(self, view: View) -> list[Intent]:
        if view.over or view.bystander:
            return []
        frames = seat_from_view(view)
        rng = random.Random(f"{self.seed}:{view.me}:{view.turn}")
        should_stop = stop_after(self.seconds, time.monotonic)
        orders = decide(frames.seat, self.level, rng, budget=self.budget, should_stop=should_stop)
        return [frames.intent(order, self.level.value) for order in orders]


class RandomStrategy(Strategy):
    """Random legal orders (the baseline, ``--strategy random``): the ruleset's random player on
    a world the seat's view allows; it decides from the seat's own fleets and the public board."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.player = RandomPlayer()

    def decide(self, view: View) -> list[Intent]:
        if view.over or view.bystander:
            return []
        frames = seat_from_view(view)
        seat = frames.seat
        if seat.view.phase is Phase.COMBAT:
            eligible = sorted(f for f, types in seat.allowed.items() if OrderType.REINFORCE in types)
            chosen = sorted(self.rng.sample(eligible, self.rng.randint(0, len(eligible))))
            return [
                frames.intent(Order(seat.player, fid, int(OrderType.REINFORCE)), "random") for fid in chosen
            ]
        world = sample_world(seat, self.rng)
        busy = {o.fleet for o in seat.accepted}
        orders = [
            o
            for o in self.player.normal_orders(world, seat.player, self.rng)
            if o.fleet not in busy and OrderType(o.type) in seat.allowed.get(o.fleet, ())
        ]
        return [frames.intent(order, "random") for order in orders[: 2 - len(seat.accepted)]]
