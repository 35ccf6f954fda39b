"""Protocol messages for what one player sees of a game, with encoded bodies cached by modtime.

Everything here reads a `GameSnapshot` and the ruleset's view of it (`ruleset.visible_to` decides what
is hidden, R27): an opponent's colonist design is sent without name, components or properties,
and an order queue's id, orders and order types only to its owner. An object's body is encoded
once per (modtime, version, owner-or-not) and reused by every session; a request's frames are
joined into one write by the session.
"""

from __future__ import annotations

from protocol import (
    Board,
    BoardMessage,
    Design,
    ObjectArg,
    Order,
    OrderQueue,
    Player,
    ReferenceType,
    Version,
    encode_body,
)
from protocol.objects import (
    FleetExtra,
    GalaxyExtra,
    IntegerParam,
    ObjectParam,
    OrderQueueParam,
    PlanetExtra,
    PositionParam,
    ReferenceParam,
    ReferenceQuantityListParam,
    ResourceListParam,
    SizeParam,
    StarSystemExtra,
    Tp03Extra,
    Tp03Object,
    Tp04Object,
    UniverseExtra,
    VelocityParam,
)
from protocol.records import IdCount, IdText, Reference, ReferenceQuantity, ResourceAmount, ShipCount, Vec3
from ruleset import Message, OrderType, Role, allowed_order_types
from ruleset.messages import MentionKind
from server.model.snapshot import GameSnapshot
from server.views.own_seat import own_seat_note
from server.views.tp.catalogue import BOMBS, PASSENGER_NAMES, PASSENGERS, SHIPS_CATEGORY, WEAPON
from server.views.tp.frame_cache import FrameCache
from server.views.tp.player_views import player_view
from server.views.tp.universe import GALAXY, PLANET, STAR_SYSTEM, UNIVERSE, SpaceObject, universe_of

UNLIMITED_SLOTS = 0xFFFFFFFF
EMPTY_QUEUE_MODTIME = 1
HIDDEN_DESIGN_NAME = "Unknown design"


# -- objects --------------------------------------------------------------------------------


def object_body(
    snapshot: GameSnapshot, cache: FrameCache, object_id: int, viewer: int, version: Version
) -> bytes | None:
    """The encoded Object body for `viewer`, or None when there is no such object."""
    obj = universe_of(snapshot).get(object_id)
    if obj is None:
        return None
    modtime = snapshot.modtime(("object", object_id))
    owner_view = obj.has_queue and obj.owner == viewer
    key = ("object", object_id, version, owner_view)
    return cache.get(
        key,
        modtime,
        lambda: encode_body(object_message(snapshot, obj, owner_view, version, modtime), version),
    )


def object_message(
    snapshot: GameSnapshot, obj: SpaceObject, owner_view: bool, version: Version, modtime: int
):
    if version == Version.TP03:
        return _tp03_object(snapshot, obj, owner_view, modtime)
    return _tp04_object(obj, owner_view, modtime)


def _tp03_object(snapshot: GameSnapshot, obj: SpaceObject, owner_view: bool, modtime: int) -> Tp03Object:
    extra: Tp03Extra
    if obj.type == UNIVERSE:
        extra = UniverseExtra(obj.turn)
    elif obj.type == GALAXY:
        extra = GalaxyExtra()
    elif obj.type == STAR_SYSTEM:
        extra = StarSystemExtra()
    elif obj.type == PLANET:
        extra = PlanetExtra(obj.owner or -1, tuple(ResourceAmount(r, n, 0, 0) for r, n in obj.resources))
    else:
        extra = FleetExtra(obj.owner or -1, tuple(ShipCount(d, n) for d, n in obj.ships), 0)
    order_types: tuple[int, ...] = ()
    orders = 0
    if owner_view:
        order_types = tuple(int(t) for t in allowed_order_types(snapshot.state, obj.id))
        orders = len(snapshot.queue(obj.id))
    return Tp03Object(
        obj.id,
        obj.name,
        obj.size,
        Vec3(*obj.position),
        Vec3(0, 0, 0),
        obj.children,
        order_types,
        orders,
        modtime,
        extra,
    )


def _tp04_object(obj: SpaceObject, owner_view: bool, modtime: int) -> Tp04Object:
    positional: tuple[ObjectParam, ...] = (
        PositionParam(*obj.position),
        VelocityParam(0, 0, 0),
        SizeParam(obj.size),
    )
    groups: tuple[tuple[ObjectParam, ...], ...]
    if obj.type == UNIVERSE:
        groups = (positional, (IntegerParam(obj.turn),))
    elif obj.type == GALAXY:
        groups = (positional,)
    elif obj.type == STAR_SYSTEM:
        groups = (
            positional,
            (IntegerParam(obj.inhabitable), IntegerParam(obj.destroyed), IntegerParam(obj.region)),
        )
    else:
        owner = (ReferenceParam(ReferenceType.PLAYER, obj.owner),)
        queue = (OrderQueueParam(obj.id if owner_view else 0),)
        if obj.type == PLANET:
            resources = ResourceListParam(tuple(ResourceAmount(r, n, 0, 0) for r, n in obj.resources))
            groups = (positional, owner, queue, (resources,))
        else:
            ships = ReferenceQuantityListParam(
                tuple(ReferenceQuantity(ReferenceType.DESIGN, d, n) for d, n in obj.ships)
            )
            groups = (positional, owner, queue, (ships, IntegerParam(0)))
    return Tp04Object(obj.id, obj.type, obj.name, "", obj.parent, obj.children, modtime, groups)


# -- order queues and orders ----------------------------------------------------------------


