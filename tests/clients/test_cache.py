"""The cache downloads only what changed (ID lists with modtimes, §5.5) in TP03 and TP04."""

from __future__ import annotations

import pytest

from clients.errors import RequestFailed
from protocol import (
    GetBoards,
    GetComponentIDs,
    GetDesign,
    GetMessage,
    GetObjectDesc,
    GetObjectDescIDs,
    GetObjectIDs,
    GetObjectsByID,
    GetOrder,
    GetOrderDesc,
    GetOrderQueue,
    GetPlayer,
    Player,
    Tp03Object,
    Tp04Object,
    Version,
)

from .fake_server import FLEET, MOVE, tae_world
from .helpers import names, rig

TP03, TP04 = Version.TP03, Version.TP04
BOTH = pytest.mark.parametrize("version", [TP03, TP04])

#: Requests that download items (as opposed to listing ids).
ITEM_REQUESTS = (
    GetObjectsByID,
    GetOrder,
    GetOrderDesc,
    GetOrderQueue,
    GetBoards,
    GetMessage,
    GetDesign,
    GetObjectDesc,
)


def item_requests(messages):
    return [m for m in messages if isinstance(m, ITEM_REQUESTS)]


@BOTH
def test_first_update_downloads_everything(version):
    r = rig(version)
    stats = r.client.update()
    cache = r.client.cache
    world = r.world
    assert set(cache.objects) == set(world.objects)
    object_class = Tp03Object if version == TP03 else Tp04Object
    assert all(isinstance(o, object_class) for o in cache.objects.values())
    assert set(cache.order_descs) == {0, 1, 2, 3, 4}
    assert set(cache.designs) == set(world.designs)
    assert set(cache.players) == {1, 2}
    assert cache.me == Player(1, "alice", "Human", cache.me.modtime)
    assert set(cache.resources) == set(range(1, 8))
    assert [m.subject for m in cache.messages[1]] == ["Welcome"]
    assert cache.time_remaining.time == 300
    assert stats.fetched["objects"] == len(world.objects)
    assert stats.errors == []
    if version == TP04:
        assert set(cache.object_descs) == {0, 1, 2, 3, 4}
        mine = [q.id for q in world.queues.values() if q.owner == 1]
        assert set(cache.order_queues) == {0, *mine}
    # Every fleet and queue of alice has its (empty) orders.
    alice_fleets = [o.id for o in world.objects.values() if o.type == FLEET and o.owner == 1]
    assert all(cache.orders_of(fid) == () for fid in alice_fleets)
    assert all(cache.order_holder(fid) is not None for fid in alice_fleets)


@BOTH
def test_second_update_lists_ids_and_downloads_nothing(version):
    r = rig(version)
    r.client.update()
    mark = r.mark
    stats = r.client.update()
    assert item_requests(r.requests_since(mark)) == []
    assert stats.dropped == {}
    expected = {"players"} if version == TP03 else set()  # TP03 players have no modtime
    assert set(stats.fetched) == expected


@BOTH
def test_only_changed_objects_are_downloaded_and_vanished_ones_dropped(version):
    r = rig(version)
    r.client.update()
    world = r.world
    moved = world.objects[4]
    world.touch(moved)
    gone = max(world.objects)
    parent = world.objects[gone].parent
    world.remove_object(gone)
    mark = r.mark
    stats = r.client.update()
    fetches = [m for m in r.requests_since(mark) if isinstance(m, GetObjectsByID)]
    # The deleted object's container changed too: its contains list.
    assert fetches == [GetObjectsByID(tuple(sorted((4, parent))))]
    assert gone not in r.client.cache.objects
    assert gone not in r.client.cache.objects[parent].contains
    assert stats.dropped["objects"] == 1
    assert stats.fetched["objects"] == 2


