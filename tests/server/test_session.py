"""Server sessions over an in-memory transport: the §10 minimum set, refusals, bad input."""

import pytest

import protocol as tp
from protocol import FailCode, Version
from ruleset import Kind, OrderType, Role
from server.views.tp.universe import universe_of

from .wire import Wire, make_directory

BOTH = [Version.TP03, Version.TP04]


@pytest.fixture
def server():
    return make_directory()


@pytest.mark.parametrize("version", BOTH)
def test_connect_features_and_login(server, version):
    directory, game = server
    wire = Wire(directory, version)
    assert isinstance(wire.one(tp.Connect("x")), tp.Okay)
    features = wire.one(tp.GetFeatures()).features
    assert tp.FeatureId.ACCOUNT_CREATE in features and tp.FeatureId.FILTER_PADDING not in features
    assert isinstance(wire.one(tp.Ping()), tp.Okay)
    if version == Version.TP04:
        games = wire.one(tp.GetGames())
        assert games.name == "tae" and games.ctime == 1_700_000_000 and games.rule == "TaE"
    else:  # TP03 has no GetGames; the Python client sends it anyway and expects a Fail
        games = wire.raw(b"TP03" + (50).to_bytes(4, "big") + (65).to_bytes(4, "big") + bytes(4))
        assert isinstance(games[0], tp.Fail)
    assert isinstance(wire.one(tp.CreateAccount("ann@tae", "pw", "", "")), tp.Okay)
    bad = wire.one(tp.Login("ann", "wrong"))
    assert isinstance(bad, tp.Fail) and bad.code == FailCode.FRAME
    assert isinstance(wire.one(tp.Login("ann@tae", "pw")), tp.Okay)
    assert game.player_id("ann") == 1


@pytest.mark.parametrize("version", BOTH)
def test_first_frame_must_be_connect_and_login_comes_before_play(server, version):
    directory, _ = server
    wire = Wire(directory, version)
    reply = wire.one(tp.GetFeatures())
    assert isinstance(reply, tp.Fail) and reply.code == FailCode.PROTOCOL
    wire.one(tp.Connect("x"))
    reply = wire.one(wire.id_request(tp.GetObjectIDs))
    assert isinstance(reply, tp.Fail) and reply.code == FailCode.FRAME
    assert isinstance(wire.one(tp.GetTimeRemaining()), tp.TimeRemaining)


@pytest.mark.parametrize("version", BOTH)
def test_full_download_like_a_client(server, version):
    directory, game = server
    other = Wire(directory, version)
    other.login("bob")
    wire = Wire(directory, version)
    wire.login("ann")
    order_ids = wire.one(wire.id_request(tp.GetOrderDescIDs))
    assert [i.id for i in order_ids.ids] == [0, 1, 2, 3, 4] and order_ids.remaining == 0
    descs = wire.items(tp.GetOrderDesc((0, 1, 2, 3, 4)))
    assert [d.name for d in descs] == ["ColonizeMining", "Colonize", "Move", "Attack", "Reinforce"]
    ids = wire.one(wire.id_request(tp.GetObjectIDs))
    assert ids.ids[0].id == 0 and ids.remaining == 0
    objects = wire.items(tp.GetObjectsByID(tuple(i.id for i in ids.ids)))
    assert len(objects) == len(ids.ids) == 2 + 352 + 2 * 14
    by_id = {o.id: o for o in objects}
    assert all(o.modtime == i.modtime for o, i in zip(objects, ids.ids))
    # every contained id can be downloaded (the client builds the tree from object 0)
    assert all(child in by_id for o in objects for child in o.contains)
    assert by_id[0].name == "The Universe" and by_id[1].name == "The Fertile Galaxy"
    for kind in (
        tp.GetCategoryIDs,
        tp.GetDesignIDs,
        tp.GetComponentIDs,
        tp.GetPropertyIDs,
        tp.GetResourceIDs,
        tp.GetBoardIDs,
    ):
        listed = wire.one(wire.id_request(kind))
        assert not isinstance(listed, tp.Fail), kind
    me = wire.items(tp.GetPlayer((0,)))[0]
    assert me.name == "ann"
    if version == Version.TP03:
        assert isinstance(wire.items(tp.GetPlayer((3,)))[0], tp.Fail)  # players are probed until a Fail
    else:
        assert [i.id for i in wire.one(wire.id_request(tp.GetPlayerIDs)).ids] == [1, 2]
        queues = wire.one(wire.id_request(tp.GetOrderQueueIDs))
        assert queues.ids[0].id == 0  # queue 0 is always listed
        assert len(wire.items(tp.GetOrderQueue(tuple(q.id for q in queues.ids)))) == len(queues.ids)
        assert len(wire.items(tp.GetObjectDesc((0, 1, 2, 3, 4)))) == 5
    board = wire.items(tp.GetBoards((0,)))[0]
    messages = wire.items(tp.GetMessage(board.id, tuple(range(board.messages))))
    assert messages[0].subject == "Welcome"
    assert isinstance(wire.one(tp.GetTimeRemaining()), tp.TimeRemaining)


