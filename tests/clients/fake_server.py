"""A small in-memory Thousand Parsec server for testing the client library, TP03 and TP04.

It implements just enough of spec/protocol.md §10 with ``protocol/``: Connect, Login,
CreateAccount, features, games, every ID list with keys and paging, objects in both versions
(TP03 fixed extras; TP04 parameter groups with ObjectDescs), order descriptions, orders on
objects (TP03) or order queues (TP04), boards and messages, players (TP03 probing, TP04 list),
designs and the other catalogues, time remaining, FinishedTurn and pushed TimeRemaining.

``FakeWorld`` holds a tiny TaE game (``tae_world()``); ``FakeConnection`` is the sans-IO server
side of one connection (bytes in → bytes out) and records every request it decoded, so tests can
check what a client asked for. ``FakeSocket`` makes a ``FakeConnection`` look like a connected
socket to ``BlockingConnection``; ``ThreadedFakeServer`` serves real loopback TCP.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from dataclasses import dataclass, field

from protocol import (
    Board,
    BoardIDs,
    BoardMessage,
    Category,
    CategoryIDs,
    ComponentIDs,
    Connect,
    CreateAccount,
    Deframer,
    Design,
    DesignIDs,
    Fail,
    FailCode,
    Features,
    FleetExtra,
    GalaxyExtra,
    Game,
    GameParam,
    GetFeatures,
    GetGames,
    GetIDSequence,
    GetTimeRemaining,
    IdModtime,
    IntegerParam,
    Login,
    Message,
    ObjectArg,
    ObjectDescIDs,
    ObjectIDs,
    Okay,
    Order,
    OrderDescIDs,
    OrderQueue,
    OrderQueueIDs,
    OrderQueueParam,
    Ping,
    PlanetExtra,
    Player,
    PlayerIDs,
    PositionParam,
    PropertyIDs,
    ProtocolError,
    Reference,
    ReferenceParam,
    ReferenceQuantity,
    ReferenceQuantityListParam,
    ReferenceType,
    Resource,
    ResourceAmount,
    ResourceIDs,
    ResourceListParam,
    ShipCount,
    SizeParam,
    StarSystemExtra,
    TimeRemaining,
    Tp03Object,
    Tp04Object,
    UniverseExtra,
    Vec3,
    VelocityParam,
    Version,
    decode,
    encode,
    encode_error,
    encode_reply,
)
from tests.protocol.tae import OBJECT_DESCS, ORDER_DESCS

UNIVERSE, GALAXY, STAR_SYSTEM, PLANET, FLEET = range(5)
COLONIZE_MINING, COLONIZE, MOVE, ATTACK, REINFORCE = range(5)
SPACING = 80000
KIND_NAMES = ("Merchant", "Scientist", "Settler", "Mining")


# ------------------------------------------------------------------------------------------------
# The world
# ------------------------------------------------------------------------------------------------


@dataclass
class FakeObject:
    id: int
    type: int
    name: str
    parent: int
    position: tuple[int, int, int] = (0, 0, 0)
    size: int = 2
    modtime: int = 1
    owner: int = 0
    resources: dict[int, int] = field(default_factory=dict)
    ships: list[tuple[int, int]] = field(default_factory=list)
    queue: int | None = None
    inhabitable: int = 1
    destroyed: int = 0


@dataclass
class FakeQueue:
    id: int
    owner: int
    object_id: int
    order_types: tuple[int, ...]
    orders: list[tuple[int, int | None]] = field(default_factory=list)  # (type, target)
    modtime: int = 1


@dataclass
class FakePlayer:
    id: int
    name: str
    password: str
    modtime: int = 1
    race: str = "Human"  # "Removed": the operator removed the player (tpserver-tae)


@dataclass
class FakeDesign:
    id: int
    name: str
    owner: int
    modtime: int = 1
    hidden_from_others: bool = False


class FakeWorld:
    """A tiny TaE game; every change bumps a serial used as modtime (strictly increasing)."""

    def __init__(self) -> None:
        self.serial = 1
        self.turn = 0
        self.time_left = 300
        self.objects: dict[int, FakeObject] = {}
        self.queues: dict[int, FakeQueue] = {0: FakeQueue(0, 0, 0, ())}
        self.players: dict[int, FakePlayer] = {}
        self.designs: dict[int, FakeDesign] = {}
        # board (= player) id → (subject, body, turn, references)
        self.messages: dict[int, list[tuple[str, str, int, tuple[Reference, ...]]]] = {}
        self.board_modtimes: dict[int, int] = {}
        self.order_descs = dict(ORDER_DESCS)
        self.object_descs = dict(OBJECT_DESCS)
        self.finished: set[int] = set()
        self.pending: set[int] = set()  # pending unification systems: in no region (R16)
        self.connections: list[FakeConnection] = []
        self.lock = threading.RLock()

    def tick(self) -> int:
        self.serial += 1
        return self.serial

    # -- building ---------------------------------------------------------------------------------

    def add_object(self, type_id: int, name: str, parent: int, **kwargs) -> FakeObject:
        obj = FakeObject(len(self.objects), type_id, name, parent, modtime=self.tick(), **kwargs)
        self.objects[obj.id] = obj
        return obj

    def add_queue(self, obj: FakeObject, owner: int, order_types: tuple[int, ...]) -> FakeQueue:
        queue = FakeQueue(len(self.queues), owner, obj.id, order_types, modtime=self.tick())
        self.queues[queue.id] = queue
        obj.queue = queue.id
        return queue

    def add_player(self, name: str, password: str) -> FakePlayer:
        player = FakePlayer(len(self.players) + 1, name, password, modtime=self.tick())
        self.players[player.id] = player
        self.messages[player.id] = []
        self.board_modtimes[player.id] = self.tick()
        return player

    def add_design(self, name: str, owner: int, hidden: bool = False) -> FakeDesign:
        design = FakeDesign(len(self.designs) + 1, name, owner, self.tick(), hidden)
        self.designs[design.id] = design
        return design

    def add_fleet(self, owner: int, name: str, parent: int, design: str, order_types) -> FakeObject:
        hidden = name == "Colonist Fleet"
        design_id = self.add_design(design, owner, hidden).id
        fleet = self.add_object(
            FLEET,
            name,
            parent,
            owner=owner,
            ships=[(design_id, 1)],
            position=self.objects[parent].position,
        )
        self.add_queue(fleet, owner, tuple(order_types))
        return fleet

    def place(self, fleet: FakeObject, x: int, y: int) -> None:
        """Put a fleet on the board system at (x, y)."""
        target = self.system_at(x, y)
        fleet.parent, fleet.position = target.id, target.position
        self.touch(fleet)

    def colonize(self, x: int, y: int, resource: int) -> None:
        """A colony (resource 4-7: merchant, scientist, settler, mining) at (x, y)."""
        planet = self.planet_of(self.system_at(x, y))
        planet.resources[resource] = 1
        self.touch(planet)

    def post(
        self, player_id: int, subject: str, body: str, references: tuple[tuple[int, int], ...] = ()
    ) -> None:
        """Post a message; ``references`` are (reftype, id) pairs (1 Object, 7 Player)."""
        refs = tuple(Reference(ReferenceType(t), i) for t, i in references)
        self.messages[player_id].append((subject, body, self.turn, refs))
        self.board_modtimes[player_id] = self.tick()

    # -- reading ----------------------------------------------------------------------------------

    def contains(self, object_id: int) -> tuple[int, ...]:
        return tuple(o.id for o in self.objects.values() if o.parent == object_id and o.id != 0)

    def system_at(self, x: int, y: int) -> FakeObject | None:
        for obj in self.objects.values():
            if obj.type == STAR_SYSTEM and obj.name == f"{x}, {y}":
                return obj
        return None

    def planet_of(self, system: FakeObject) -> FakeObject | None:
        return next(
            (self.objects[c] for c in self.contains(system.id) if self.objects[c].type == PLANET), None
        )

    def regions(self) -> dict[int, int]:
        """Flood fill of colonized or leader-held undestroyed board systems (R5)."""
        members = {}
        for obj in self.objects.values():
            if obj.type != STAR_SYSTEM or ", " not in obj.name or obj.destroyed or obj.id in self.pending:
                continue
            planet = self.planet_of(obj)
            colonized = planet is not None and any(planet.resources.get(r, 0) for r in (4, 5, 6, 7))
            leader = any(
                self.objects[c].type == FLEET and self.objects[c].name.endswith("Leader")
                for c in self.contains(obj.id)
            )
            if colonized or leader:
                x, y = map(int, obj.name.split(", "))
                members[(x, y)] = obj.id
        region_of, seen = {}, set()
        for start in sorted(members):
            if start in seen:
                continue
            component, stack = [], [start]
            seen.add(start)
            while stack:
                x, y = stack.pop()
                component.append(members[(x, y)])
                for step in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                    if step in members and step not in seen:
                        seen.add(step)
                        stack.append(step)
            for system_id in component:
                region_of[system_id] = min(component)
        return region_of

    def static_problem(self, order_type: int, target: int | None) -> str | None:
        """R7a's reason an order cannot succeed whatever else happens this turn (a subset: a
        colonized system for Colonize, an artifact system for Attack), or None."""
        system = self.objects.get(target) if target is not None else None
        if system is None or system.type != STAR_SYSTEM:
            return None
        planet = self.planet_of(system)
        colonized = planet is not None and any(planet.resources.get(r, 0) for r in (4, 5, 6, 7))
        if order_type in (COLONIZE, COLONIZE_MINING) and colonized:
            return f"{system.name} is already colonized"
        if order_type == ATTACK and planet is not None and planet.resources.get(3, 0):
            return f"{system.name} carries an alien artifact"
        return None

    # -- changes ----------------------------------------------------------------------------------

    def touch(self, obj: FakeObject) -> None:
        obj.modtime = self.tick()

    def remove_object(self, object_id: int) -> None:
        """Delete an object; its container's ``contains`` changes, so it gets a new modtime."""
        obj = self.objects.pop(object_id)
        if obj.parent in self.objects:
            self.touch(self.objects[obj.parent])

    def end_turn(self, scores: dict[int, tuple[int, int, int, int, int]] | None = None) -> None:
        """Process a turn: push TimeRemaining(0), bump the Universe, post "Turn complete",
        push TimeRemaining(time_left, reason 1)."""
        with self.lock:
            for connection in list(self.connections):
                connection.push(TimeRemaining(0, 3, self.turn, "", ()))
            self.turn += 1
            self.touch(self.objects[0])
            for player_id in self.players:
                values = (scores or {}).get(player_id, (0, 0, 0, 0, 0))
                self.post(player_id, "Turn complete", score_body(*values))
            self.finished.clear()
            for connection in list(self.connections):
                connection.push(TimeRemaining(self.time_left, 1, self.turn, "", ()))