@BOTH
def test_orders_are_refetched_only_for_the_changed_holder(version):
    r = rig(version)
    other = rig(version, r.world)  # a second connection of the same player changes an order
    r.client.update()
    other.client.update()
    leader = other.client.game.my_leaders()
    fleet_id = next(iter(leader.values())).id
    other.client.insert_order(fleet_id, MOVE, 6)
    mark = r.mark
    r.client.update()
    gets = [m for m in r.requests_since(mark) if isinstance(m, GetOrder)]
    holder = r.client.cache.order_holder(fleet_id)
    assert gets == [GetOrder(holder, (0,))]
    assert [o.type for o in r.client.cache.orders_of(fleet_id)] == [MOVE]
    if version == TP04:
        queues = [m for m in r.requests_since(mark) if isinstance(m, GetOrderQueue)]
        assert queues == [GetOrderQueue((holder,))]


@BOTH
def test_new_messages_are_downloaded(version):
    r = rig(version)
    r.client.update()
    r.world.post(1, "Turn complete", "Your Current Score: ...")
    mark = r.mark
    r.client.update()
    new = item_requests(r.requests_since(mark))
    assert names(new) == ["GetBoards", "GetMessage"]
    assert new[1].slots == (0, 1)
    assert [m.subject for m in r.client.cache.messages[1]] == ["Welcome", "Turn complete"]


@BOTH
def test_id_lists_are_paged_and_pipelined(version):
    r = rig(version, page_size=7, batch_size=10)
    r.client.update()
    lists = [m for m in r.server.requests if isinstance(m, GetObjectIDs)]
    total = len(r.world.objects)
    assert (lists[0].key, lists[0].start, lists[0].amount) == (-1, 0, 0)
    pages = lists[1:]
    assert [p.start for p in pages] == list(range(0, total, 7))
    assert sum(p.amount for p in pages) == total
    assert all(p.key == pages[0].key != -1 for p in pages)
    batches = [m for m in r.server.requests if isinstance(m, GetObjectsByID)]
    assert [len(b.ids) for b in batches] == [10] * (total // 10) + [total % 10]
    assert set(r.client.cache.objects) == set(r.world.objects)


def test_tp03_players_are_probed_until_the_first_fail():
    r = rig(TP03)
    r.client.update()
    probes = [m for m in r.server.requests if isinstance(m, GetPlayer)]
    assert probes[0] == GetPlayer((1,)) and all(len(p.ids) == 1 for p in probes)
    assert [p.ids[0] for p in probes[:-1]] == list(range(1, 9))
    assert probes[-1] == GetPlayer((0,))
    assert set(r.client.cache.players) == {1, 2}


def test_tp04_without_object_desc_ids_fetches_missing_descriptions():
    r = rig(TP04)
    r.server.refuse[GetObjectDescIDs] = 2
    stats = r.client.update()
    assert any("object_descs" in e for e in stats.errors)
    assert set(r.client.cache.object_descs) == {0, 1, 2, 3, 4}
    assert len(r.client.cache.objects) == len(r.world.objects)


def test_optional_lists_may_fail_required_ones_may_not():
    r = rig(TP04)
    r.server.refuse[GetComponentIDs] = 2
    stats = r.client.update()
    assert any(e.startswith("components") for e in stats.errors)
    r.server.refuse[GetObjectIDs] = 3
    with pytest.raises(RequestFailed):
        r.client.update()


@BOTH
def test_servers_sending_lone_frames_and_one_byte_reads(version):
    r = rig(version, chunk=1)
    r.server.single_frames = True
    r.client.update()
    assert set(r.client.cache.objects) == set(r.world.objects)


def test_refresh_objects_drops_what_the_server_no_longer_shows():
    r = rig(TP04, tae_world())
    r.client.update()
    victim = max(r.world.objects)
    r.world.remove_object(victim)
    fresh = r.client.run(r.client.cache.refresh_objects([0, victim]))
    assert [o.id for o in fresh] == [0]
    assert victim not in r.client.cache.objects
