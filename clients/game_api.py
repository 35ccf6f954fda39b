"""The TaE game as a client sees it: a grid of systems, fleets by kind, scores, turn, orders.

Everything here is read from a ``Cache`` and from nothing else: a client knows only what the
wire says (spec/ruleset.md §2–§4, §12). What is derived from what:

* **Board.** Star Systems (type 2) named ``"x, y"`` are board squares; other systems (the
  players' home systems, "<name>'s System") are not on the board. A square's planet (type 3,
  inside the system) carries the rest in its resource list: 1 uninhabitable (terrain ``M``),
  2 destroyed, 3 artifact, 4–7 a merchant/scientist/settler/mining colony (amount > 0). TP04
  also has the system's "Status" group: Inhabitable, Destroyed and Region.
* **Regions.** TP04 sends them (Region, 0 = none). TP03 does not, so ``regions()`` computes
  them: connected components (orthogonal adjacency) of the undestroyed squares that have a
  colony or a leader, numbered by their smallest system id. This is an approximation: a square
  waiting for a conflict to be resolved (R16) is not a region member on the server, and the
  wire does not say which squares those are. ``regions_from_server`` says which case applies.
* **Fleets.** Kind by name: "Merchant/Scientist/Settler/Mining Leader", "Bomber",
  "Colonist Fleet". A colonist's type comes from its ship design's name (MerchantShip,
  ScientistShip, SettlerShip, MiningShip); opponents' colonist designs are hidden, so their
  type is None. A fleet's square is the board system it is in (fleet → planet → system).
* **Scores** come only from the latest "Turn complete" message; **game over** from a
  "GAME OVER!" message (both read by ``clients.game_messages``); the **turn** from the Universe
  (object 0): TP04 "Informational" group's first Integer, TP03 ``UniverseExtra.age``.
* **Orders.** Allowed types: TP03 ``Object.order_types``, TP04 the fleet's OrderQueue. Orders are
  addressed by object id in TP03 and by order-queue id in TP04; InsertOrder is answered by Okay
  in TP03 and by the Order in TP04.

The order and turn helpers are plans (``clients.plans``): run them with a transport.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from protocol import (
    BoardMessage,
    FinishedTurn,
    InsertOrder,
    IntegerParam,
    ObjectArg,
    Okay,
    Order,
    OrderArg,
    OrderDesc,
    OrderParamType,
    ProbeOrder,
    RemoveOrder,
    Tp03Object,
    UniverseExtra,
    Version,
)

from . import object_params
from .cache import Cache
from .game_messages import GAME_OVER, TURN_COMPLETE, GameOver, parse_scores, read_game_over
from .plans import Plan
from .tae_model import (
    COLONY_RESOURCES,
    DESIGN_NAMES,
    FLEET,
    LEADER_NAMES,
    PLANET,
    RES_ARTIFACT,
    RES_DESTROYED,
    RES_UNINHABITABLE,
    STAR_SYSTEM,
    ColonyKind,
    FleetKind,
    FleetView,
    Scores,
    SystemView,
    compute_regions,
    parse_system_name,
    square_letter,
)

__all__ = ["TaeGame"]


class TaeGame:
    """Game-level reading of a ``Cache`` (see the module docstring)."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self._memo: dict[str, tuple[int, object]] = {}

    def _memoised(self, name: str, compute):
        """``compute()``, recomputed only when the cache has changed since the last call."""
        entry = self._memo.get(name)
        if entry is None or entry[0] != self.cache.generation:
            entry = (self.cache.generation, compute())
            self._memo[name] = entry
        return entry[1]

    @property
    def version(self) -> Version:
        return self.cache.version

    # ----------------------------------------------------------------------------------------
    # Turn, time, players
    # ----------------------------------------------------------------------------------------

    @property
    def player_id(self) -> int | None:
        return self.cache.player_id

    @property
    def turn(self) -> int | None:
        """The Universe's turn counter (object 0), None before it is downloaded."""
        universe = self.cache.objects.get(0)
        if universe is None:
            return None
        if isinstance(universe, Tp03Object):
            return universe.extra.age if isinstance(universe.extra, UniverseExtra) else None
        group = object_params.group_values(self.cache.object_descs, universe, "Informational")
        if group:
            for param in group:
                if isinstance(param, IntegerParam):
                    return param.value
        for group in universe.groups:  # no description: the first Integer anywhere
            for param in group:
                if isinstance(param, IntegerParam):
                    return param.value
        return None

    @property
    def time_remaining(self) -> int | None:
        """Seconds to the end of the turn, from the last TimeRemaining (−1: no timer)."""
        message = self.cache.time_remaining
        return message.time if message is not None else None

    def player_name(self, player_id: int | None) -> str | None:
        player = self.cache.players.get(player_id) if player_id is not None else None
        if player is None and self.cache.me is not None and self.cache.me.id == player_id:
            player = self.cache.me
        return player.name if player is not None else None

    # ----------------------------------------------------------------------------------------
    # Messages: scores and the end of the game
    # ----------------------------------------------------------------------------------------

    def messages(self, subject: str | None = None) -> list[BoardMessage]:
        """Every cached message (optionally with this subject), oldest turn first."""
        found = []
        for board_id in sorted(self.cache.messages):
            for index, message in enumerate(self.cache.messages[board_id]):
                if subject is None or message.subject == subject:
                    found.append((message.turn, board_id, index, message))
        found.sort(key=lambda entry: entry[:3])
        return [entry[3] for entry in found]

    def scores(self) -> Scores | None:
        """My scores from the latest "Turn complete" message (None before the first); once the
        game is over, my final standing from "GAME OVER!" (the turn that ended the game has no
        "Turn complete" of its own)."""
        ended = self.game_over
        mine = ended.standing_of(self.player_id) if ended is not None else None
        if ended is not None and mine is not None:
            money, technology, people, raw = mine.categories
            return Scores(money, technology, people, raw, mine.artifacts, ended.turn, distributed=True)
        for message in reversed(self.messages(TURN_COMPLETE)):
            scores = parse_scores(message.body, message.turn)
            if scores is not None:
                return scores
        return None

    @property
    def game_over(self) -> GameOver | None:
        """The "GAME OVER!" message, once the game has ended."""
        ended = self.messages(GAME_OVER)
        if not ended:
            return None
        names = {pid: player.name for pid, player in self.cache.players.items()}
        if self.cache.me is not None:
            names.setdefault(self.cache.me.id, self.cache.me.name)
        return read_game_over(ended[-1], names, self.player_id)

    @property
    def is_over(self) -> bool:
        return self.game_over is not None

    # ----------------------------------------------------------------------------------------
    # The board
    # ----------------------------------------------------------------------------------------

    def systems(self) -> dict[tuple[int, int], SystemView]:
        """Every board square by (x, y)."""
        return dict(self._memoised("systems", self._systems))

    def _systems(self) -> dict[tuple[int, int], SystemView]:
        objects = self.cache.objects
        leaders_at: dict[int, list[int]] = {}
        for fleet in self.fleets():
            if fleet.kind is FleetKind.LEADER and fleet.system_id is not None:
                leaders_at.setdefault(fleet.system_id, []).append(fleet.id)
        raw = []
        for obj in objects.values():
            if obj.type != STAR_SYSTEM:
                continue
            position = parse_system_name(obj.name)
            if position is None:
                continue
            planet = next(
                (objects[c] for c in obj.contains if c in objects and objects[c].type == PLANET),
                None,
            )
            resources = object_params.resources(planet) if planet is not None else {}
            status = object_params.named_integers(self.cache.object_descs, obj, "Status")
            if planet is not None:
                habitable = resources.get(RES_UNINHABITABLE, 0) <= 0
            else:
                habitable = bool(status.get("Inhabitable", 1))
            destroyed = bool(status.get("Destroyed", 0)) or resources.get(RES_DESTROYED, 0) > 0
            colony = next(
                (kind for rid, kind in COLONY_RESOURCES.items() if resources.get(rid, 0) > 0),
                None,
            )
            raw.append(
                SystemView(
                    id=obj.id,
                    x=position[0],
                    y=position[1],
                    name=obj.name,
                    planet_id=planet.id if planet is not None else None,
                    habitable=habitable,
                    destroyed=destroyed,
                    colony=colony,
                    artifact=resources.get(RES_ARTIFACT, 0) > 0,
                    region=status.get("Region", 0),
                    leaders=tuple(sorted(leaders_at.get(obj.id, ()))),
                )
            )
        if not self.regions_from_server:
            regions = compute_regions(raw)
            raw = [replace(view, region=regions.get(view.id, 0)) for view in raw]
        return {view.position: view for view in raw}

    @property
    def regions_from_server(self) -> bool:
        """True in TP04 (the Region parameter); in TP03 ``regions()`` is computed locally."""
        return self.version == Version.TP04

    def system_at(self, x: int, y: int) -> SystemView | None:
        return self.systems().get((x, y))

    def system_id_at(self, x: int, y: int) -> int | None:
        view = self.system_at(x, y)
        return view.id if view is not None else None

    def regions(self) -> dict[int, frozenset[tuple[int, int]]]:
        """Region id → the squares in it (TP03: computed, see the module docstring)."""
        found: dict[int, set[tuple[int, int]]] = {}
        for position, view in self.systems().items():
            if view.region:
                found.setdefault(view.region, set()).add(position)
        return {region: frozenset(squares) for region, squares in found.items()}

    def board_size(self) -> tuple[int, int]:
        """(columns, rows) of the board: one more than the largest x and y."""
        positions = self.systems().keys()
        if not positions:
            return (0, 0)
        return (max(x for x, _ in positions) + 1, max(y for _, y in positions) + 1)

    def render(self) -> str:
        """The board as text, highest row first (as the map file): '.'/'M' empty terrain, 'A'
        artifact, colonies m/s/p/r (merchant, scientist, settler, mining), 'L' a leader,
        '#' destroyed."""
        systems = self.systems()
        width, height = self.board_size()
        rows = []
        for y in reversed(range(height)):
            line = []
            for x in range(width):
                view = systems.get((x, y))
                line.append(square_letter(view))
            rows.append("".join(line))
        return "\n".join(rows)

    # ----------------------------------------------------------------------------------------
    # Fleets
    # ----------------------------------------------------------------------------------------

    def fleets(self, owner: int | None = None) -> list[FleetView]:
        """Every fleet (of ``owner`` if given), by id."""
        views = self._memoised("fleets", self._fleets).values()
        return [view for view in views if owner is None or view.owner == owner]

    def fleet(self, fleet_id: int) -> FleetView | None:
        return self._memoised("fleets", self._fleets).get(fleet_id)

    def _fleets(self) -> dict[int, FleetView]:
        views = {}
        for object_id in sorted(self.cache.objects):
            view = self._fleet(object_id)
            if view is not None:
                views[object_id] = view
        return views

    def _fleet(self, fleet_id: int) -> FleetView | None:
        obj = self.cache.objects.get(fleet_id)
        if obj is None or obj.type != FLEET:
            return None
        owner = object_params.owner(obj)
        designs = object_params.designs(obj)
        if obj.name in LEADER_NAMES:
            kind, colony_kind = FleetKind.LEADER, LEADER_NAMES[obj.name]
        elif obj.name == "Bomber":
            kind, colony_kind = FleetKind.BOMBER, None
        elif obj.name == "Colonist Fleet":
            kind, colony_kind = FleetKind.COLONIST, self._colonist_kind(designs)
        else:
            kind, colony_kind = FleetKind.OTHER, None
        system_id, position = self._square_of(obj.id)
        return FleetView(
            id=obj.id,
            name=obj.name,
            owner=owner,
            kind=kind,
            colony_kind=colony_kind,
            system_id=system_id,
            position=position,
            order_holder=self.cache.order_holder(obj.id),
            order_types=self.cache.allowed_order_types(obj.id),
            orders=self.cache.orders_of(obj.id),
            designs=designs,
        )

    def my_fleets(self, kind: FleetKind | None = None) -> list[FleetView]:
        me = self.player_id
        if me is None:
            return []
        return [f for f in self.fleets(me) if kind is None or f.kind is kind]

    def my_leaders(self) -> dict[ColonyKind, FleetView]:
        return {
            fleet.colony_kind: fleet
            for fleet in self.my_fleets(FleetKind.LEADER)
            if fleet.colony_kind is not None
        }

    def my_colonists(self) -> list[FleetView]:
        return self.my_fleets(FleetKind.COLONIST)

    def my_bombers(self) -> list[FleetView]:
        return self.my_fleets(FleetKind.BOMBER)

    def leaders_on_board(self) -> list[FleetView]:
        return [f for f in self.fleets() if f.kind is FleetKind.LEADER and f.system_id is not None]

    # ----------------------------------------------------------------------------------------
    # Orders
    # ----------------------------------------------------------------------------------------

    def order_desc(self, order_type: int | str) -> OrderDesc:
        """The OrderDesc for a type id or name (names compare case-insensitively)."""
        descs = self.cache.order_descs
        if isinstance(order_type, int):
            if order_type in descs:
                return descs[order_type]
        else:
            for desc in descs.values():
                if desc.name.lower() == order_type.lower():
                    return desc
        raise KeyError(f"the server describes no order type {order_type!r}")

    def allowed_orders(self, fleet_id: int) -> list[OrderDesc]:
        """The order types this fleet accepts now (with their descriptions, when known)."""
        descs = self.cache.order_descs
        return [descs[t] for t in self.cache.allowed_order_types(fleet_id) if t in descs]

    def build_order(
        self,
        fleet_id: int,
        order_type: int | str,
        target: int | tuple[int, int] | None = None,
        *,
        slot: int = -1,
        args: Iterable[OrderArg] | None = None,
        cls: type[Order] = InsertOrder,
    ) -> Order:
        """An InsertOrder (or ProbeOrder) for a fleet. ``target`` is a system id or (x, y);
        it fills the order's Object ("Star System") parameter. Raises KeyError for an unknown
        type, ValueError for a fleet without an order holder or a missing target."""
        desc = self.order_desc(order_type)
        holder = self.cache.order_holder(fleet_id)
        if holder is None:
            raise ValueError(f"object {fleet_id} has no order queue this player may use")
        if args is None:
            target_id = self._target_id(target)
            built: list[OrderArg] = []
            for param in desc.params:
                if param.type == OrderParamType.OBJECT:
                    if target_id is None:
                        raise ValueError(f"{desc.name} needs a target ({param.name!r})")
                    built.append(ObjectArg(target_id))
                else:
                    raise ValueError(f"{desc.name} parameter {param.name!r} (type {param.type}) needs args=")
            args = built
        return cls(id=holder, slot=slot, type=desc.id, args=tuple(args))

    def insert_order(
        self,
        fleet_id: int,
        order_type: int | str,
        target: int | tuple[int, int] | None = None,
        *,
        slot: int = -1,
        args: Iterable[OrderArg] | None = None,
    ) -> Plan[Order | Okay]:
        """Insert an order, then re-read the fleet's orders. Returns the server's answer: the
        Order (TP04) or Okay (TP03). A refusal raises ``RequestFailed`` (with the Fail)."""
        message = self.build_order(fleet_id, order_type, target, slot=slot, args=args)
        reply = yield message
        yield from self.cache.refresh_objects([fleet_id])
        return reply

    def probe_order(
        self,
        fleet_id: int,
        order_type: int | str,
        target: int | tuple[int, int] | None = None,
        *,
        args: Iterable[OrderArg] | None = None,
    ) -> Plan[Order]:
        """ProbeOrder: the server's view of the order, without side effects."""
        message = self.build_order(fleet_id, order_type, target, args=args, cls=ProbeOrder)
        reply = yield message
        return reply

    def remove_orders(self, fleet_id: int, slots: Iterable[int] | None = None) -> Plan[tuple]:
        """Remove orders (default: all) from a fleet, slots in decreasing order as §2.1 asks;
        returns the server's Okay/Fail per slot and re-reads the fleet."""
        holder = self.cache.order_holder(fleet_id)
        if holder is None:
            raise ValueError(f"object {fleet_id} has no order queue this player may use")
        if slots is None:
            slots = range(len(self.cache.orders_of(fleet_id)))
        ordered = tuple(sorted(set(slots), reverse=True))
        if not ordered:
            return ()
        reply = yield RemoveOrder(holder, ordered)
        yield from self.cache.refresh_objects([fleet_id])
        return reply

    def finish_turn(self) -> Plan[Okay]:
        """FinishedTurn → Okay: this player is done for the turn."""
        reply = yield FinishedTurn()
        return reply

    def refresh_turn(self) -> Plan[int | None]:
        """Re-read the Universe and return the turn number."""
        yield from self.cache.refresh_objects([0])
        return self.turn

    # ----------------------------------------------------------------------------------------
    # Helpers
    # ----------------------------------------------------------------------------------------

    def _target_id(self, target: int | tuple[int, int] | None) -> int | None:
        if target is None or isinstance(target, int):
            return target
        system = self.system_id_at(*target)
        if system is None:
            raise ValueError(f"no board system at {target}")
        return system

    def _colonist_kind(self, designs: tuple[int, ...]) -> ColonyKind | None:
        for design_id in designs:
            design = self.cache.designs.get(design_id)
            if design is not None and design.name in DESIGN_NAMES:
                return DESIGN_NAMES[design.name]
        return None

    def _square_of(self, object_id: int) -> tuple[int | None, tuple[int, int] | None]:
        objects = self.cache.objects
        seen = set()
        current = self.cache.parent_of(object_id)
        while current is not None and current not in seen:
            seen.add(current)
            obj = objects.get(current)
            if obj is None:
                break
            if obj.type == STAR_SYSTEM:
                position = parse_system_name(obj.name)
                return (obj.id, position) if position is not None else (None, None)
            current = self.cache.parent_of(current)
        return (None, None)