@pytest.mark.parametrize("version", BOTH)
def test_id_lists_page_with_a_stable_key(server, version):
    directory, game = server
    wire = Wire(directory, version)
    wire.login("ann")
    first = wire.one(wire.id_request(tp.GetObjectIDs, amount=0))
    assert first.ids == () and first.remaining == len(universe_of(game.snapshot).ids)
    seen = []
    while len(seen) < first.remaining:
        page = wire.one(wire.id_request(tp.GetObjectIDs, key=first.key, start=len(seen), amount=30))
        seen.extend(i.id for i in page.ids)
        assert page.remaining == first.remaining - len(seen)
    assert seen == universe_of(game.snapshot).ids
    assert isinstance(wire.one(wire.id_request(tp.GetObjectIDs, key=first.key + 100)), tp.Fail)
    assert isinstance(wire.one(wire.id_request(tp.GetObjectIDs, key=first.key, start=10**6)), tp.Fail)


def colonist_of(game, player, kinds=(Kind.MERCHANT, Kind.SCIENTIST, Kind.SETTLER)):
    return next(
        f
        for f in game.state.fleets.values()
        if f.owner == player and f.role is Role.COLONIST and f.kind in kinds
    )


@pytest.mark.parametrize("version", BOTH)
def test_orders_insert_get_remove_and_refusals(server, version):
    directory, game = server
    wire = Wire(directory, version)
    wire.login("ann")
    rival = Wire(directory, version)
    rival.login("bob")
    fleet = colonist_of(game, 1)
    target = game.state.board.system_id(game.state.board.cell_at(0, 0))
    reply = wire.one(tp.InsertOrder(fleet.id, -1, OrderType.COLONIZE, (tp.ObjectArg(target),)))
    if version == Version.TP03:
        assert isinstance(reply, tp.Okay)
    else:
        assert isinstance(reply, tp.Order) and reply.args[0].object_id == target
    got = wire.items(tp.GetOrder(fleet.id, (0,)))[0]
    assert (got.type, got.args[0].object_id) == (OrderType.COLONIZE, target)
    # the same fleet again, another player's fleet, a wrong type, a missing target
    assert wire.one(tp.InsertOrder(fleet.id, -1, OrderType.COLONIZE, (tp.ObjectArg(target + 2),))).code == 3
    assert rival.one(tp.InsertOrder(fleet.id, -1, OrderType.COLONIZE, (tp.ObjectArg(target),))).code == 4
    leader = game.state.leader(1, Kind.MERCHANT).id
    assert wire.one(tp.InsertOrder(leader, -1, OrderType.COLONIZE, (tp.ObjectArg(target),))).code == 3
    assert wire.one(tp.InsertOrder(leader, -1, OrderType.MOVE, (tp.ObjectArg(99999),))).code == 4
    assert wire.one(tp.InsertOrder(leader, -1, 77, ())).code == 4  # no such order type
    probe = wire.one(tp.ProbeOrder(leader, -1, OrderType.MOVE, (tp.ObjectArg(target + 2),)))
    assert isinstance(probe, tp.Order)
    assert game.queue(leader) == []  # a probe changes nothing
    # another player cannot read ann's orders
    assert isinstance(rival.one(tp.GetOrder(fleet.id, (0,))), tp.Fail)
    removed = wire.items(tp.RemoveOrder(fleet.id, (0,)))
    assert isinstance(removed[0], tp.Okay) and game.queue(fleet.id) == []
    assert isinstance(wire.items(tp.RemoveOrder(fleet.id, (0,)))[0], tp.Fail)