def score_body(money: int, tech: int, people: int, raw: int, artifacts: int) -> str:
    return (
        f"Your Current Score: \nMoney: {money}\nTechnology: {tech}\nPeople: {people}\n"
        f"Raw Materials: {raw}\nAlien Artifacts: {artifacts}"
    )


DEFAULT_MAP = ("M..A", ".A..", "..M.")  # first line = highest row (ruleset §2.2)


def tae_world(rows: tuple[str, ...] = DEFAULT_MAP) -> FakeWorld:
    """Universe, galaxy, a small board, two players (alice/secret, bob/hunter2), each with a
    home system, a home planet, 2 colonists (merchant, mining), 4 leaders and a bomber; one
    merchant colony at (1, 0); alice's scientist leader on (2, 1); a couple of messages."""
    world = FakeWorld()
    world.add_object(UNIVERSE, "The Universe", 0, size=10**12)
    world.add_object(GALAXY, "The Fertile Galaxy", 0, size=10**11)
    width = max(len(row) for row in rows)
    for y, row in enumerate(reversed(rows)):
        for x, letter in enumerate(row):
            position = (1 + SPACING * x, 1 + SPACING * (y + 1), 0)
            system = world.add_object(
                STAR_SYSTEM,
                f"{x}, {y}",
                1,
                position=position,
                size=60000,
                inhabitable=0 if letter == "M" else 1,
            )
            planet = world.add_object(PLANET, f"Planet {x}, {y}", system.id, position=position)
            world.add_queue(planet, 0, ())
            if letter == "M":
                planet.resources[1] = 1
            elif letter == "A":
                planet.resources[3] = 1
                planet.resources[5] = 1
    assert width
    for name, password in (("alice", "secret"), ("bob", "hunter2")):
        player = world.add_player(name, password)
        home = world.add_object(
            STAR_SYSTEM,
            f"{name}'s System",
            1,
            position=(1 + SPACING * player.id, 1, 0),
            destroyed=1,
        )
        planet = world.add_object(
            PLANET, f"{name}'s Home Planet", home.id, owner=player.id, position=home.position
        )
        world.add_queue(planet, player.id, ())
        world.add_fleet(player.id, "Colonist Fleet", planet.id, "MerchantShip", [COLONIZE])
        world.add_fleet(player.id, "Colonist Fleet", planet.id, "MiningShip", [COLONIZE_MINING])
        for kind in KIND_NAMES:
            world.add_fleet(player.id, f"{kind} Leader", planet.id, f"{kind}LeaderShip", [MOVE])
        world.add_fleet(player.id, "Bomber", planet.id, "Bomber", [ATTACK])
        world.post(player.id, "Welcome", "Welcome to Thousand Parsec!")
    colony = world.planet_of(world.system_at(1, 0))
    colony.resources[4] = 1
    alice_scientist = next(o for o in world.objects.values() if o.name == "Scientist Leader" and o.owner == 1)
    target = world.system_at(2, 1)
    alice_scientist.parent = target.id
    alice_scientist.position = target.position
    return world


