"""The requests about orders: order types, a player's queues, inserting, probing and removing
orders, and finishing the turn."""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

import protocol as tp
from protocol import FailCode, ReferenceType, Version
from protocol.records import IdModtime
from ruleset.orders import NOT_ALLOWED
from server.model.refusals import Refused
from server.model.snapshot import GameSnapshot
from server.tp.errors import TPRefusal, fail, fail_for, internal_error
from server.tp.session_base import Item, SessionBase, queue_ref
from server.views.tp import catalogue
from server.views.tp import frames as tp_frames
from server.views.tp.universe import universe_of

log = Logger()

ORDER_REMOVED = "Order removed"  # the Okay of each slot of a RemoveOrder


def order_target(order: tp.Order) -> int:
    """The order's target: its first object argument (0: none)."""
    for arg in order.args:
        if isinstance(arg, tp.ObjectArg):
            return int(arg.object_id)
    return 0


def order_inserted(version: Version, message: tp.InsertOrder, slot: int, target: int) -> tp.Message:
    """The answer to an InsertOrder stored at `slot`: TP03 Okay, TP04 the order as queued. (A
    cluster node answers it the same way for an insert it found stored after its game's owner
    left before answering: `server.cluster.write_outcome`.)"""
    if version == Version.TP03:
        return tp.Okay("Order Added")
    return tp_frames.order_message(message.id, slot, message.type, target)


class OrderRequests(SessionBase):
    """The handlers of this module, joined into `server.tp.session.Session`."""

    # -- orders --------------------------------------------------------------------------

    def on_get_order_desc(self, message: tp.GetOrderDesc) -> list[Item]:
        return self._lookup(catalogue.ORDER_DESCS, message.ids, "order type", ReferenceType.ORDER_TYPE)

    def on_get_order_desc_ids(self, message: tp.GetOrderDescIDs) -> tp.Message:
        return self._catalogue_ids("orderdescs", catalogue.ORDER_DESCS, message, tp.OrderDescIDs)

    def _require_queue(self, snapshot: GameSnapshot, queue_id: int) -> None:
        """Refuse unless this player may see the queue (TP03: the object's orders)."""
        assert self.player is not None
        if not tp_frames.can_see_queue(snapshot, queue_id, self.player):
            name = "No such Object" if self.version == Version.TP03 else "No such OrderQueue"
            raise TPRefusal(FailCode.NO_SUCH_THING, name, [(ReferenceType.ORDER_QUEUE, queue_id)])

    def on_get_order(self, message: tp.GetOrder) -> list[Item]:
        snapshot = self.snapshot
        self._require_queue(snapshot, message.id)
        queue = snapshot.queue(message.id)

        def one(slot: int) -> Item:
            if not 0 <= slot < len(queue):
                return fail(
                    FailCode.UNAVAILABLE_TEMPORARILY,
                    "Could not get Order",
                    [(ReferenceType.ORDER_QUEUE, message.id), (ReferenceType.ORDER_INSTANCE, slot)],
                )
            order = queue[slot].order
            return tp_frames.order_message(message.id, slot, order.type, order.target)

        return self._each(message.slots, one)

    def on_insert_order(self, message: tp.InsertOrder) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        target = order_target(message)
        d = self.game.insert_order(self.player, message.id, message.slot, message.type, target)
        return d.addCallback(lambda slot: order_inserted(self.version, message, slot, target))

    def on_probe_order(self, message: tp.ProbeOrder) -> tp.Message:
        assert self.game is not None and self.player is not None
        target = order_target(message)
        problem = self.game.check_order(self.player, message.id, message.type, target)
        if problem is NOT_ALLOWED:  # tpserver-cpp's wording and code for a probe
            raise TPRefusal(
                FailCode.UNAVAILABLE_PERMANENTLY,
                "The order to be probed is not allowed on this object",
                queue_ref(message),
            )
        if problem is not None:
            raise TPRefusal(int(problem.code), problem.message, queue_ref(message))
        return tp_frames.order_message(message.id, message.slot, message.type, target)

    def on_remove_order(self, message: tp.RemoveOrder) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        if not message.slots:
            raise TPRefusal(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again")
        self._require_queue(self.snapshot, message.id)
        game, player = self.game, self.player
        results: list[Item] = []

        def remove(_: object, slot: int) -> defer.Deferred:
            d = game.remove_order(player, message.id, slot)
            d.addCallbacks(
                lambda _: results.append(tp.Okay(ORDER_REMOVED)),
                lambda failure: results.append(self._not_removed(failure, message.id, slot)),
            )
            return d

        d: defer.Deferred = defer.succeed(None)
        for slot in message.slots:
            d.addCallback(remove, slot)
        return d.addCallback(lambda _: results)

    @staticmethod
    def _not_removed(failure: Any, queue_id: int, slot: int) -> tp.Fail:
        """A slot that could not be removed gets tpserver-cpp's Fail; store trouble its own."""
        refs = ((ReferenceType.ORDER_QUEUE, queue_id), (ReferenceType.ORDER_INSTANCE, slot))
        if isinstance(failure.value, Refused):
            return fail(FailCode.UNAVAILABLE_TEMPORARILY, "Could not remove Order", refs)
        answer = fail_for(failure.value, refs)
        if answer is None:
            log.failure("removing an order failed", failure)
            return internal_error()
        return answer

    def _my_queues(self, snapshot: GameSnapshot) -> list[int]:
        return [0] + [obj.id for obj in universe_of(snapshot) if obj.has_queue and obj.owner == self.player]

    def on_get_order_queue_ids(self, message: tp.GetOrderQueueIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "orderqueues",
            message,
            tp.OrderQueueIDs,
            lambda: [IdModtime(q, tp_frames.queue_modtime(snapshot, q)) for q in self._my_queues(snapshot)],
        )

    def on_get_order_queue(self, message: tp.GetOrderQueue) -> list[Item]:
        snapshot = self.snapshot
        assert self.player is not None
        player = self.player

        def one(queue_id: int) -> Item:
            if not tp_frames.can_see_queue(snapshot, queue_id, player):
                return fail(
                    FailCode.NO_SUCH_THING, "No such OrderQueue", [(ReferenceType.ORDER_QUEUE, queue_id)]
                )
            return tp_frames.order_queue_message(snapshot, queue_id)

        return self._each(message.ids, one)

    # -- turns ---------------------------------------------------------------------------

    def on_finished_turn(self, message: tp.FinishedTurn) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        return self.game.finish_turn(self.player).addCallback(lambda _: tp.Okay("Turn finished"))