@pytest.mark.parametrize("version", BOTH)
def test_turn_ends_when_all_finished_and_pushes_time_remaining(server, version):
    directory, game = server
    ann, bob = Wire(directory, version), Wire(directory, version)
    ann.login("ann")
    bob.login("bob")
    ann.read(), bob.read()
    assert isinstance(ann.send(tp.FinishedTurn())[-1], tp.Okay)
    pushed = bob.read()
    assert isinstance(pushed[-1], tp.TimeRemaining)
    replies = bob.send(tp.FinishedTurn())
    assert isinstance(replies[-1], tp.Okay)
    assert game.state.turn == 1
    pushes = [f for f in ann.read() if isinstance(f, tp.TimeRemaining)]
    assert [p.time for p in pushes][:1] == [0]
    if version == Version.TP04:
        assert [p.reason for p in pushes] == [
            tp.TimeRemainingReason.ALL_FINISHED,
            tp.TimeRemainingReason.TIMER_STARTED,
        ]
        assert pushes[-1].turn == 1
    universe = ann.items(tp.GetObjectsByID((0,)))[0]
    assert (universe.extra.age if version == Version.TP03 else universe.groups[1][0].value) == 1


def test_colonist_types_of_opponents_never_reach_the_wire(server):
    directory, game = server
    ann, bob = Wire(directory, Version.TP04), Wire(directory, Version.TP04)
    ann.login("ann")
    bob.login("bob")
    theirs = [f for f in game.state.fleets.values() if f.owner == 1 and f.role is Role.COLONIST]
    designs = bob.items(tp.GetDesign(tuple(f.id for f in theirs)))
    for design in designs:
        assert design.name == "Unknown design" and design.components == () and design.properties == ()
    raw = bob.transport.value()
    for name in ("MerchantShip", "ScientistShip", "SettlerShip", "MiningShip"):
        assert name.encode() not in raw
    mine = ann.items(tp.GetDesign((theirs[0].id,)))[0]
    assert mine.name.endswith("Ship")


@pytest.mark.parametrize("version", BOTH)
def test_malformed_frames_get_a_fail_and_the_connection_goes_on(server, version):
    directory, _ = server
    wire = Wire(directory, version)
    wire.login("ann")
    header = b"TP03" if version == Version.TP03 else b"TP\x04\x00"
    # a GetObjectsByID whose list count promises more than the body holds
    bad = (
        header
        + (99).to_bytes(4, "big")
        + (5).to_bytes(4, "big")
        + (4).to_bytes(4, "big")
        + (7).to_bytes(4, "big")
    )
    replies = wire.raw(bad)
    assert isinstance(replies[0], tp.Fail) and replies[0].code == FailCode.FRAME
    assert isinstance(wire.one(tp.Ping()), tp.Okay)
    # an unknown frame type
    unknown = header + (100).to_bytes(4, "big") + (9999).to_bytes(4, "big") + (0).to_bytes(4, "big")
    assert isinstance(wire.raw(unknown)[0], tp.Fail)
    assert isinstance(wire.one(tp.Ping()), tp.Okay)


def test_garbage_is_answered_and_closed_without_touching_others(server):
    directory, game = server
    good = Wire(directory)
    good.login("ann")
    bad = Wire(directory)
    bad.connection.dataReceived(b"GET / HTTP/1.0\r\n\r\n")
    assert bad.transport.value().startswith(b"You are not running the correct protocol")
    assert bad.transport.disconnecting
    huge = Wire(directory)
    huge.connection.dataReceived(
        b"TP\x04\x00" + (1).to_bytes(4, "big") + (3).to_bytes(4, "big") + (2**21).to_bytes(4, "big")
    )
    assert huge.transport.disconnecting
    assert isinstance(good.one(tp.Ping()), tp.Okay)


def test_requests_split_byte_by_byte_and_pipelined(server):
    directory, _ = server
    wire = Wire(directory)
    data = b"".join(
        tp.encode(m, Version.TP04, seq)
        for seq, m in enumerate([tp.Connect("x"), tp.Ping(), tp.GetFeatures()], 2)
    )
    for i in range(len(data)):
        wire.connection.dataReceived(data[i : i + 1])
    frames = wire.frames(wire.transport.value())
    assert [f.sequence for f in frames] == [2, 3, 4]


def test_unsupported_versions(server):
    directory, _ = server
    wire = Wire(directory)
    wire.connection.dataReceived(b"TP02" + bytes(12))
    assert wire.transport.value().startswith(b"You are not running the right version of TP")
    wire = Wire(directory)
    wire.connection.dataReceived(b"TP05" + bytes(12))
    refusal = wire.frames(wire.transport.value())
    assert refusal[0].version == Version.TP03 and tp.decode(refusal[0]).code == FailCode.PROTOCOL
    assert not wire.transport.disconnecting  # as tpserver-cpp: Fail and wait for another try
