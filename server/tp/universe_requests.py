"""The requests that read the universe: objects, object types, designs, players and the fixed
catalogues (resources, categories, components, properties)."""

from __future__ import annotations

import protocol as tp
from protocol import FailCode, ReferenceType
from protocol.records import IdModtime
from server.model.snapshot import GameSnapshot
from server.tp.errors import TPRefusal, fail
from server.tp.session_base import Item, SessionBase
from server.views.tp import catalogue
from server.views.tp import frames as tp_frames
from server.views.tp.universe import universe_of


class UniverseRequests(SessionBase):
    """The handlers of this module, joined into `server.tp.session.Session`."""

    # -- objects -------------------------------------------------------------------------

    def on_get_object_ids(self, message: tp.GetObjectIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "objects",
            message,
            tp.ObjectIDs,
            lambda: [IdModtime(i, snapshot.modtime(("object", i))) for i in universe_of(snapshot).ids],
        )

    def _object_item(self, snapshot: GameSnapshot, object_id: int) -> Item:
        assert self.player is not None and self.game is not None
        cache = self._frames(self.game.id)
        body = tp_frames.object_body(snapshot, cache, object_id, self.player, self.version)
        if body is None:
            return fail(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, object_id)])
        return (tp.FrameType.OBJECT, body)

    def on_get_objects_by_id(self, message: tp.GetObjectsByID) -> list[Item]:
        snapshot = self.snapshot
        return self._each(message.ids, lambda i: self._object_item(snapshot, i))

    @staticmethod
    def _objects_near(snapshot: GameSnapshot, position: tuple[int, int, int], radius: int) -> list[int]:
        x, y, z = position
        found = []
        for obj in universe_of(snapshot):
            ox, oy, oz = obj.position
            reach = radius + obj.size // 2
            if (ox - x) ** 2 + (oy - y) ** 2 + (oz - z) ** 2 <= reach * reach:
                found.append(obj.id)
        return found

    def on_get_objects_by_pos(self, message: tp.GetObjectsByPos) -> list[Item]:
        snapshot = self.snapshot
        near = self._objects_near(snapshot, message.position, message.radius)
        return [self._object_item(snapshot, i) for i in near]

    def on_get_object_ids_by_pos(self, message: tp.GetObjectIDsByPos) -> tp.Message:
        snapshot = self.snapshot
        near = self._objects_near(snapshot, message.position, message.radius)
        return tp.ObjectIDs(0, 0, tuple(IdModtime(i, snapshot.modtime(("object", i))) for i in near), -1)

    def on_get_object_ids_by_container(self, message: tp.GetObjectIDsByContainer) -> tp.Message:
        snapshot = self.snapshot
        obj = universe_of(snapshot).get(message.id)
        if obj is None:
            raise TPRefusal(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, message.id)])
        ids = tuple(IdModtime(i, snapshot.modtime(("object", i))) for i in obj.children)
        return tp.ObjectIDs(0, 0, ids, -1)

    def on_get_object_desc(self, message: tp.GetObjectDesc) -> list[Item]:
        return self._each(
            message.ids,
            lambda i: (
                catalogue.OBJECT_DESCS.get(i)
                or fail(FailCode.NO_SUCH_THING, "No such object type", [(ReferenceType.OBJECT_TYPE, i)])
            ),
        )

    def on_get_object_desc_ids(self, message: tp.GetObjectDescIDs) -> tp.Message:
        return self._catalogue_ids("objectdescs", catalogue.OBJECT_DESCS, message, tp.ObjectDescIDs)

    def on_modify_object(self, message: tp.Message) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Objects cannot be modified in TaE")

    def on_get_resource_ids(self, message: tp.GetResourceIDs) -> tp.Message:
        return self._catalogue_ids("resources", catalogue.RESOURCES, message, tp.ResourceIDs)

    def on_get_resource(self, message: tp.GetResource) -> list[Item]:
        return self._lookup(catalogue.RESOURCES, message.ids, "resource", ReferenceType.RESOURCE)

    def on_get_category_ids(self, message: tp.GetCategoryIDs) -> tp.Message:
        return self._catalogue_ids("categories", catalogue.CATEGORIES, message, tp.CategoryIDs)

    def on_get_category(self, message: tp.GetCategory) -> list[Item]:
        return self._lookup(catalogue.CATEGORIES, message.ids, "category", ReferenceType.CATEGORY)

    def on_get_component_ids(self, message: tp.GetComponentIDs) -> tp.Message:
        return self._catalogue_ids("components", catalogue.COMPONENTS, message, tp.ComponentIDs)

    def on_get_component(self, message: tp.GetComponent) -> list[Item]:
        return self._lookup(catalogue.COMPONENTS, message.ids, "component", ReferenceType.COMPONENT)

    def on_get_property_ids(self, message: tp.GetPropertyIDs) -> tp.Message:
        return self._catalogue_ids("properties", catalogue.PROPERTIES, message, tp.PropertyIDs)

    def on_get_property(self, message: tp.GetProperty) -> list[Item]:
        return self._lookup(catalogue.PROPERTIES, message.ids, "property", ReferenceType.PROPERTY)

    def on_refused_edit(self, message: tp.Message) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Server does not support this frame type")

    def on_get_design_ids(self, message: tp.GetDesignIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "designs",
            message,
            tp.DesignIDs,
            lambda: [IdModtime(fid, snapshot.modtime(("design", fid))) for fid in snapshot.state.fleets],
        )

    def on_get_design(self, message: tp.GetDesign) -> list[Item]:
        snapshot, player = self.snapshot, self.player
        assert player is not None
        return self._each(
            message.ids,
            lambda i: (
                tp_frames.design_message(snapshot, i, player)
                or fail(FailCode.NO_SUCH_THING, "No such design", [(ReferenceType.DESIGN, i)])
            ),
        )

    # -- players -------------------------------------------------------------------------

    def on_get_player_ids(self, message: tp.GetPlayerIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "players",
            message,
            tp.PlayerIDs,
            lambda: [IdModtime(p.id, snapshot.modtime(("player", p.id))) for p in snapshot.state.players],
        )

    def on_get_player(self, message: tp.GetPlayer) -> list[Item]:
        snapshot = self.snapshot

        def one(player_id: int) -> Item:
            pid = self.player if player_id == 0 else player_id
            if pid is None or not snapshot.state.has_player(pid):
                return fail(FailCode.NO_SUCH_THING, "No such player", [(ReferenceType.PLAYER, player_id)])
            return tp_frames.player_message(snapshot, pid, self.player)

        return self._each(message.ids, one)
