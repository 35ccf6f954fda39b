"""The admin protocol on a cluster: an admin client of one node runs every operator command of
the table on a game another node runs (queued for its owner, carried out there through the same
command), refused in the same words as anywhere, and the game's players keep getting their
TimeRemaining. Two `tae-server serve --node` processes on PostgreSQL."""

from __future__ import annotations

import pytest

import protocol as tp
from protocol import Okay, Version
from protocol.admin import CommandResult
from server.game.passwords import hash_password

from ..admin.admin_client import AdminClient
from .test_cluster import NodeProcess, create_games, nodes_view, owner_of, placed, wait_until
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)

USER, PASSWORD = "tpadm", "secret7"


def start_node(pg_url: str, name: str, config) -> tuple[NodeProcess, int]:
    node = NodeProcess(pg_url, name, "--config", str(config), "--admin", "tcp:0:interface=127.0.0.1")
    node.start()
    event = node.wait_for(lambda e: e.get("listener") == "admin")
    return node, int(event["port"])


def test_an_admin_of_one_node_runs_the_table_on_a_game_the_other_node_runs(pg_url, tmp_path):
    config = tmp_path / "tae.toml"
    config.write_text(f'[admin.users]\n{USER} = "{hash_password(PASSWORD, n=2**10)}"\n')
    names = [f"g{index}" for index in range(4)]
    create_games(pg_url, names, "--timer", "basic", "--turn-length", "1h")
    nodes = []
    try:
        for name in ("a", "b"):
            nodes.append(start_node(pg_url, name, config))
        wait_until(lambda: len([n for n in nodes_view(pg_url)["nodes"] if n["alive"]]) == 2, 20, "two nodes")
        wait_until(lambda: placed(pg_url), 30, "every game placed")
        game = wait_until(
            lambda: next((g for g in names if owner_of(pg_url, g) == "b"), None), 30, "a game on node b"
        )
        (_, a_admin_port), (b_node, _) = nodes
        admin = AdminClient(a_admin_port)
        assert admin.start(USER, PASSWORD) == Okay("Welcome")

        assert admin.run("add-player", game, "ann", "pw") == CommandResult(
            1, "A password must have at least 6 characters."
        )
        for player in ("ann", "ben"):
            added = admin.run("add-player", game, player, f"{player}-password")
            assert added.status == 0 and f"player '{player}' added to game '{game}'" in added.text
        assert admin.run("extend", game, "-5") == CommandResult(
            1, "the extension must be longer than 0 s, not '-5'"
        )
        assert admin.run("extend", game, "4294967291") == CommandResult(
            1, "the extension must be at most a year (366 d), not '4294967291'"
        )
        assert admin.run("set", game, "max_players", "-1") == CommandResult(
            1, "max_players cannot be negative, not '-1'"
        )
        paused = admin.run("pause", game)
        assert paused.status == 0 and "paused" in paused.text, paused
        status = admin.run("status", game)
        assert "paused by an operator" in status.text and "server: running (node 'b')" in status.text
        assert admin.run("extend", game, "1h").status == 0
        resumed = admin.run("resume", game)
        assert resumed.status == 0 and "resumed" in resumed.text, resumed
        assert "turn_length is now 2 h" in admin.run("set", game, "turn_length", "2h").text
        assert admin.run("remove-player", game, "ben").status == 0
        assert admin.run("reinstate", game, "ben").text.endswith(f"reinstated in game '{game}'")

        for version in (Version.TP03, Version.TP04):
            client = TPClient(b_node.port, version)
            client.connect()
            client.login(f"ann@{game}", "ann-password")
            remaining = client.time_remaining()
            assert isinstance(remaining, tp.TimeRemaining) and 7000 < remaining.time <= 7200
            client.close()
        ended = admin.run("end-turn", game)
        assert ended == CommandResult(0, f"turn 0 of game '{game}' ended; turn 1 begins"), ended
        admin.close()
    finally:
        for node, _ in nodes:
            node.kill()
