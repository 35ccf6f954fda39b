"""The conflict of a combat turn and the end of the game, read from message references, data lines
and the board (never from sentences), in the library and in ``tae-client status``; REF's sentences
only for servers without references."""

from __future__ import annotations

import pytest

from clients.conflict_view import running_conflict
from clients.game_messages import (
    COMBAT,
    GAME_OVER,
    RefCombat,
    parse_ref_combat,
    read_game_over,
)
from clients.tae_model import ColonyKind
from protocol import BoardMessage, Reference, ReferenceType, Version

from .conftest import invoke, invoke_json
from .fake_server import FLEET, REINFORCE
from .helpers import rig

VERSIONS = [Version.TP03, Version.TP04]
OBJECT, PLAYER = int(ReferenceType.OBJECT), int(ReferenceType.PLAYER)


def fleet_of(world, owner, name):
    return next(o for o in world.objects.values() if o.type == FLEET and o.owner == owner and o.name == name)


def external_settler_war(world):
    """Alice's settler leader at (0, 1), in the region of (0, 0) settler, (1, 0) merchant, (1, 1)
    scientist (and her scientist leader at (2, 1)); bob's settler leader alone at (3, 0); a settler
    colony at (3, 1) joins them: a pending unification system. Bob attacks."""
    alice, bob = fleet_of(world, 1, "Settler Leader"), fleet_of(world, 2, "Settler Leader")
    world.place(alice, 0, 1)
    world.place(bob, 3, 0)
    world.colonize(0, 0, 6)
    world.colonize(3, 1, 6)
    unification = world.system_at(3, 1)
    world.pending.add(unification.id)
    body = (
        "The next turn is an EXTERNAL combat turn! Combatants are: bob with an initial strength of 0 "
        "and alice with an initial strength of 1.\nSettler leaders fight: bob's Settler Leader at 3, 0 "
        "attacks and your Settler Leader at 0, 1 defends.\nThe colony at 3, 1 would join their regions."
    )
    references = (
        (PLAYER, 2),
        (PLAYER, 1),
        (OBJECT, bob.id),
        (OBJECT, world.system_at(3, 0).id),
        (OBJECT, alice.id),
        (OBJECT, world.system_at(0, 1).id),
        (OBJECT, unification.id),
    )
    world.post(1, COMBAT, body, references)
    colonist = next(o for o in world.objects.values() if o.owner == 1 and o.name == "Colonist Fleet")
    world.queues[colonist.queue].order_types = (REINFORCE,)
    return alice, bob, colonist


@pytest.mark.parametrize("version", VERSIONS)
def test_an_external_conflict_from_references_and_the_board(version, world):
    alice, bob, colonist = external_settler_war(world)
    r = rig(version, world)
    r.client.update()
    conflict = running_conflict(r.client.game)
    assert conflict is not None and conflict.from_references
    assert (conflict.internal, conflict.kind, conflict.reinforcements) == (
        False,
        ColonyKind.SETTLER,
        ColonyKind.SETTLER,
    )
    assert (conflict.attacker.player_id, conflict.attacker.leader_id) == (2, bob.id)
    assert (conflict.defender.player_id, conflict.defender.leader_id) == (1, alice.id)
    assert conflict.attacker.system.position == (3, 0) and conflict.defender.system.position == (0, 1)
    assert conflict.unification.position == (3, 1)
    # The strengths the server would compute (and said): bob 0, alice 1 (the settler at 0, 0).
    assert (conflict.attacker.strength, conflict.defender.strength) == (0, 1)
    assert conflict.my_fleets == (colonist.id,)


@pytest.mark.parametrize("version", VERSIONS)
def test_an_internal_conflict(version, world):
    # Bob's scientist leader enters the region of alice's at (2, 1): both next to (1, 1).
    bob = fleet_of(world, 2, "Scientist Leader")
    alice = fleet_of(world, 1, "Scientist Leader")
    world.place(bob, 1, 2)
    world.post(
        1,
        COMBAT,
        "The next turn is an INTERNAL combat turn! Combatants are: bob with an initial strength of 1 and "
        "alice with an initial strength of 1.",
        ((PLAYER, 2), (PLAYER, 1), (OBJECT, bob.id), (OBJECT, world.system_at(1, 2).id), (OBJECT, alice.id)),
    )
    r = rig(version, world)
    r.client.update()
    conflict = running_conflict(r.client.game)
    assert conflict.internal and conflict.kind is ColonyKind.SCIENTIST and conflict.unification is None
    assert conflict.reinforcements is ColonyKind.SCIENTIST
    assert (conflict.attacker.strength, conflict.defender.strength) == (1, 1)
    assert conflict.defender.system.position == (2, 1)
    assert conflict.my_fleets == ()


