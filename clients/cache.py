"""A local copy of what the server shows one player, refreshed by downloading only what changed.

The cache protocol (spec/protocol.md §5.5, §6.3): every kind of thing has a "Get…IDs" request
answered with (id, modtime) pairs. ``Cache.update()`` lists each kind, pages through the list
(key −1 and amount 0 first, to learn the key and the total; then pages of ``page_size``, all
pipelined), downloads only the ids that are new or whose modtime changed, and drops the ids that
are no longer listed. TP04's ``from`` filter is left at −1 ("everything"), as every client does:
only a full list shows what vanished.

What is kept, per version:

=================  ===============================  ======================================
kind               TP03                             TP04
=================  ===============================  ======================================
order_descs        GetOrderDescIDs → GetOrderDesc   same
object_descs       (none on the wire)               GetObjectDescIDs → GetObjectDesc, and any
                                                    type still missing by GetObjectDesc
objects            GetObjectIDs → GetObjectsByID    same
orders             per object: GetOrder(object id,  per queue: GetOrder(queue id,
                   0..Object.orders−1), keyed by    0..OrderQueue.num_orders−1), keyed by
                   object id                        queue id
order_queues       –                                GetOrderQueueIDs → GetOrderQueue
boards, messages   GetBoardIDs → GetBoards, then GetMessage(board, 0..messages−1) per board
categories …       Categories, Designs, Components, Properties, Resources: IDs then Get
players            probe GetPlayer(1), (2), … until  GetPlayerIDs → GetPlayer
                   the first Fail (CL3 does this)
me                 GetPlayer(0): the logged-in player
=================  ===============================  ======================================

Every method that talks to the server is a *plan* (``clients.plans``): run it with a
transport's ``run``, e.g. ``connection.run(cache.update())``. The cache itself does no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol import (
    AnyObject,
    Board,
    BoardMessage,
    Category,
    Component,
    Design,
    Fail,
    Features,
    Game,
    GetBoardIDs,
    GetBoards,
    GetCategory,
    GetCategoryIDs,
    GetComponent,
    GetComponentIDs,
    GetDesign,
    GetDesignIDs,
    GetFeatures,
    GetGames,
    GetMessage,
    GetObjectDesc,
    GetObjectDescIDs,
    GetObjectIDs,
    GetObjectsByID,
    GetOrder,
    GetOrderDesc,
    GetOrderDescIDs,
    GetOrderQueue,
    GetOrderQueueIDs,
    GetPlayer,
    GetPlayerIDs,
    GetProperty,
    GetPropertyIDs,
    GetResource,
    GetResourceIDs,
    GetTimeRemaining,
    Message,
    ObjectDesc,
    Order,
    OrderDesc,
    OrderQueue,
    OrderQueueParam,
    Player,
    Property,
    Resource,
    TimeRemaining,
    Tp03Object,
    Tp04Object,
    Version,
)

from .errors import ClientError, MalformedReply, RequestFailed
from .plans import Plan

__all__ = ["Cache", "UpdateStats", "KINDS"]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of cached thing: where it lives on the cache and how it is listed and fetched.

    ``required``: a Fail on the ID list is an error of the whole update (objects, orders,
    boards…); otherwise the kind is skipped and the Fail recorded in ``UpdateStats.errors``.
    """

    name: str
    list_request: type
    get_request: type
    item: type | tuple[type, ...]
    versions: tuple[Version, ...] = (Version.TP03, Version.TP04)
    required: bool = True


KINDS: tuple[Kind, ...] = (
    Kind("order_descs", GetOrderDescIDs, GetOrderDesc, OrderDesc),
    Kind("object_descs", GetObjectDescIDs, GetObjectDesc, ObjectDesc, (Version.TP04,), False),
    Kind("objects", GetObjectIDs, GetObjectsByID, (Tp03Object, Tp04Object)),
    Kind("order_queues", GetOrderQueueIDs, GetOrderQueue, OrderQueue, (Version.TP04,)),
    Kind("boards", GetBoardIDs, GetBoards, Board),
    Kind("categories", GetCategoryIDs, GetCategory, Category, required=False),
    Kind("designs", GetDesignIDs, GetDesign, Design, required=False),
    Kind("components", GetComponentIDs, GetComponent, Component, required=False),
    Kind("properties", GetPropertyIDs, GetProperty, Property, required=False),
    Kind("players", GetPlayerIDs, GetPlayer, Player, (Version.TP04,)),
    Kind("resources", GetResourceIDs, GetResource, Resource, required=False),
)
_KIND = {kind.name: kind for kind in KINDS}


