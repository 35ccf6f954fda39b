"""The TaE view of the cache: board, regions, fleets, scores, turn, orders (TP03 and TP04)."""

from __future__ import annotations

import pytest

from clients.errors import RequestFailed, RequestTimeout
from clients.game_messages import parse_scores
from clients.tae_model import ColonyKind, FleetKind, Scores, parse_system_name
from protocol import FailCode, InsertOrder, ObjectArg, Okay, Order, ProbeOrder, RemoveOrder, Version

from .fake_server import ATTACK, COLONIZE, COLONIZE_MINING, MOVE, score_body
from .helpers import rig

TP03, TP04 = Version.TP03, Version.TP04
BOTH = pytest.mark.parametrize("version", [TP03, TP04])


def ready(version):
    r = rig(version)
    r.client.update()
    return r


def test_parse_system_name():
    assert parse_system_name("3, 10") == (3, 10)
    assert parse_system_name("alice's System") is None
    assert parse_system_name("Planet 3, 10") is None


def test_parse_scores_and_final_score():
    scores = parse_scores(score_body(3, 1, 4, 1, 5), turn=7)
    assert scores == Scores(3, 1, 4, 1, 5, turn=7)
    assert scores.by_kind[ColonyKind.SCIENTIST] == 1
    # Artifacts fill the lowest categories: 1,1,3,4 + 5 → 3,3,4,4 → final 3.
    assert scores.final == 3
    assert parse_scores("Your Current Score: \nMoney: 1") is None


@BOTH
def test_board_grid(version):
    game = ready(version).client.game
    systems = game.systems()
    assert game.board_size() == (4, 3)
    assert len(systems) == 12  # home systems are not on the board
    assert systems[(0, 2)].terrain == "M" and not systems[(0, 2)].habitable
    assert systems[(2, 0)].terrain == "M"
    artifact = systems[(1, 1)]
    assert artifact.artifact and artifact.colony is ColonyKind.SCIENTIST
    assert systems[(1, 0)].colony is ColonyKind.MERCHANT
    assert systems[(2, 1)].leaders and systems[(2, 1)].colony is None
    assert systems[(0, 0)].empty and not systems[(0, 0)].destroyed
    assert game.render() == "M..A\n.AL.\n.mM."
    assert game.system_id_at(1, 0) == systems[(1, 0)].id


def test_regions_tp04_from_the_server_tp03_computed_the_same():
    tp04, tp03 = ready(TP04).client.game, ready(TP03).client.game
    assert tp04.regions_from_server and not tp03.regions_from_server
    expected = {
        tp04.system_id_at(1, 0): frozenset({(1, 0), (1, 1), (2, 1)}),
        tp04.system_id_at(3, 2): frozenset({(3, 2)}),
    }
    assert tp04.regions() == expected
    assert tp03.regions() == expected
    assert tp03.system_at(0, 0).region == 0


@BOTH
def test_fleets_by_kind(version):
    game = ready(version).client.game
    assert game.player_id == 1
    mine = game.my_fleets()
    assert len(mine) == 7 and all(f.owner == 1 for f in mine)
    leaders = game.my_leaders()
    assert set(leaders) == set(ColonyKind)
    scientist = leaders[ColonyKind.SCIENTIST]
    assert scientist.position == (2, 1) and scientist.system_id == game.system_id_at(2, 1)
    assert leaders[ColonyKind.MERCHANT].position is None  # still at home
    colonists = game.my_colonists()
    assert [c.colony_kind for c in colonists] == [ColonyKind.MERCHANT, ColonyKind.MINING]
    assert [b.kind for b in game.my_bombers()] == [FleetKind.BOMBER]
    theirs = [f for f in game.fleets(owner=2) if f.kind is FleetKind.COLONIST]
    assert theirs and all(f.colony_kind is None for f in theirs)  # hidden designs (R27)
    assert [f.id for f in game.leaders_on_board()] == [scientist.id]


