"""Modification times for the Thousand Parsec cache protocol (spec/protocol.md §5.5).

Clients re-download an item only when its listed modtime is greater than the one they hold, so
a modtime must strictly increase whenever anything a client sees of the item changes, and the
modtime in an ID list must equal the one in the item's frame. Items are compared by a
fingerprint (a hashable summary of everything visible about them, computed from a snapshot); a
changed fingerprint gets the next serial. Serials start above the stored high-water mark after a
restart, so they never go back.

The write side keeps one `ModTimes` per game and stamps every snapshot it publishes; each
stamping makes a new table, so a published snapshot's table never changes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping

from ruleset import Role, allowed_order_types
from server.model.snapshot import GameSnapshot
from server.views.own_seat import own_seat_note
from server.views.tp.universe import universe_of

Stamps = dict[Hashable, tuple[Hashable, int]]


class ModTimeTable(Mapping[Hashable, int]):
    """A read-only key → modtime mapping over one stamping (what a snapshot carries)."""

    __slots__ = ("_stamps",)

    def __init__(self, stamps: Stamps):
        self._stamps = stamps

    def __getitem__(self, key: Hashable) -> int:
        return self._stamps[key][1]

    def get(self, key: Hashable, default=None):
        stamp = self._stamps.get(key)
        return default if stamp is None else stamp[1]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._stamps)

    def __len__(self) -> int:
        return len(self._stamps)

    def __contains__(self, key: object) -> bool:
        return key in self._stamps


class ModTimes:
    def __init__(self, start: int = 1):
        self.serial = start
        self._stamps: Stamps = {}

    def refresh(self, items: Iterable[tuple[Hashable, Hashable]]) -> None:
        """Stamp every (key, fingerprint); keys not given are forgotten (the item is gone)."""
        old = self._stamps
        new: Stamps = {}
        bumped = False
        for key, fingerprint in items:
            previous = old.get(key)
            if previous is not None and previous[0] == fingerprint:
                new[key] = previous
            else:
                if not bumped:
                    self.serial += 1
                    bumped = True
                new[key] = (fingerprint, self.serial)
        self._stamps = new

    def touch(self, key: Hashable, fingerprint: Hashable) -> int:
        """Update one item (e.g. an order queue after an insert) and return its modtime."""
        previous = self._stamps.get(key)
        if previous is not None and previous[0] == fingerprint:
            return previous[1]
        self.serial += 1
        self._stamps = {**self._stamps, key: (fingerprint, self.serial)}
        return self.serial

    def get(self, key: Hashable) -> int | None:
        stamp = self._stamps.get(key)
        return None if stamp is None else stamp[1]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._stamps

    def table(self) -> ModTimeTable:
        """The current stamps, read-only; later stamping does not change what it shows."""
        return ModTimeTable(self._stamps)


# -- fingerprints --------------------------------------------------------------------------


def queue_fingerprint(snapshot: GameSnapshot, object_id: int) -> Hashable:
    queue = snapshot.queue(object_id)
    return (
        tuple((q.entry.seq, q.order.type, q.order.target) for q in queue),
        _order_context(snapshot, object_id),
    )


def _order_context(snapshot: GameSnapshot, object_id: int) -> Hashable:
    """What decides the order types an object takes, without revealing a colonist's kind.

    A colonist's allowed orders depend on its kind (R27 hides it), so its fingerprint holds the
    phase and the running conflict instead: every colonist's modtime moves together.
    """
    state = snapshot.state
    fleet = state.fleets.get(object_id)
    if fleet is not None and fleet.role is Role.COLONIST:
        conflict = state.active_conflict
        return (state.phase, None if conflict is None else (conflict.attacker, conflict.defender))
    return tuple(allowed_order_types(state, object_id))


def object_fingerprint(snapshot: GameSnapshot, object_id: int) -> Hashable:
    obj = universe_of(snapshot).get(object_id)
    if obj is None:
        return None
    return (obj, queue_fingerprint(snapshot, object_id) if obj.has_queue else None)


def all_fingerprints(snapshot: GameSnapshot) -> Iterator[tuple[Hashable, Hashable]]:
    """Every item a client caches, with a fingerprint of what any player can see of it."""
    state = snapshot.state
    for obj in universe_of(snapshot):
        queue = queue_fingerprint(snapshot, obj.id) if obj.has_queue else None
        yield ("object", obj.id), (obj, queue)
        if obj.has_queue:
            yield ("queue", obj.id), queue
    for player in state.players:
        # the player's own frame words their seat (`server.views.own_seat`): its note moves it
        yield (
            ("player", player.id),
            (
                player.name,
                player.id in snapshot.removed_players,
                own_seat_note(snapshot, player.id),
            ),
        )
        yield ("board", player.id), (len(snapshot.board(player.id)), snapshot.posted.get(player.id, 0))
    for fleet in state.fleets.values():
        yield ("design", fleet.id), (fleet.owner, fleet.role, fleet.kind)