@dataclass(slots=True)
class UpdateStats:
    """What an update did: per kind, how many items were downloaded and dropped, and the
    problems that did not stop the update (a Fail for one item, an optional list refused)."""

    fetched: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def count(self, kind: str, fetched: int = 0, dropped: int = 0) -> None:
        if fetched:
            self.fetched[kind] = self.fetched.get(kind, 0) + fetched
        if dropped:
            self.dropped[kind] = self.dropped.get(kind, 0) + dropped

    @property
    def changed(self) -> bool:
        return bool(self.fetched or self.dropped)


class Cache:
    """Everything one player has downloaded; see the module docstring.

    Items are the decoded protocol messages (``Tp03Object``/``Tp04Object``, ``OrderDesc``,
    ``OrderQueue``, ``Board``, ``BoardMessage``, ``Player``, ``Design``, …) in dicts by id.
    ``orders`` maps an order holder (TP03 object id, TP04 queue id) to its orders by slot
    (``None`` for a slot the server would not give).
    """

    def __init__(self, version: Version, *, page_size: int = 500, batch_size: int = 100) -> None:
        self.version = Version(version)
        self.page_size = page_size
        self.batch_size = batch_size
        self.objects: dict[int, AnyObject] = {}
        self.object_descs: dict[int, ObjectDesc] = {}
        self.order_descs: dict[int, OrderDesc] = {}
        self.order_queues: dict[int, OrderQueue] = {}
        self.orders: dict[int, tuple[Order | None, ...]] = {}
        self.boards: dict[int, Board] = {}
        self.messages: dict[int, tuple[BoardMessage, ...]] = {}
        self.categories: dict[int, Category] = {}
        self.designs: dict[int, Design] = {}
        self.components: dict[int, Component] = {}
        self.properties: dict[int, Property] = {}
        self.resources: dict[int, Resource] = {}
        self.players: dict[int, Player] = {}
        self.me: Player | None = None
        self.features: tuple[int, ...] = ()
        self.games: tuple[Game, ...] = ()
        self.time_remaining: TimeRemaining | None = None
        #: The modtime each cached item had when downloaded, per kind (what IDs are compared to).
        self.modtimes: dict[str, dict[int, int]] = {kind.name: {} for kind in KINDS}
        #: Bumped whenever anything cached changes, so derived views can be memoised.
        self.generation = 0
        self._parents: dict[int, int] | None = None

    # ----------------------------------------------------------------------------------------
    # Reading
    # ----------------------------------------------------------------------------------------

    @property
    def player_id(self) -> int | None:
        """The logged-in player's id (from GetPlayer(0)), if known."""
        return self.me.id if self.me is not None else None

    def parent_of(self, object_id: int) -> int | None:
        """The container of an object, from the ``contains`` lists (TP03 has no parent field)."""
        if self._parents is None:
            parents: dict[int, int] = {}
            for obj in self.objects.values():
                for child in obj.contains:
                    parents[child] = obj.id
            self._parents = parents
        return self._parents.get(object_id)

    def order_holder(self, object_id: int) -> int | None:
        """The id an object's orders are addressed by: the object id in TP03, the order-queue
        id of its OrderQueue parameter in TP04 (None if it has none, or 0: not ours)."""
        obj = self.objects.get(object_id)
        if obj is None:
            return None
        if isinstance(obj, Tp03Object):
            return obj.id
        for group in obj.groups:
            for param in group:
                if isinstance(param, OrderQueueParam):
                    return param.queue_id or None
        return None

    def orders_of(self, object_id: int) -> tuple[Order | None, ...]:
        holder = self.order_holder(object_id)
        return self.orders.get(holder, ()) if holder is not None else ()

    def allowed_order_types(self, object_id: int) -> tuple[int, ...]:
        """Order types the player may give this object: TP03 ``Object.order_types``, TP04
        ``OrderQueue.order_types`` of its queue."""
        obj = self.objects.get(object_id)
        if obj is None:
            return ()
        if isinstance(obj, Tp03Object):
            return obj.order_types
        holder = self.order_holder(object_id)
        queue = self.order_queues.get(holder) if holder is not None else None
        return queue.order_types if queue is not None else ()

    def note(self, message: Message) -> None:
        """Take in a message the server pushed (TimeRemaining) or one a caller fetched."""
        self.generation += 1
        if isinstance(message, TimeRemaining):
            self.time_remaining = message
        elif isinstance(message, (Tp03Object, Tp04Object)):
            self._store_object(message)
        elif isinstance(message, Features):
            self.features = message.features

    # ----------------------------------------------------------------------------------------
    # Plans
    # ----------------------------------------------------------------------------------------

    def update(self) -> Plan[UpdateStats]:
        """Download everything that changed since the last update (the order of CL4's
        ``Cache.update``: features, order descriptions, objects, orders, boards and messages,
        catalogues, players, the logged-in player, the time remaining)."""
        stats = UpdateStats()
        try:
            features = yield GetFeatures()
            self.features = features.features
        except RequestFailed as error:
            stats.errors.append(str(error))
        yield from self._sync("order_descs", stats)
        if self.version == Version.TP04:
            yield from self._sync("object_descs", stats)
        changed_objects = yield from self._sync("objects", stats)
        if self.version == Version.TP04:
            yield from self._fetch_missing_object_descs(stats)
            changed_queues = yield from self._sync("order_queues", stats)
            yield from self._fetch_orders(
                [(qid, self.order_queues[qid].num_orders) for qid in changed_queues], stats
            )
            self._forget_orders(set(self.order_queues))
        else:
            yield from self._fetch_orders(
                [(oid, _order_count(self.objects[oid])) for oid in changed_objects], stats
            )
            self._forget_orders(set(self.objects))
        changed_boards = yield from self._sync("boards", stats)
        yield from self._fetch_messages(changed_boards, stats)
        for name in ("categories", "designs", "components", "properties"):
            yield from self._sync(name, stats)
        if self.version == Version.TP04:
            yield from self._sync("players", stats)
        else:
            yield from self._probe_players(stats)
        yield from self._sync("resources", stats)
        yield from self._fetch_me(stats)
        yield from self.fetch_time_remaining()
        self.generation += 1
        return stats

    def fetch_time_remaining(self) -> Plan[TimeRemaining]:
        reply = yield GetTimeRemaining()
        self.time_remaining = reply
        self.generation += 1
        return reply

    def fetch_games(self) -> Plan[tuple[Game, ...]]:
        """TP04 GetGames (TP03 has no such frame: an empty tuple)."""
        if self.version == Version.TP03:
            return ()
        reply = yield GetGames()
        self.games = tuple(game for game in reply if isinstance(game, Game))
        return self.games

    def refresh_objects(self, object_ids: Iterable[int]) -> Plan[list[AnyObject]]:
        """Download these objects again (whatever their modtime) and their orders; drop the ones
        the server no longer shows. Used after an order changes and to watch the turn counter."""
        ids = tuple(dict.fromkeys(object_ids))
        if not ids:
            return []
        reply = yield GetObjectsByID(ids)
        fresh = []
        for object_id, item in zip(ids, reply):
            if isinstance(item, (Tp03Object, Tp04Object)):
                self._store_object(item)
                fresh.append(item)
            elif isinstance(item, Fail):
                self._drop("objects", object_id)
        stats = UpdateStats()
        if self.version == Version.TP03:
            yield from self._fetch_orders([(obj.id, _order_count(obj)) for obj in fresh], stats)
        else:
            holders = [h for h in (self.order_holder(obj.id) for obj in fresh) if h is not None]
            if holders:
                queues = yield GetOrderQueue(tuple(holders))
                refreshed = []
                for _holder, queue in zip(holders, queues):
                    if isinstance(queue, OrderQueue):
                        self.order_queues[queue.id] = queue
                        self.modtimes["order_queues"][queue.id] = queue.modtime
                        refreshed.append((queue.id, queue.num_orders))
                yield from self._fetch_orders(refreshed, stats)
        self.generation += 1
        return fresh

    # ----------------------------------------------------------------------------------------
    # The pieces of an update
    # ----------------------------------------------------------------------------------------

    def list_ids(self, request_class: type) -> Plan[dict[int, int]]:
        """Every (id → modtime) of one "Get…IDs" list, paged as in spec §6.3: first
        (key −1, start 0, amount 0) for the key and the total, then pages of ``page_size``
        sent together. If the list changes under us (a Fail, or counts that do not add up)
        it is listed again, once."""
        for attempt in range(2):
            first = yield request_class(key=-1, start=0, amount=0, since=-1)
            found = {entry.id: entry.modtime for entry in first.ids}
            start = len(first.ids)
            total = start + max(first.remaining, 0)
            pages = [
                request_class(
                    key=first.key,
                    start=offset,
                    amount=min(self.page_size, total - offset),
                    since=-1,
                )
                for offset in range(start, total, self.page_size)
            ]
            if not pages:
                return found
            outcomes = yield pages
            consistent = True
            for page, outcome in zip(pages, outcomes):
                if isinstance(outcome, ClientError):
                    if attempt:
                        raise outcome
                    consistent = False
                    break
                found.update((entry.id, entry.modtime) for entry in outcome.ids)
                if outcome.remaining != total - page.start - len(outcome.ids):
                    consistent = False
            if consistent and len(found) == total:
                return found
        return found  # the server keeps changing its mind: take what it said last

    def _sync(self, name: str, stats: UpdateStats) -> Plan[list[int]]:
        """List one kind, fetch what is new or changed, drop what vanished; return the ids
        downloaded."""
        kind = _KIND[name]
        try:
            listed = yield from self.list_ids(kind.list_request)
        except RequestFailed as error:
            if kind.required:
                raise
            stats.errors.append(f"{name}: {error}")
            return []
        store: dict = getattr(self, name)
        known = self.modtimes[name]
        vanished = [item_id for item_id in store if item_id not in listed]
        for item_id in vanished:
            self._drop(name, item_id)
        stats.count(name, dropped=len(vanished))
        wanted = [
            item_id
            for item_id, modtime in listed.items()
            if item_id not in store or known.get(item_id) != modtime
        ]
        fetched = yield from self._fetch(kind, wanted, listed, stats)
        return fetched

    def _fetch(self, kind: Kind, wanted: list[int], listed: dict[int, int], stats: UpdateStats):
        if not wanted:
            return []
        chunks = [tuple(wanted[i : i + self.batch_size]) for i in range(0, len(wanted), self.batch_size)]
        outcomes = yield [kind.get_request(chunk) for chunk in chunks]
        fetched = []
        for chunk, outcome in zip(chunks, outcomes):
            if isinstance(outcome, ClientError):
                if isinstance(outcome, (RequestFailed, MalformedReply)):
                    # The whole request was refused: as if every id had failed.
                    stats.errors.append(f"{kind.name} {list(chunk)}: {outcome}")
                    for item_id in chunk:
                        self._drop(kind.name, item_id)
                    continue
                raise outcome
            for item_id, item in zip(chunk, outcome):
                if isinstance(item, kind.item):
                    self._store(kind.name, item, listed.get(item_id, _modtime(item)))
                    fetched.append(item_id)
                else:
                    self._drop(kind.name, item_id)
                    stats.errors.append(f"{kind.name} {item_id}: {_describe(item)}")
        stats.count(kind.name, fetched=len(fetched))
        return fetched

    def _fetch_missing_object_descs(self, stats: UpdateStats) -> Plan[None]:
        """Servers need not list object types (69 is optional): ask for any type still unknown."""
        missing = sorted({obj.type for obj in self.objects.values()} - set(self.object_descs))
        if not missing:
            return
        try:
            reply = yield GetObjectDesc(tuple(missing))
        except RequestFailed as error:
            stats.errors.append(f"object_descs {missing}: {error}")
            return
        for desc in reply:
            if isinstance(desc, ObjectDesc):
                self._store("object_descs", desc, desc.modtime)
                stats.count("object_descs", fetched=1)

    def _fetch_orders(self, holders: list[tuple[int, int]], stats: UpdateStats) -> Plan[None]:
        """GetOrder(holder, 0..n−1) for every holder with orders, pipelined (CL's
        ``__getSubObjects``); holders with none get an empty tuple."""
        requests, targets = [], []
        for holder, count in holders:
            if count > 0:
                requests.append(GetOrder(holder, tuple(range(count))))
                targets.append(holder)
            else:
                self.orders[holder] = ()
        if not requests:
            return
        outcomes = yield requests
        for holder, outcome in zip(targets, outcomes):
            if isinstance(outcome, (RequestFailed, MalformedReply)):
                stats.errors.append(f"orders of {holder}: {outcome}")
                self.orders.pop(holder, None)
                continue
            if isinstance(outcome, ClientError):
                raise outcome
            self.orders[holder] = tuple(item if isinstance(item, Order) else None for item in outcome)
            stats.count("orders", fetched=len(outcome))

    def _forget_orders(self, holders: set[int]) -> None:
        for holder in [h for h in self.orders if h not in holders]:
            del self.orders[holder]

    def _fetch_messages(self, boards: list[int], stats: UpdateStats) -> Plan[None]:
        requests, targets = [], []
        for board_id in boards:
            count = self.boards[board_id].messages
            if count > 0:
                requests.append(GetMessage(board_id, tuple(range(count))))
                targets.append(board_id)
            else:
                self.messages[board_id] = ()
        if requests:
            outcomes = yield requests
            for board_id, outcome in zip(targets, outcomes):
                if isinstance(outcome, (RequestFailed, MalformedReply)):
                    stats.errors.append(f"messages of board {board_id}: {outcome}")
                    continue
                if isinstance(outcome, ClientError):
                    raise outcome
                self.messages[board_id] = tuple(item for item in outcome if isinstance(item, BoardMessage))
                stats.count("messages", fetched=len(self.messages[board_id]))
        for board_id in [b for b in self.messages if b not in self.boards]:
            del self.messages[board_id]

    def _probe_players(self, stats: UpdateStats, batch: int = 8, limit: int = 100_000):
        """TP03 has no player list: ask for players 1, 2, 3 … until the first Fail (CL3). Ids
        must be dense from 1 (spec §5.2). Players are re-read every update (no modtime)."""
        found: dict[int, Player] = {}
        next_id = 1
        while next_id < limit:
            ids = range(next_id, next_id + batch)
            outcomes = yield [GetPlayer((player_id,)) for player_id in ids]
            for player_id, outcome in zip(ids, outcomes):
                item = outcome[0] if isinstance(outcome, tuple) and outcome else outcome
                if isinstance(item, Player):
                    found[player_id] = item
                elif isinstance(item, (Fail, RequestFailed)):
                    next_id = limit  # the first Fail ends the probe
                    break
                elif isinstance(item, ClientError) and not isinstance(item, MalformedReply):
                    raise item
                else:  # unreadable (tpserver-cpp's TP03 Player), but it exists: go on
                    stats.errors.append(f"player {player_id}: {_describe(item)}")
            else:
                next_id += batch
        dropped = [pid for pid in self.players if pid not in found]
        self.players = found
        stats.count("players", fetched=len(found), dropped=len(dropped))

    def _fetch_me(self, stats: UpdateStats) -> Plan[None]:
        try:
            reply = yield GetPlayer((0,))
        except (RequestFailed, MalformedReply) as error:
            stats.errors.append(f"player 0: {error}")
            return
        if reply and isinstance(reply[0], Player):
            self.me = reply[0]
        else:
            stats.errors.append(f"player 0: {_describe(reply[0] if reply else None)}")

    # ----------------------------------------------------------------------------------------
    # Storage
    # ----------------------------------------------------------------------------------------

    def _store(self, name: str, item, modtime: int) -> None:
        self.generation += 1
        getattr(self, name)[item.id] = item
        self.modtimes[name][item.id] = modtime
        if name == "objects":
            self._parents = None

    def _store_object(self, obj: AnyObject) -> None:
        self._store("objects", obj, obj.modtime)

    def _drop(self, name: str, item_id: int) -> None:
        self.generation += 1
        getattr(self, name).pop(item_id, None)
        self.modtimes[name].pop(item_id, None)
        if name == "objects":
            self._parents = None
            if self.version == Version.TP03:
                self.orders.pop(item_id, None)
        elif name == "order_queues":
            self.orders.pop(item_id, None)
        elif name == "boards":
            self.messages.pop(item_id, None)


def _order_count(obj: AnyObject) -> int:
    """A TP03 object's number of orders (TP04 objects count them in their OrderQueue)."""
    return obj.orders if isinstance(obj, Tp03Object) else 0


def _modtime(item) -> int:
    return getattr(item, "modtime", 0)


def _describe(item) -> str:
    if isinstance(item, Fail):
        return f"Fail {int(item.code)} {item.message!r}"
    error = getattr(item, "error", None)
    if error is not None:
        return f"undecodable: {error}"
    return repr(item)