# ------------------------------------------------------------------------------------------------
# Views: what a player sees, per version
# ------------------------------------------------------------------------------------------------


def object_view(world: FakeWorld, obj: FakeObject, version: Version, viewer: int):
    queue = world.queues.get(obj.queue) if obj.queue is not None else None
    mine = queue is not None and queue.owner == viewer and viewer != 0
    contains = world.contains(obj.id)
    if version == Version.TP03:
        if obj.type == UNIVERSE:
            extra = UniverseExtra(world.turn)
        elif obj.type == GALAXY:
            extra = GalaxyExtra()
        elif obj.type == STAR_SYSTEM:
            extra = StarSystemExtra()
        elif obj.type == PLANET:
            resources = obj.resources
            if obj.destroyed:
                resources = {**resources, 2: 1}
            extra = PlanetExtra(
                obj.owner or -1,
                tuple(ResourceAmount(r, n, 0, 0) for r, n in sorted(resources.items())),
            )
        else:
            extra = FleetExtra(obj.owner or -1, tuple(ShipCount(d, n) for d, n in obj.ships), 0)
        return Tp03Object(
            id=obj.id,
            name=obj.name,
            size=obj.size,
            position=Vec3(*obj.position),
            velocity=Vec3(0, 0, 0),
            contains=contains,
            order_types=queue.order_types if mine else (),
            orders=len(queue.orders) if mine else 0,
            modtime=obj.modtime,
            extra=extra,
        )
    positional = (PositionParam(*obj.position), VelocityParam(0, 0, 0), SizeParam(obj.size))
    if obj.type == UNIVERSE:
        groups = (positional, (IntegerParam(world.turn),))
    elif obj.type == GALAXY:
        groups = (positional,)
    elif obj.type == STAR_SYSTEM:
        region = world.regions().get(obj.id, 0)
        groups = (
            positional,
            (IntegerParam(obj.inhabitable), IntegerParam(obj.destroyed), IntegerParam(region)),
        )
    else:
        owner = (ReferenceParam(ReferenceType.PLAYER, obj.owner),)
        orders = (OrderQueueParam(obj.queue if mine else 0),)
        if obj.type == PLANET:
            resources = tuple(ResourceAmount(r, n, 0, 0) for r, n in sorted(obj.resources.items()))
            groups = (positional, owner, orders, (ResourceListParam(resources),))
        else:
            ships = tuple(ReferenceQuantity(ReferenceType.DESIGN, d, n) for d, n in obj.ships)
            groups = (positional, owner, orders, (ReferenceQuantityListParam(ships), IntegerParam(0)))
    return Tp04Object(
        id=obj.id,
        type=obj.type,
        name=obj.name,
        description="",
        parent=obj.parent,
        contains=contains,
        modtime=obj.modtime,
        groups=groups,
    )


