"""Whole games of TaE over real TCP on 127.0.0.1, in TP03 and TP04, with scripted players.

The map is small so that every phase of a game happens in three turns: a revolt (internal
conflict) and its combat turn, artifact collection, and the end of the game.

    row 2   ......A
    row 1   .......
    row 0   A.....A
"""

from __future__ import annotations

import socket

import pytest

import protocol as tp
from clients import BlockingClient, ColonyKind, FleetKind, RequestFailed, Version
from tests.support.servers import free_port, serve_process

MAP = "......A\n.......\nA.....A\n"


@pytest.fixture
def server(tmp_path):
    (tmp_path / "map.txt").write_text(MAP)
    port = free_port()
    args = ["--listen", f"tcp:{port}:interface=127.0.0.1", "--turn-length", "0", "--map", "map.txt"]
    args += ["--seed", "5", "--database", "sqlite:///tae.db"]
    with serve_process(tmp_path, args, port):
        yield port


def player(port: int, name: str, version: Version) -> BlockingClient:
    client = BlockingClient.connect("127.0.0.1", port, version=version, timeout=20)
    client.login(name + "@tae", "pw-" + name, create=True)
    client.update()
    return client


def subjects(client: BlockingClient) -> list[str]:
    return [m.subject for m in client.game.messages()]


def colonist_for_habitable(client: BlockingClient):
    for fleet in client.game.my_colonists():
        if fleet.colony_kind is not ColonyKind.MINING:
            return fleet
    pytest.fail("the fixed seed should deal a non-mining colonist")


def end_turn(clients: list[BlockingClient], acting: list[BlockingClient]) -> None:
    """The acting players finish; everybody sees the next turn."""
    start = clients[0].game.turn
    for client in acting:
        assert isinstance(client.finish_turn(), tp.Okay)
    for client in clients:
        assert client.wait_for_next_turn(timeout=20) == start + 1


@pytest.mark.parametrize("version", [Version.TP04, Version.TP03], ids=["tp04", "tp03"])
def test_a_whole_game_over_tcp(server, version):
    ann, bob, cara, dan = clients = [player(server, name, version) for name in ("ann", "bob", "cara", "dan")]
    try:
        for client in clients:  # the later players joined after the first ones downloaded
            stats = client.update()
        # dan joined last: nothing new for him (TP03 has no player modtimes: players are probed again)
        assert not stats.errors and set(stats.fetched) <= {"players"} and not stats.dropped
        me = ann.game.player_id
        assert me == 1 and bob.game.player_id == 2
        systems = ann.game.systems()
        assert (
            len(systems) == 21
            and systems[(0, 0)].artifact
            and systems[(6, 0)].artifact
            and systems[(6, 2)].artifact
        )
        # The full download: every player sees every object, and only its own colonists' kinds.
        assert {f.owner for f in ann.game.fleets()} == {1, 2, 3, 4}
        assert all(f.colony_kind is None for f in ann.game.fleets(2) if f.kind is FleetKind.COLONIST)
        assert all(f.colony_kind is not None for f in ann.game.my_colonists())

        # Turn 1: ann's scientist leader goes next to the artifact system at (0, 0); bob's
        # scientist leader joins that region at (1, 0): a revolt (R17).
        ann_scientist = ann.game.my_leaders()[ColonyKind.SCIENTIST]
        bob_scientist = bob.game.my_leaders()[ColonyKind.SCIENTIST]
        ann.insert_order(ann_scientist.id, "Move", (0, 1))
        bob.insert_order(bob_scientist.id, "Move", (1, 0))
        with pytest.raises(RequestFailed) as refused:  # a Move on a colonist is not allowed (R7)
            cara.insert_order(cara.game.my_colonists()[0].id, "Move", (3, 1))
        assert refused.value.fail.code == 3
        end_turn(clients, clients)
        assert "Move fleet order complete" in subjects(ann) and "COMBAT!" in subjects(cara)
        combat = [m for m in cara.game.messages() if m.subject == "COMBAT!"][-1]
        assert combat.body == (
            "The next turn is an INTERNAL combat turn! Combatants are:  bob with an "
            "initial strength of 1 and ann with an initial strength of 1"
        )

        # Turn 2, the combat turn: only the combatants act, only with Reinforce (R18).
        reinforcements = [f for f in bob.game.my_colonists() if f.colony_kind is ColonyKind.SCIENTIST]
        for fleet in reinforcements:
            bob.insert_order(fleet.id, "Reinforce")
        with pytest.raises(RequestFailed):
            cara.insert_order(colonist_for_habitable(cara).id, "Colonize", (3, 1))
        end_turn(clients, [ann, bob])  # cara and dan have nothing to do and are not waited for
        won = [m for m in ann.game.messages() if m.subject == "Combat Complete!"][-1]
        winner = "bob" if reinforcements else "ann"  # a tie goes to the defender
        assert won.body == f"{winner} has won the battle with a strength of {1 + len(reinforcements)}!"

        # Turn 3 (bob first): bob joins the two artifact systems on the right and brings his
        # merchant leader; his region holds two artifacts and he takes one (R22), which leaves
        # two on the board: the game ends (R12 (3)).
        bob.insert_order(colonist_for_habitable(bob).id, "Colonize", (6, 1))
        bob.insert_order(bob.game.my_leaders()[ColonyKind.MERCHANT].id, "Move", (5, 0))
        end_turn(clients, clients)
        for client in clients:
            assert client.game.is_over and subjects(client)[-1] == "GAME OVER!"
        final = [m for m in bob.game.messages() if m.subject == "GAME OVER!"][-1]
        assert "Your final score after distributing your alien artifacts was: " in final.body
        assert sum(1 for s in bob.game.systems().values() if s.artifact) == 2
        if version == Version.TP04:
            region = bob.game.systems()[(6, 1)].region
            assert region and region == bob.game.systems()[(5, 0)].region
        with pytest.raises(RequestFailed):  # no orders after the game ended (R25)
            ann.insert_order(colonist_for_habitable(ann).id, "Colonize", (3, 1))
    finally:
        for client in clients:
            client.close()


def test_a_bad_client_does_not_disturb_the_others(server):
    good = player(server, "ann", Version.TP04)
    try:
        with socket.create_connection(("127.0.0.1", server), timeout=5) as bad:
            bad.sendall(b"TP\x04\x00" + bytes(8) + (2**30).to_bytes(4, "big"))  # a frame of 1 GiB
            bad.settimeout(5)
            reply = bad.recv(1000)
            assert reply[:2] == b"TP"  # a Fail, then the server hangs up
            assert bad.recv(1000) == b""
        assert good.time_remaining() is not None
        assert good.update() is not None
    finally:
        good.close()