def test_no_conflict_in_a_normal_turn_or_after_an_old_combat(world):
    r = rig(Version.TP04, world)
    r.client.update()
    assert running_conflict(r.client.game) is None
    world.post(1, COMBAT, "The next turn is an INTERNAL combat turn! …", ((PLAYER, 2), (PLAYER, 1)))
    world.end_turn()
    r.client.update()
    assert running_conflict(r.client.game) is None  # posted for turn 0, the game is at turn 1


def test_a_server_without_references_gives_refs_sentence(world):
    world.post(
        1,
        COMBAT,
        "The next turn is an EXTERNAL combat turn! Combatants are:  bob with an initial "
        "strength of 3 and alice with an initial strength of 1",
    )
    r = rig(Version.TP04, world)
    r.client.update()
    conflict = running_conflict(r.client.game)
    assert not conflict.from_references and not conflict.internal
    assert (conflict.attacker.player_id, conflict.attacker.strength) == (2, 3)
    assert (conflict.defender.name, conflict.defender.strength) == ("alice", 1)
    assert conflict.attacker.system is None and conflict.kind is None


def test_parse_ref_combat():
    body = (
        "The next turn is an EXTERNAL combat turn! Combatants are:  bob with an initial "
        "strength of 3 and ann with an initial strength of 1"
    )
    assert parse_ref_combat(body) == RefCombat(False, "bob", 3, "ann", 1)
    assert parse_ref_combat(body.replace("  bob", " bob") + ".\nMore lines.") == RefCombat(
        False, "bob", 3, "ann", 1
    )
    assert parse_ref_combat("something else") is None


@pytest.mark.parametrize("version", VERSIONS)
def test_status_shows_the_conflict(version, server, world):
    external_settler_war(world)
    data = invoke_json(server, "status", version=version)
    assert data["phase"] == "combat"
    conflict = data["conflict"]
    assert (conflict["type"], conflict["leader_kind"], conflict["reinforcements"]) == (
        "external",
        "settler",
        "settler",
    )
    assert conflict["attacker"]["name"] == "bob" and conflict["attacker"]["system"]["x"] == 3
    assert conflict["defender"]["me"] and conflict["defender"]["strength"] == 1
    assert conflict["unification"]["x"] == 3 and conflict["unification"]["y"] == 1
    assert len(conflict["my_reinforcements"]) == 1 and conflict["tie_goes_to"] == "defender"
    text = invoke(server, "status", version=version).stdout
    assert "External conflict of settler leaders" in text
    assert "attacker  bob at 3,0, initial strength 0" in text
    assert "defender  alice (me) at 0,1, initial strength 1" in text
    assert "the unification system 3,1" in text and "(settler colonists count)" in text


GAME_OVER_BODY = (
    "alice has won the game with a score of 4! Your final score after distributing your alien "
    "artifacts was: 4.\n"
    "The game ended because only 1 alien artifact was left on the board.\n"
    "Final ranking (categories after distributing alien artifacts):\n"
    "1. alice: 4 (Money 4, Technology 5, People 4, Raw Materials 6; 2 alien artifacts)\n"
    "2. bob: 2 (Money 2, Technology 3, People 7, Raw Materials 2; 1 alien artifact)"
)


def game_over_message(body=GAME_OVER_BODY, references=((PLAYER, 1), (PLAYER, 2))):
    refs = tuple(Reference(ReferenceType(t), i) for t, i in references)
    return BoardMessage(1, 3, GAME_OVER, body, 30, refs)