def can_see_queue(snapshot: GameSnapshot, queue_id: int, viewer: int) -> bool:
    """Queue 0 is everybody's empty queue; any other queue is its owner's alone (§4.5)."""
    if queue_id == 0:
        return True
    obj = universe_of(snapshot).get(queue_id)
    return obj is not None and obj.has_queue and obj.owner == viewer


def queue_modtime(snapshot: GameSnapshot, queue_id: int) -> int:
    if queue_id == 0:
        return EMPTY_QUEUE_MODTIME
    return snapshot.modtime(("queue", queue_id))


def order_queue_message(snapshot: GameSnapshot, queue_id: int) -> OrderQueue:
    if queue_id == 0:
        return OrderQueue(0, EMPTY_QUEUE_MODTIME, UNLIMITED_SLOTS, 0, ())
    types = tuple(int(t) for t in allowed_order_types(snapshot.state, queue_id))
    return OrderQueue(
        queue_id, queue_modtime(snapshot, queue_id), UNLIMITED_SLOTS, len(snapshot.queue(queue_id)), types
    )


def order_message(queue_or_object: int, slot: int, order_type: int, target: int, cls=Order) -> Order:
    """An order as the server shows it: one turn to run, no resources, the target as an Object."""
    args = () if order_type == OrderType.REINFORCE else (ObjectArg(target),)
    return cls(queue_or_object, slot, order_type, args, 1, ())


# -- designs --------------------------------------------------------------------------------


def design_message(snapshot: GameSnapshot, fleet_id: int, viewer: int) -> Design | None:
    """A fleet's design. An opponent's colonist design shows only that it exists (R27)."""
    seen = player_view(snapshot, viewer).fleets.get(fleet_id)
    if seen is None:
        return None
    modtime = snapshot.modtime(("design", fleet_id))
    if seen.role is Role.COLONIST and seen.kind is None:
        return Design(seen.id, modtime, (SHIPS_CATEGORY,), HIDDEN_DESIGN_NAME, "", 1, seen.owner, (), "", ())
    fleet = snapshot.state.fleets[fleet_id]
    if fleet.role is Role.BOMBER:
        component, passengers = WEAPON, None
        description = "A bomber: destroys a star system"
    else:
        assert fleet.kind is not None  # colonists and leaders have a kind
        component = (fleet.kind + 1) if fleet.role is Role.COLONIST else (fleet.kind + 5)
        passengers = PASSENGER_NAMES[component - 1]
        description = f"Carries {passengers}"
    properties = ((BOMBS, "1"),) if passengers is None else ((PASSENGERS, passengers),)
    return Design(
        fleet.id,
        modtime,
        (SHIPS_CATEGORY,),
        fleet.design_name,
        description,
        1,
        fleet.owner,
        (IdCount(component, 1),),
        "",
        tuple(IdText(p, t) for p, t in properties),
    )


# -- players and boards ---------------------------------------------------------------------


# The Player frame's race of a player an operator removed (every other player is "Human"): the
# one thing on the wire that tells clients who no longer plays (`tae-client status` shows it).
REMOVED_RACE = "Removed"
PLAYING_RACE = "Human"
# A computer player's race, for everyone: "Computer (hard)" (its name says so too by default).
COMPUTER_RACE = "Computer ({level})"


def player_message(snapshot: GameSnapshot, player_id: int, viewer: int | None = None) -> Player:
    """A player as `viewer` sees them. The race is "Removed" for a removed player; the player's
    own frame, while the stand-in plays their seat, carries instead the note on how to take it
    back (`server.views.own_seat`): Thousand Parsec has no frame for a seat, and the Player a
    client fetches of itself (GetPlayer 0) is what every client reads anyway, whereas a board
    message would be a write made by a read. Everyone else's frame of them stays "Human"; a
    computer player's is "Computer (LEVEL)" for everyone."""
    player = snapshot.state.player(player_id)
    seat = snapshot.attendance.get(player_id)
    note = own_seat_note(snapshot, player_id) if viewer == player_id else None
    if player_id in snapshot.removed_players:
        race = REMOVED_RACE
    elif seat is not None and seat.level is not None:
        race = COMPUTER_RACE.format(level=seat.level.value)
    else:
        race = note or PLAYING_RACE
    return Player(player.id, player.name, race, snapshot.modtime(("player", player_id)))


def board_modtime(snapshot: GameSnapshot, player_id: int) -> int:
    return snapshot.modtime(("board", player_id))


def board_frame(snapshot: GameSnapshot, player_id: int) -> Board:
    """A player's own board (the only one a player sees)."""
    name = snapshot.state.player(player_id).name
    return Board(
        player_id,
        f"Messages for {name}",
        "Your personal message board",
        len(snapshot.board(player_id)),
        board_modtime(snapshot, player_id),
    )


def board_message_frame(snapshot: GameSnapshot, player_id: int, slot: int) -> BoardMessage | None:
    board = snapshot.board(player_id)
    if not 0 <= slot < len(board):
        return None
    message = board[slot].message
    return BoardMessage(
        player_id, slot, message.subject, message.body, message.turn, message_references(message)
    )


# What a message names, as TP references (protocol.md §7.2): systems and fleets are Objects.
_REFERENCE_TYPES = {
    MentionKind.SYSTEM: ReferenceType.OBJECT,
    MentionKind.FLEET: ReferenceType.OBJECT,
    MentionKind.PLAYER: ReferenceType.PLAYER,
}


def message_references(message: Message) -> tuple[Reference, ...]:
    """The message's mentions (`ruleset.Message.mentions`) in order, as TP references."""
    return tuple(Reference(_REFERENCE_TYPES[m.kind], m.id) for m in message.mentions)