def design_view(design: FakeDesign, viewer: int) -> Design:
    if design.hidden_from_others and design.owner != viewer:
        return Design(design.id, design.modtime, (1,), "", "", -1, -1, (), "", ())
    return Design(design.id, design.modtime, (1,), design.name, "", 1, design.owner, (), "", ())


RESOURCES = {
    1: "Uninhabitable planet",
    2: "Destroyed Star System",
    3: "Alien Artifact",
    4: "Monetary Asset",
    5: "Technological Advancement",
    6: "Team of People",
    7: "Raw Material",
}


# ------------------------------------------------------------------------------------------------
# One connection
# ------------------------------------------------------------------------------------------------


class FakeConnection:
    """The server side of one connection: ``receive(bytes) -> bytes``; ``push(message)``
    queues a sequence-0 frame (collected by ``take_pushed``, or written by the socket glue).

    Switches for tests: ``single_frames`` answers list requests with lone frames when N = 1
    (old servers), ``refuse`` maps request classes to a Fail code to answer them with,
    ``order_desc_ids_fail`` … see the attributes below.
    """

    def __init__(self, world: FakeWorld) -> None:
        self.world = world
        self.deframer = Deframer()
        self.version: Version | None = None
        self.player: int | None = None
        self.requests: list[Message] = []
        self.pushed = bytearray()
        self.on_push = None  # the socket glue writes pushed frames at once
        self.refuse: dict[type, int] = {}
        self.single_frames = False
        self._id_lists: dict[int, list[IdModtime]] = {}
        self._next_key = 100
        world.connections.append(self)

    def close(self) -> None:
        if self in self.world.connections:
            self.world.connections.remove(self)

    # -- bytes ------------------------------------------------------------------------------------

    def receive(self, data: bytes) -> bytes:
        out = []
        self.deframer.feed(data)
        with self.world.lock:
            while True:
                try:
                    frame = self.deframer.next_frame()
                except ProtocolError as error:
                    out.append(encode_error(error, self.deframer.version))
                    break
                if frame is None:
                    break
                self.version = frame.version
                try:
                    message = decode(frame, order_descs=self.world.order_descs)
                except ProtocolError as error:
                    out.append(encode_error(error, frame.version, frame.sequence))
                    continue
                self.requests.append(message)
                out.append(self._answer(message, frame.sequence))
        return b"".join(out)

    def push(self, message: Message) -> None:
        if self.version is None or self.player is None:
            return
        data = encode(message, self.version, 0)
        if self.on_push is not None:
            self.on_push(data)
        else:
            self.pushed += data

    def take_pushed(self) -> bytes:
        data = bytes(self.pushed)
        self.pushed.clear()
        return data

    def requests_of(self, cls: type) -> list[Message]:
        return [m for m in self.requests if type(m) is cls]

    # -- answers ----------------------------------------------------------------------------------

    def _one(self, message: Message, sequence: int) -> bytes:
        return encode(message, self.version, sequence)

    def _fail(self, code: int, text: str, sequence: int) -> bytes:
        return self._one(Fail(code, text), sequence)

    def _many(self, items: list[Message], sequence: int) -> bytes:
        if self.single_frames and len(items) == 1:
            return self._one(items[0], sequence)
        return encode_reply(items, self.version, sequence)

    def _answer(self, message: Message, sequence: int) -> bytes:
        world = self.world
        cls = type(message)
        if cls in self.refuse:
            return self._fail(self.refuse[cls], "refused for the test", sequence)
        if cls is Connect:
            return self._one(Okay("Welcome to the fake server"), sequence)
        if cls is GetFeatures:
            return self._one(Features((5, 6, 1000)), sequence)
        if cls is Ping:
            return self._one(Okay("pong"), sequence)
        if cls is GetGames:
            game = Game(
                "fake",
                "",
                ("0.3", "0.4"),
                "0.1",
                "fake",
                "TaE",
                "0.01",
                (),
                (GameParam(9, "", world.turn),),
                "",
                1234,
            )
            return self._one(game, sequence)
        if cls is GetTimeRemaining:
            return self._one(TimeRemaining(world.time_left, 0, world.turn, "", ()), sequence)
        if cls is CreateAccount:
            if any(p.name == message.username for p in world.players.values()):
                return self._fail(FailCode.PERMISSION_DENIED, "Account exists", sequence)
            world.add_player(message.username, message.password)
            return self._one(Okay("Account created."), sequence)
        if cls is Login:
            name = message.username.split("@")[0]
            for player in world.players.values():
                if player.name == name and player.password == message.password:
                    self.player = player.id
                    return self._one(Okay("Welcome"), sequence)
            return self._fail(FailCode.FRAME, "Login Error - bad username or password", sequence)
        if self.player is None:
            return self._fail(FailCode.FRAME, "Wrong type of frame in this state", sequence)
        handler = getattr(self, f"_on_{cls.__name__}", None)
        if handler is None:
            return self._fail(FailCode.PROTOCOL, "Did not understand that frame type.", sequence)
        return handler(message, sequence)

    # -- ID lists (§2.1, §6.3) ---------------------------------------------------------------------

    def _id_list(self, message: GetIDSequence, entries: list[IdModtime], reply_cls, sequence):
        if message.key == -1:
            key = self._next_key
            self._next_key += 1
            self._id_lists = {key: sorted(entries)}
        elif message.key in self._id_lists:
            key = message.key
        else:
            return self._fail(FailCode.FRAME, "Invalid sequence key", sequence)
        snapshot = self._id_lists[key]
        start, amount = message.start, message.amount
        if start > len(snapshot):
            return self._fail(FailCode.NO_SUCH_THING, "Start number too high", sequence)
        end = len(snapshot) if amount == -1 else min(len(snapshot), start + amount)
        batch = tuple(snapshot[start:end])
        since = message.since if self.version == Version.TP04 else -1
        reply = reply_cls(key, len(snapshot) - start - len(batch), batch, since)
        return self._one(reply, sequence)

    def _on_GetObjectIDs(self, message, sequence):
        entries = [IdModtime(o.id, o.modtime) for o in self.world.objects.values()]
        return self._id_list(message, entries, ObjectIDs, sequence)

    def _on_GetOrderDescIDs(self, message, sequence):
        entries = [IdModtime(d.id, d.modtime) for d in self.world.order_descs.values()]
        return self._id_list(message, entries, OrderDescIDs, sequence)

    def _on_GetObjectDescIDs(self, message, sequence):
        entries = [IdModtime(d.id, d.modtime) for d in self.world.object_descs.values()]
        return self._id_list(message, entries, ObjectDescIDs, sequence)

    def _visible_queues(self) -> list[FakeQueue]:
        return [q for q in self.world.queues.values() if q.id == 0 or q.owner == self.player]

    def _on_GetOrderQueueIDs(self, message, sequence):
        entries = [IdModtime(q.id, q.modtime) for q in self._visible_queues()]
        return self._id_list(message, entries, OrderQueueIDs, sequence)

    def _on_GetBoardIDs(self, message, sequence):
        entries = [IdModtime(self.player, self.world.board_modtimes[self.player])]
        return self._id_list(message, entries, BoardIDs, sequence)

    def _on_GetPlayerIDs(self, message, sequence):
        entries = [IdModtime(p.id, p.modtime) for p in self.world.players.values()]
        return self._id_list(message, entries, PlayerIDs, sequence)

    def _on_GetDesignIDs(self, message, sequence):
        entries = [IdModtime(d.id, d.modtime) for d in self.world.designs.values()]
        return self._id_list(message, entries, DesignIDs, sequence)

    def _on_GetResourceIDs(self, message, sequence):
        return self._id_list(message, [IdModtime(r, 1) for r in RESOURCES], ResourceIDs, sequence)

    def _on_GetCategoryIDs(self, message, sequence):
        return self._id_list(message, [IdModtime(1, 1)], CategoryIDs, sequence)

    def _on_GetComponentIDs(self, message, sequence):
        return self._id_list(message, [], ComponentIDs, sequence)

    def _on_GetPropertyIDs(self, message, sequence):
        return self._id_list(message, [], PropertyIDs, sequence)

    # -- items ------------------------------------------------------------------------------------

    def _items(self, ids, make, sequence, what: str, reftype: int) -> bytes:
        if not ids:
            return self._fail(FailCode.NO_SUCH_THING, "You didn't ask for any data", sequence)
        items = []
        for item_id in ids:
            item = make(item_id)
            if item is None:
                item = Fail(FailCode.NO_SUCH_THING, f"No such {what}", ((reftype, item_id),))
            items.append(item)
        return self._many(items, sequence)

    def _on_GetObjectsByID(self, message, sequence):
        world = self.world

        def make(object_id):
            obj = world.objects.get(object_id)
            return object_view(world, obj, self.version, self.player) if obj else None

        return self._items(message.ids, make, sequence, "object", 1)

    def _on_GetObjectDesc(self, message, sequence):
        return self._items(message.ids, self.world.object_descs.get, sequence, "object type", 12)

    def _on_GetOrderDesc(self, message, sequence):
        return self._items(message.ids, self.world.order_descs.get, sequence, "order type", 2)

    def _on_GetOrderQueue(self, message, sequence):
        def make(queue_id):
            queue = self.world.queues.get(queue_id)
            if queue is None or (queue.id != 0 and queue.owner != self.player):
                return None
            return OrderQueue(queue.id, queue.modtime, 0xFFFFFFFF, len(queue.orders), queue.order_types)

        return self._items(message.ids, make, sequence, "order queue", 13)

    def _on_GetBoards(self, message, sequence):
        def make(board_id):
            board_id = board_id or self.player
            if board_id != self.player:
                return None
            return Board(
                board_id,
                "Messages",
                "Your board",
                len(self.world.messages[board_id]),
                self.world.board_modtimes[board_id],
            )

        return self._items(message.ids, make, sequence, "board", 4)

    def _on_GetMessage(self, message, sequence):
        board_id = message.id or self.player
        if board_id != self.player:
            return self._fail(FailCode.NO_SUCH_THING, "No such board", sequence)
        messages = self.world.messages[board_id]

        def make(slot):
            if not 0 <= slot < len(messages):
                return None
            subject, body, turn, references = messages[slot]
            return BoardMessage(board_id, slot, subject, body, turn, references)

        return self._items(message.slots, make, sequence, "message", 5)

    def _on_GetPlayer(self, message, sequence):
        def make(player_id):
            player = self.world.players.get(player_id or self.player)
            return Player(player.id, player.name, player.race, player.modtime) if player else None

        return self._items(message.ids, make, sequence, "player", 7)

    def _on_GetDesign(self, message, sequence):
        def make(design_id):
            design = self.world.designs.get(design_id)
            return design_view(design, self.player) if design else None

        return self._items(message.ids, make, sequence, "design", 9)

    def _on_GetResource(self, message, sequence):
        def make(resource_id):
            name = RESOURCES.get(resource_id)
            return Resource(resource_id, name, name + "s", "", "", "", 0, 0, 1) if name else None

        return self._items(message.ids, make, sequence, "resource", 6)

    def _on_GetCategory(self, message, sequence):
        return self._items(
            message.ids,
            lambda i: Category(1, 1, "Ships", "") if i == 1 else None,
            sequence,
            "category",
            8,
        )

    def _on_GetComponent(self, message, sequence):
        return self._items(message.ids, lambda i: None, sequence, "component", 10)

    def _on_GetProperty(self, message, sequence):
        return self._items(message.ids, lambda i: None, sequence, "property", 11)

    # -- orders -----------------------------------------------------------------------------------

    def _queue_for(self, holder: int) -> FakeQueue | None:
        if self.version == Version.TP03:
            obj = self.world.objects.get(holder)
            queue = self.world.queues.get(obj.queue) if obj and obj.queue is not None else None
        else:
            queue = self.world.queues.get(holder)
        if queue is None or queue.owner != self.player or queue.id == 0:
            return None
        return queue

    def _order(self, queue: FakeQueue, holder: int, slot: int) -> Order:
        order_type, target = queue.orders[slot]
        desc = self.world.order_descs[order_type]
        args = tuple(ObjectArg(target) for _ in desc.params)
        return Order(holder, slot, order_type, args, 1)

    def _changed(self, queue: FakeQueue) -> None:
        queue.modtime = self.world.tick()
        self.world.touch(self.world.objects[queue.object_id])

    def _on_GetOrder(self, message, sequence):
        queue = self._queue_for(message.id)
        if queue is None:
            return self._fail(FailCode.NO_SUCH_THING, "No such OrderQueue", sequence)
        items = []
        for slot in message.slots:
            if 0 <= slot < len(queue.orders):
                items.append(self._order(queue, message.id, slot))
            else:
                items.append(Fail(FailCode.UNAVAILABLE_TEMPORARILY, "Could not get Order"))
        return self._many(items, sequence)

    def _check_order(self, message, sequence, probe: bool):
        queue = self._queue_for(message.id)
        if queue is None:
            return None, self._fail(FailCode.NO_SUCH_THING, "No such Object Order Queue", sequence)
        if message.type not in queue.order_types:
            code = FailCode.UNAVAILABLE_PERMANENTLY if probe else FailCode.UNAVAILABLE_TEMPORARILY
            return None, self._fail(code, "Not allowed to add that order type.", sequence)
        target = message.args[0].object_id if message.args else None
        if target is not None and target not in self.world.objects:
            return None, self._fail(FailCode.NO_SUCH_THING, "No such target", sequence)
        reason = self.world.static_problem(message.type, target)
        if reason is not None:  # R7a: refused now, with the reason
            return None, self._fail(FailCode.UNAVAILABLE_TEMPORARILY, reason, sequence)
        return (queue, target), None

    def _on_InsertOrder(self, message, sequence):
        checked, failure = self._check_order(message, sequence, probe=False)
        if failure:
            return failure
        queue, target = checked
        slot = len(queue.orders) if message.slot == -1 else message.slot
        queue.orders.insert(slot, (message.type, target))
        self._changed(queue)
        if self.version == Version.TP03:
            return self._one(Okay("Order Added"), sequence)
        return self._one(self._order(queue, message.id, slot), sequence)

    def _on_ProbeOrder(self, message, sequence):
        checked, failure = self._check_order(message, sequence, probe=True)
        if failure:
            return failure
        return self._one(Order(message.id, message.slot, message.type, message.args, 1), sequence)

    def _on_RemoveOrder(self, message, sequence):
        queue = self._queue_for(message.id)
        if queue is None:
            return self._fail(FailCode.NO_SUCH_THING, "No such OrderQueue", sequence)
        items = []
        for slot in message.slots:
            if 0 <= slot < len(queue.orders):
                del queue.orders[slot]
                items.append(Okay("Order removed"))
            else:
                items.append(Fail(FailCode.UNAVAILABLE_TEMPORARILY, "Could not remove Order"))
        self._changed(queue)
        return self._many(items, sequence)

    def _on_FinishedTurn(self, message, sequence):
        self.world.finished.add(self.player)
        return self._one(Okay("Thanks for letting me know you have finished your turn."), sequence)


