"""More of the protocol surface: optional frames, account settings, several games, boards."""

import pytest
from twisted.internet.task import Clock

import protocol as tp
from protocol import FailCode, Version
from ruleset import Kind, Role
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings

from .wire import Wire, make_directory


def test_optional_object_queries():
    directory, game = make_directory()
    wire = Wire(directory)
    wire.login("ann")
    desc_ids = wire.one(wire.id_request(tp.GetObjectDescIDs))
    assert [i.id for i in desc_ids.ids] == [0, 1, 2, 3, 4]
    system = game.state.board.system_id(0)
    inside = wire.one(tp.GetObjectIDsByContainer(system))
    assert [i.id for i in inside.ids] == [system + 1]
    near = wire.one(tp.GetObjectIDsByPos(tp.Vec3(1, 80001, 0), 10))
    assert {i.id for i in near.ids} == {0, 1, system, system + 1}  # the universe and galaxy contain it
    assert isinstance(wire.one(tp.GetObjectIDsByContainer(10**6)), tp.Fail)
    assert wire.items(tp.GetObjectsByID((10**6,)))[0].code == FailCode.NO_SUCH_THING
    assert wire.one(tp.GetObjectsByID(())).code == FailCode.NO_SUCH_THING


def test_filters_designs_and_posting_are_refused_politely():
    directory, _ = make_directory()
    wire = Wire(directory)
    wire.login("ann")
    assert wire.one(tp.SetFilters((tp.FeatureId.FILTER_PADDING,))).code == FailCode.UNAVAILABLE_PERMANENTLY
    assert isinstance(wire.one(tp.SetFilters(())), tp.Okay)
    design = tp.AddDesign(-1, 0, (1,), "x", "", 0, -1, (), "", ())
    assert wire.one(design).code == FailCode.UNAVAILABLE_PERMANENTLY
    assert wire.one(tp.PostMessage(1, -1, "hi", "there", 0)).code == FailCode.UNAVAILABLE_PERMANENTLY


def test_messages_can_be_removed():
    directory, game = make_directory()
    wire = Wire(directory)
    wire.login("ann")
    Wire(directory).login("bob")
    board = wire.items(tp.GetBoards((0,)))[0]
    assert board.messages == 2  # Welcome, then "New Player" when bob joined
    before = board.modtime
    assert isinstance(wire.items(tp.RemoveMessage(board.id, (0,)))[0], tp.Okay)
    board = wire.items(tp.GetBoards((0,)))[0]
    assert board.messages == 1 and board.modtime > before
    assert wire.items(tp.GetMessage(board.id, (0,)))[0].subject == "New Player"
    assert isinstance(wire.items(tp.GetBoards((2,)))[0], tp.Fail)  # bob's board is bob's


def test_account_creation_can_be_disabled_and_auto_add_enabled():
    directory, game = make_directory(account_creation=False, auto_add=True)
    wire = Wire(directory)
    wire.one(tp.Connect("x"))
    assert tp.FeatureId.ACCOUNT_CREATE not in wire.one(tp.GetFeatures()).features
    refused = wire.one(tp.CreateAccount("ann", "pw", "", ""))
    assert refused.code == FailCode.PERMISSION_DENIED
    assert refused.message == "This game does not allow creating accounts."  # not "creation Disabled"
    assert isinstance(wire.one(tp.Login("ann", "pw")), tp.Okay)  # auto-added
    again = Wire(directory)
    again.one(tp.Connect("x"))
    assert isinstance(again.one(tp.Login("ann", "nope")), tp.Fail)  # never a new account


def test_user_at_game_picks_the_game():
    directory = GameDirectory()
    store = MemoryStore()
    for name in ("alpha", "beta"):
        setup = GameSetup(name, timer=TimerSettings(turn_length=0), ctime=1)
        directory.add(Game(store.create_game(setup), setup, Game.initial_state(setup), store, Clock()))
    wire = Wire(directory)
    wire.one(tp.Connect("x"))
    games = wire.items(tp.GetGames())
    assert [g.name for g in games] == ["alpha", "beta"]
    assert isinstance(wire.one(tp.CreateAccount("ann@beta", "pw", "", "")), tp.Okay)
    assert isinstance(wire.one(tp.Login("ann@alpha", "pw")), tp.Fail)
    assert isinstance(wire.one(tp.Login("ann@nowhere", "pw")), tp.Fail)
    assert isinstance(wire.one(tp.Login("ann@beta", "pw")), tp.Okay)
    assert directory.find("beta").player_id("ann") == 1 and directory.find("alpha").player_id("ann") is None


@pytest.mark.parametrize("version", [Version.TP03, Version.TP04])
def test_order_queue_of_another_player_is_not_shown(version):
    directory, game = make_directory()
    ann, bob = Wire(directory, version), Wire(directory, version)
    ann.login("ann")
    bob.login("bob")
    fleet = next(f.id for f in game.state.fleets.values() if f.owner == 1)
    objects = {o.id: o for o in bob.items(tp.GetObjectsByID((fleet,)))}
    if version == Version.TP04:
        assert objects[fleet].groups[2][0].queue_id == 0
        assert isinstance(bob.items(tp.GetOrderQueue((fleet,)))[0], tp.Fail)
        assert isinstance(bob.items(tp.GetOrderQueue((0,)))[0], tp.OrderQueue)
    else:
        assert objects[fleet].order_types == () and objects[fleet].orders == 0
        mine = {o.id: o for o in ann.items(tp.GetObjectsByID((fleet,)))}
        assert mine[fleet].order_types != ()


def test_removing_a_player_closes_their_connection_only():
    directory, game = make_directory()
    ann, bob = Wire(directory), Wire(directory)
    ann.login("ann")
    bob.login("bob")
    removed = []
    game.remove_player("bob").addCallback(removed.append)
    assert removed == [2]
    assert bob.transport.disconnecting and not ann.transport.disconnecting
    assert isinstance(ann.one(tp.Ping()), tp.Okay)
    again = Wire(directory)
    again.one(tp.Connect("x"))
    assert isinstance(again.one(tp.Login("bob", "pw")), tp.Fail)


def test_a_resigned_player_stays_logged_in_and_reads_but_gives_no_order():
    directory, game = make_directory()
    ann, bob = Wire(directory), Wire(directory)
    ann.login("ann")
    bob.login("bob")
    resigned = []
    game.resign(2).addCallback(resigned.append)
    assert resigned, "the resignation is stored"
    assert not bob.transport.disconnecting and not ann.transport.disconnecting
    again = Wire(directory)
    again.login("bob", create=False)  # a new login too
    assert again.items(tp.GetPlayer((2,)))[0].name == "bob"
    fleet = next(
        f
        for f in game.state.fleets.values()
        if f.owner == 2 and f.role is Role.COLONIST and f.kind is not Kind.MINING
    )
    target = game.state.board.system_id(game.state.board.cell_at(0, 0))
    refused = again.one(tp.InsertOrder(fleet.id, -1, 1, (tp.ObjectArg(target),)))
    assert isinstance(refused, tp.Fail) and refused.message == "You resigned from this game."