@BOTH
def test_allowed_orders_and_order_addressing(version):
    r = ready(version)
    game = r.client.game
    merchant, mining = game.my_colonists()
    assert [d.name for d in game.allowed_orders(merchant.id)] == ["Colonize"]
    assert merchant.order_types == (COLONIZE,) and mining.order_types == (COLONIZE_MINING,)
    assert game.allowed_orders(game.my_bombers()[0].id)[0].id == ATTACK
    order = game.build_order(merchant.id, "colonize", (0, 0))
    expected_id = merchant.id if version == TP03 else merchant.order_holder
    assert order == InsertOrder(expected_id, -1, COLONIZE, (ObjectArg(game.system_id_at(0, 0)),))
    if version == TP04:
        assert merchant.order_holder != merchant.id  # queue ids are not object ids
    with pytest.raises(KeyError):
        game.build_order(merchant.id, "Build Fleet", (0, 0))
    with pytest.raises(ValueError):
        game.build_order(merchant.id, "Colonize")
    theirs = game.fleets(owner=2)[0]
    if version == TP04:
        with pytest.raises(ValueError):  # queue id 0: not ours to order
            game.build_order(theirs.id, "Colonize", (0, 0))


@BOTH
def test_insert_probe_remove_orders(version):
    r = ready(version)
    client, game = r.client, r.client.game
    leader = game.my_leaders()[ColonyKind.MERCHANT]
    target = game.system_id_at(0, 0)
    reply = client.insert_order(leader.id, "Move", (0, 0))
    if version == TP03:
        assert reply == Okay("Order Added")
    else:
        assert isinstance(reply, Order) and reply.id == leader.order_holder and reply.slot == 0
    client.insert_order(leader.id, MOVE, target)
    orders = game.fleet(leader.id).orders
    assert [(o.type, o.args[0].object_id) for o in orders] == [(MOVE, target)] * 2
    probe = client.probe_order(leader.id, "Move", (3, 0))
    assert isinstance(probe, Order) and probe.args[0].object_id == game.system_id_at(3, 0)
    assert isinstance(r.server.requests[-1], ProbeOrder)
    assert len(game.fleet(leader.id).orders) == 2  # probing changes nothing
    with pytest.raises(RequestFailed) as caught:
        client.insert_order(leader.id, "Attack", (0, 0))
    assert caught.value.code == FailCode.UNAVAILABLE_TEMPORARILY
    answers = client.remove_orders(leader.id)
    assert answers == (Okay("Order removed"), Okay("Order removed"))
    assert [m for m in r.server.requests if isinstance(m, RemoveOrder)][0].slots == (1, 0)
    assert game.fleet(leader.id).orders == ()
    assert client.finish_turn() == Okay("Thanks for letting me know you have finished your turn.")
    assert r.world.finished == {1}


@BOTH
def test_turn_scores_and_game_over(version):
    r = ready(version)
    client, game = r.client, r.client.game
    assert game.turn == 0 and game.time_remaining == 300
    assert game.scores() is None and not game.is_over
    r.world.end_turn({1: (1, 2, 3, 4, 0)})
    r.world.end_turn({1: (5, 6, 7, 8, 1)})
    assert client.wait_for_next_turn(timeout=2, poll_interval=0.05) == 2
    assert game.turn == 2
    assert game.scores() == Scores(5, 6, 7, 8, 1, turn=2)
    assert game.time_remaining == r.world.time_left
    r.world.post(1, "GAME OVER!", "alice has won the game with a score of 6!")
    client.update()
    assert game.is_over and "alice has won" in game.game_over.body


def test_wait_for_next_turn_polls_without_a_push():
    r = ready(TP04)
    r.world.turn += 1
    r.world.touch(r.world.objects[0])
    assert r.client.wait_for_next_turn(timeout=2, poll_interval=0.01) == 1


def test_wait_for_next_turn_times_out():
    r = ready(TP03)
    with pytest.raises(RequestTimeout):
        r.client.wait_for_next_turn(timeout=0.05, poll_interval=0.01)