def test_read_game_over_from_the_ranking_lines():
    over = read_game_over(game_over_message(), {1: "alice", 2: "bob"}, me=2)
    assert over.reason == "The game ended because only 1 alien artifact was left on the board."
    assert over.winners == ("alice",) and over.winning_score == 4 and over.final_score == 2
    first, second = over.ranking
    assert (first.rank, first.player_id, first.final, first.categories, first.artifacts) == (
        1,
        1,
        4,
        (4, 5, 4, 6),
        2,
    )
    assert not first.shared and not second.shared and first.winner and not second.winner
    assert (second.name, second.player_id, second.artifacts) == ("bob", 2, 1)
    assert over.standing_of(2) is second and over.standing_of(None) is None


def test_shared_first_place_and_refs_sentence():
    body = GAME_OVER_BODY.replace("2. bob: 2", "1. bob: 4")
    over = read_game_over(game_over_message(body), {1: "alice", 2: "bob"}, me=1)
    assert over.winners == ("alice", "bob") and over.final_score == 4
    assert [(s.rank, s.shared) for s in over.ranking] == [(1, True), (1, True)]
    ref = (
        "ann, bob and cid have won the game with a score of 4!  Your final score after "
        "distributing your alien artifacts was: 3"
    )
    old = read_game_over(game_over_message(ref, ()), {}, me=1)
    assert (old.winners, old.winning_score, old.final_score, old.ranking) == (("ann", "bob", "cid"), 4, 3, ())
    assert read_game_over(game_over_message("nonsense", ()), {}, me=1).winners == ()


@pytest.mark.parametrize("version", VERSIONS)
def test_status_after_the_game_shows_why_and_the_ranking(version, server, world):
    world.post(1, GAME_OVER, GAME_OVER_BODY, ((PLAYER, 1), (PLAYER, 2)))
    data = invoke_json(server, "status", version=version)
    over = data["game_over"]
    assert data["phase"] == "over" and over["winners"] == ["alice"] and over["final_score"] == 4
    assert over["reason"].startswith("The game ended because only 1 alien artifact")
    assert over["rank"] == 1 and over["shared"] is False
    assert over["ranking"][1] == {
        "rank": 2,
        "shared": False,
        "winner": False,
        "player": 2,
        "name": "bob",
        "final": 2,
        "categories_after": {"money": 2, "technology": 3, "people": 7, "raw_materials": 2},
        "artifacts": 1,
        # the flat keys of earlier releases (the categories after artifacts), kept one release
        "money": 2,
        "technology": 3,
        "people": 7,
        "raw_materials": 2,
    }
    # my scores are my final standing (the turn that ended the game reported no others)
    mine = data["scores"]
    assert (mine["money"], mine["technology"], mine["people"], mine["raw_materials"]) == (4, 5, 4, 6)
    assert mine["artifacts"] == 2 and mine["artifacts_distributed"] and mine["final"] == 4
    text = invoke(server, "status", version=version).stdout
    assert "GAME OVER (turn 0)" in text and "The game ended because only 1 alien artifact" in text
    assert "M 4  T 5  P 4  R 6  after 2 artifacts  (final 4)" in text
    assert "Final ranking (categories after artifacts)" in text
    rows = [line.split() for line in text.splitlines() if line.strip()[:2] in ("1 ", "2 ")]
    assert rows == [["1", "alice", "4", "4", "5", "4", "6", "2"], ["2", "bob", "2", "2", "3", "7", "2", "1"]]


@pytest.mark.parametrize("version", VERSIONS)
def test_status_says_a_shared_place(version, server, world):
    body = GAME_OVER_BODY.replace("2. bob: 2", "1. bob: 4").replace(
        "(Money 2, Technology 3, People 7, Raw Materials 2; 1 alien artifact)",
        "(Money 4, Technology 5, People 4, Raw Materials 6; 2 alien artifacts)",
    )
    world.post(1, GAME_OVER, body, ((PLAYER, 1), (PLAYER, 2)))
    over = invoke_json(server, "status", version=version)["game_over"]
    assert [(row["name"], row["rank"], row["shared"], row["winner"]) for row in over["ranking"]] == [
        ("alice", 1, True, True),
        ("bob", 1, True, True),
    ]
    assert over["rank"] == 1 and over["shared"] is True
    text = invoke(server, "status", version=version).stdout
    rows = [line.split()[:4] for line in text.splitlines() if line.strip().startswith("1 (shared)")]
    assert rows == [["1", "(shared)", "alice", "4"], ["1", "(shared)", "bob", "4"]]