# ------------------------------------------------------------------------------------------------
# Socket glue
# ------------------------------------------------------------------------------------------------


class FakeSocket:
    """A ``FakeConnection`` behind the socket methods ``BlockingConnection`` uses. What the
    server answers is handed out ``chunk`` bytes per ``recv`` (to test any chunking); ``recv``
    with nothing to give times out at once (nothing else could arrive)."""

    def __init__(self, connection: FakeConnection, chunk: int = 1 << 16) -> None:
        self.connection = connection
        self.chunk = chunk
        self.inbox = bytearray()
        self.closed = False
        connection.on_push = self.inbox.extend
        self.sent = bytearray()

    def sendall(self, data: bytes) -> None:
        if self.closed:
            raise OSError("socket closed")
        self.sent += data
        self.inbox += self.connection.receive(data)

    def recv(self, size: int) -> bytes:
        if not self.inbox:
            if self.closed:
                return b""
            raise TimeoutError("nothing to read")
        size = min(size, self.chunk)
        data = bytes(self.inbox[:size])
        del self.inbox[:size]
        return data

    def settimeout(self, value) -> None:
        pass

    def setsockopt(self, *args) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        self.connection.close()


class ThreadedFakeServer:
    """Real TCP on 127.0.0.1 (a free port), one thread per connection, all sharing one world.

    Use as a context manager; ``port`` is the listening port; ``connections`` the
    ``FakeConnection`` of every client so far.
    """

    def __init__(self, world: FakeWorld, port: int = 0) -> None:
        self.world = world
        self.connections: list[FakeConnection] = []
        self._sockets: list[socket.socket] = []
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                connection = FakeConnection(server.world)
                server.connections.append(connection)
                server._sockets.append(self.request)
                send_lock = threading.Lock()

                def write(data: bytes) -> None:
                    with send_lock:
                        try:
                            self.request.sendall(data)
                        except OSError:
                            pass

                connection.on_push = write
                try:
                    while True:
                        try:
                            data = self.request.recv(65536)
                        except OSError:
                            return
                        if not data:
                            return
                        if server.silent:
                            continue
                        write(connection.receive(data))
                finally:
                    connection.close()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.silent = False  # True: read requests and never answer (timeout tests)
        self._server = Server(("127.0.0.1", port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> ThreadedFakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        """Stop listening and close every connection, as a server that stops does."""
        self._server.shutdown()
        self._server.server_close()
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)
