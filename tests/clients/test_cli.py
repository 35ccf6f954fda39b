"""``tae-client`` against the threaded fake server (tests/clients/fake_server.py): what every
command prints, as text and as JSON, its exit codes, and the all-or-nothing submission."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import datetime

import pytest
from click.testing import CliRunner

from clients.cli import cli
from protocol import Fail, FailCode, Version
from tests.support.json_schemas import json_answer

from .conftest import invoke, invoke_json
from .fake_server import REINFORCE, FakeConnection, ThreadedFakeServer, tae_world

pytestmark = pytest.mark.timeout(30)

VERSIONS = [Version.TP03, Version.TP04]


def turn_file(tmp_path, orders, name="turn.toml", **top):
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(dict(top, orders=orders)))
    else:
        lines = [f"{key} = {json.dumps(value)}" for key, value in top.items()]
        if not orders:
            lines.append("orders = []")
        for order in orders:
            lines.append("[[orders]]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in order.items()]
        path.write_text("\n".join(lines) + "\n")
    return str(path)


def alice_fleet(world, name, design=None):
    for obj in world.objects.values():
        if obj.owner == 1 and obj.name == name and obj.type == 4:
            if design is None or world.designs[obj.ships[0][0]].name == design:
                return obj
    raise LookupError(name)


# ------------------------------------------------------------------------------------------------
# Read commands
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_status(server, version):
    data = invoke_json(server, "status", version=version)
    assert set(data) == {
        "schema",
        "seconds_left",
        "server",
        "game",
        "player",
        "seat_note",
        "turn",
        "turn_name",
        "phase",
        "time_left",
        "deadline",
        "players",
        "waiting_for",
        "orders_queued",
        "scores",
        "conflict",
        "game_over",
    }
    assert data["player"] == {"id": 1, "name": "alice"} and data["seat_note"] is None
    assert (data["turn"], data["phase"], data["seconds_left"], data["scores"]) == (0, "normal", 300, None)
    assert data["time_left"] == 300  # the old key, kept one release
    assert [p["name"] for p in data["players"]] == ["alice", "bob"]
    assert data["server"]["protocol"] == version.name.lower()
    if version == Version.TP04:
        assert data["game"] == "fake" and data["waiting_for"] == []
    else:
        assert data["waiting_for"] is None and data["players"][0]["waiting"] is None
    deadline = datetime.fromisoformat(data["deadline"])
    assert deadline.utcoffset() is not None and abs(deadline.timestamp() - time.time() - 300) < 30
    text = invoke(server, "status", version=version).stdout
    assert "turn       0" in text and "(in 5 min)" in text and "alice (me)" in text
    assert f"{deadline.astimezone():%H:%M}" in text  # the local time of day


def test_a_deadline_reads_as_a_local_date_and_time_and_the_time_left():
    from zoneinfo import ZoneInfo

    from clients.cli_status import format_deadline

    berlin = ZoneInfo("Europe/Berlin")
    assert (
        format_deadline("2024-05-14T18:20:00+00:00", 11520, berlin)
        == "Tue 14 May 2024, 20:20 CEST (in 3 h 12 min)"
    )
    assert format_deadline(None, None) == "no deadline"


@pytest.mark.parametrize("version", VERSIONS)
def test_status_shows_the_turn_kind_and_a_removed_player(server, world, version):
    bob = next(p for p in world.players.values() if p.name == "bob")
    bob.race = "Removed"
    data = invoke_json(server, "status", version=version)
    assert [(p["name"], p["removed"]) for p in data["players"]] == [("alice", False), ("bob", True)]
    text = invoke(server, "status", version=version).stdout
    assert "turn       0 (normal turn)" in text and "bob: removed" in text


@pytest.mark.parametrize("version", VERSIONS)
def test_status_shows_the_servers_note_while_the_stand_in_plays_my_seat(server, world, version):
    # tpserver-tae words my own seat in the race of the Player frame it sends me of myself
    note = "You missed turns, so the stand-in plays your seat; give an order or say you are back."
    alice = next(p for p in world.players.values() if p.name == "alice")
    alice.race = note
    data = invoke_json(server, "status", version=version)
    assert data["seat_note"] == note
    text = invoke(server, "status", version=version).stdout
    assert "seat" in text and "give an order or say you are back" in " ".join(text.split())
    alice.race = "Human"
    assert invoke_json(server, "status", version=version)["seat_note"] is None


def test_the_seat_line_is_the_servers_note_with_a_vacations_end_in_my_time_zone():
    from clients.cli_absence import seat_line

    note = "You missed turns, so the stand-in plays your seat; give an order or say you are back."
    assert seat_line({"seat": "absent", "stand_in": True, "note": note}) == note
    away = seat_line({"seat": "on vacation", "vacation_until": 2_000_000_000, "note": "N."})
    assert away.startswith("on vacation until 20") and away.endswith(": N.")
    playing = {"seat": "playing", "note": None, "missed_turns": 1, "absent_after_missed_turns": 2}
    assert (
        seat_line(playing)
        == "you play your own seat (the stand-in plays after 2 missed turns in a row; you missed 1)"
    )


def test_status_after_a_turn_shows_scores(server, world):
    world.end_turn({1: (2, 1, 0, 3, 1)})
    data = invoke_json(server, "status")
    assert data["turn"] == 1
    assert data["scores"] == {
        "money": 2,
        "technology": 1,
        "people": 0,
        "raw_materials": 3,
        "artifacts": 1,
        "final": 1,
        "artifacts_distributed": False,
        "turn": 1,
    }
    assert "M 2  T 1  P 0  R 3  A 1  (final 1)" in invoke(server, "status").stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_board(server, version):
    data = invoke_json(server, "board", version=version)
    assert (data["width"], data["height"], data["turn"]) == (4, 3, 0)
    assert data["rows"] == ["M..A", ".AL.", ".mM."]
    squares = {(s["x"], s["y"]): s for s in data["systems"]}
    assert squares[(1, 0)]["colony"] == "merchant"
    assert squares[(3, 2)]["artifact"] and squares[(3, 2)]["colony"] == "scientist"
    assert squares[(0, 2)]["terrain"] == "M" and not squares[(0, 2)]["habitable"]
    (leader,) = squares[(2, 1)]["leaders"]
    assert leader["type"] == "scientist" and leader["owner_name"] == "alice" and leader["mine"]
    region = next(r for r in data["regions"] if [2, 1] in r["systems"])
    assert region["tag"] == "a" and region["colonies"]["scientist"] == 1
    assert region["leaders"][0]["type"] == "scientist"

    lines = invoke(server, "board", "--no-color", version=version).stdout.splitlines()
    assert lines[0].startswith("  2 ~~  .   .   A ")  # the highest row first, row 0 at the bottom
    assert lines[1].startswith("  1 .   A a 1Sa .")
    assert lines[2].startswith("  0 .   m a ~~  .")
    assert lines[3].split() == ["0", "1", "2", "3"]
    assert "\x1b[" not in "\n".join(lines)
    assert any("region" in line and "alice's scientist" in line for line in lines)


def test_board_colour_is_forced_or_off(server, monkeypatch):
    assert "\x1b[" in invoke(server, "--color", "board").stdout
    assert "\x1b[" not in invoke(server, "board").stdout  # not a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in invoke(server, "board").stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_fleets(server, version):
    data = invoke_json(server, "fleets", version=version)["fleets"]
    assert [f["ref"] for f in data] == [
        "colonist:merchant",
        "colonist:mining",
        "merchant-leader",
        "scientist-leader",
        "settler-leader",
        "mining-leader",
        "bomber",
    ]
    scientist = data[3]
    assert scientist["position"] == [2, 1] and scientist["allowed"] == ["Move"]
    assert all(f["mine"] and f["owner_name"] == "alice" for f in data)
    assert set(data[0]) == {
        "id",
        "ref",
        "name",
        "kind",
        "type",
        "owner",
        "owner_name",
        "mine",
        "system",
        "position",
        "allowed",
        "orders",
    }
    everyone = invoke_json(server, "fleets", "--all", version=version)["fleets"]
    bobs = [f for f in everyone if f["owner_name"] == "bob"]
    assert [f["ref"] for f in bobs][:2] == ["colonist:?", "colonist:?"]  # hidden types (R27)
    text = invoke(server, "fleets", version=version).stdout
    assert "scientist-leader" in text and "2,1" in text and "home" in text


def test_messages_filters(server, world):
    world.end_turn()
    world.post(1, "Colonize fleet order complete", 'You\'re fleet, "Colonist Fleet" has [won].')
    everything = invoke_json(server, "messages")["messages"]
    assert [(m["turn"], m["subject"]) for m in everything] == [
        (0, "Welcome"),
        (1, "Turn complete"),
        (1, "Colonize fleet order complete"),
    ]
    assert set(everything[0]) == {"board", "slot", "turn", "subject", "body"}
    assert len(invoke_json(server, "messages", "--since-turn", "1")["messages"]) == 2
    assert [m["subject"] for m in invoke_json(server, "messages", "--subject", "colonize")["messages"]] == [
        "Colonize fleet order complete"
    ]
    assert len(invoke_json(server, "messages", "--last", "1")["messages"]) == 1
    text = invoke(server, "messages").stdout
    assert "[won]." in text  # server text is not taken as markup


# ------------------------------------------------------------------------------------------------
# Single orders
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_order_insert_list_remove(server, world, version):
    leader = alice_fleet(world, "Scientist Leader")
    text = invoke(server, "order", "insert", "scientist-leader", "Move", "0,0", version=version).stdout
    assert text == f"inserted Move by scientist-leader {leader.id} → 0,0 (slot 0)\n"
    orders = invoke_json(server, "orders", version=version)["orders"]
    assert orders == [
        {
            "fleet": leader.id,
            "fleet_ref": "scientist-leader",
            "slot": 0,
            "order": "Move",
            "order_type": 2,
            "target": {"id": world.system_at(0, 0).id, "x": 0, "y": 0, "name": "0, 0"},
        }
    ]
    assert "scientist-leader" in invoke(server, "orders", version=version).stdout
    removed = invoke_json(server, "order", "remove", str(leader.id), version=version)
    assert removed == {
        "schema": "tae-client/order-remove/1",
        "fleet": leader.id,
        "fleet_ref": "scientist-leader",
        "removed": [0],
        "failed": [],
    }
    assert invoke(server, "orders", version=version).stdout.strip() == "no orders queued"


def test_order_refusals_and_probes(server, world):
    result = invoke(server, "order", "insert", "colonist:merchant", "Move", "0,0", expect=1)
    merchant = alice_fleet(world, "Colonist Fleet", "MerchantShip")
    assert result.stderr == (
        f"tae-client: Move by colonist:merchant {merchant.id} refused: Not allowed to add that "
        f"order type. (colonist:merchant {merchant.id} accepts: Colonize)\n"
    )
    probe = invoke_json(server, "order", "probe", "bomber", "Attack", "3,0")
    assert probe["accepted"] is True
    assert (
        "would accept Attack by bomber" in invoke(server, "order", "probe", "bomber", "Attack", "#2").stdout
    )
    invoke(server, "order", "probe", "bomber", "Move", "3,0", expect=1)
    assert invoke(server, "order", "insert", "bomber", "Attack", "9,9", expect=1).stderr == (
        "tae-client: there is no board system at 9,9 (the board is x 0..3, y 0..2)\n"
    )
    assert "needs a TARGET" in invoke(server, "order", "insert", "bomber", "Attack", expect=2).stderr
    assert (
        "you have no colonist:settler"
        in invoke(server, "order", "insert", "colonist:settler", "Colonize", "0,0", expect=1).stderr
    )
    bob_bomber = next(o for o in world.objects.values() if o.owner == 2 and o.name == "Bomber")
    assert (
        "is not yours"
        in invoke(server, "order", "insert", str(bob_bomber.id), "Attack", "0,0", expect=1).stderr
    )
    invoke(server, "order", "insert", "bomber", "Attack", "0,0")
    invoke(server, "order", "insert", "merchant-leader", "Move", "0,1")
    assert invoke_json(server, "order", "clear") == {
        "schema": "tae-client/order-clear/1",
        "removed": 2,
        "failed": [],
    }
    assert invoke_json(server, "orders")["orders"] == []


# ------------------------------------------------------------------------------------------------
# Whole turns
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_submit_a_whole_turn(server, world, tmp_path, version):
    path = turn_file(
        tmp_path,
        [
            {"fleet": "colonist:merchant", "order": "Colonize", "target": [2, 0]},
            {"fleet": "settler-leader", "order": "Move", "target": "0,1"},
        ],
        turn=0,
    )
    report = invoke_json(server, "submit", path, version=version)
    assert report["ok"] and report["stage"] is None and report["file"] == path
    assert [(o["order"], o["fleet_ref"], o["status"], o["slot"]) for o in report["orders"]] == [
        ("Colonize", "colonist:merchant", "inserted", 0),
        ("Move", "settler-leader", "inserted", 0),
    ]
    assert report["orders"][0]["target"] == {"id": world.system_at(2, 0).id, "x": 2, "y": 0}
    queued = invoke_json(server, "orders", version=version)["orders"]
    assert [(o["fleet_ref"], o["order"]) for o in queued] == [
        ("colonist:merchant", "Colonize"),
        ("settler-leader", "Move"),
    ]


def test_submit_text_report(server, tmp_path):
    path = turn_file(tmp_path, [{"fleet": "bomber", "order": "Attack", "target": [3, 0]}])
    result = invoke(server, "submit", path)
    assert result.stdout.startswith("ok: 1 order inserted for turn 0\n")
    assert "Attack" in result.stdout and "inserted" in result.stdout and result.stderr == ""


def test_a_refused_probe_inserts_nothing(server, world, tmp_path):
    path = turn_file(
        tmp_path,
        [
            {"fleet": "settler-leader", "order": "Move", "target": [0, 1]},
            {"fleet": "colonist:mining", "order": "Colonize", "target": [0, 2]},
        ],
        name="turn.json",
    )
    result = invoke(server, "submit", path, expect=1)
    assert result.stderr == "tae-client: the server refused 1 order; nothing was inserted\n"
    mining = alice_fleet(world, "Colonist Fleet", "MiningShip")
    assert (
        f"order 2 (Colonize by {mining.id} colonist:mining → 0,2): refused: Not allowed to add "
        f"that order type. (colonist:mining {mining.id} accepts: ColonizeMining)"
    ) in " ".join(result.stdout.split())
    report = invoke_json(server, "submit", path, expect=1)
    assert (report["ok"], report["stage"]) == (False, "probe")
    assert [o["status"] for o in report["orders"]] == ["not-sent", "refused"]
    assert report["orders"][1]["code"] == FailCode.UNAVAILABLE_PERMANENTLY
    assert all(not q.orders for q in world.queues.values())
    assert invoke_json(server, "orders")["orders"] == []


def test_a_refused_insert_is_rolled_back(server, world, tmp_path, monkeypatch):
    inserted = []
    original = FakeConnection._on_InsertOrder

    def third_refused(self, message, sequence):
        if len(inserted) == 2:
            return self._one(
                Fail(FailCode.UNAVAILABLE_TEMPORARILY, "At most 2 orders per player per turn."), sequence
            )
        inserted.append(message)
        return original(self, message, sequence)

    monkeypatch.setattr(FakeConnection, "_on_InsertOrder", third_refused)
    path = turn_file(
        tmp_path,
        [
            {"fleet": "bomber", "order": "Attack", "target": [3, 0]},
            {"fleet": "settler-leader", "order": "Move", "target": [0, 1]},
            {"fleet": "mining-leader", "order": "Move", "target": [2, 2]},
            {"fleet": "merchant-leader", "order": "Move", "target": [2, 0]},
        ],
    )
    report = invoke_json(server, "submit", path, expect=1)
    assert (report["ok"], report["stage"], report["rolled_back"]) == (False, "insert", 2)
    assert [o["status"] for o in report["orders"]] == ["rolled-back", "rolled-back", "refused", "not-sent"]
    assert report["orders"][2]["reason"] == "At most 2 orders per player per turn."
    assert "2 orders inserted before it were removed again" in report["message"]
    assert all(not q.orders for q in world.queues.values())


def test_replace_removes_queued_orders_and_restores_them_on_failure(server, world, tmp_path):
    invoke(server, "order", "insert", "bomber", "Attack", "3,0")
    bad = turn_file(tmp_path, [{"fleet": "bomber", "order": "Move", "target": [0, 1]}], name="bad.toml")
    report = invoke_json(server, "submit", "--replace", bad, expect=1)
    assert [r["status"] for r in report["replaced"]] == ["restored"]
    assert [o["order"] for o in invoke_json(server, "orders")["orders"]] == ["Attack"]
    good = turn_file(
        tmp_path, [{"fleet": "bomber", "order": "Attack", "target": [0, 0]}], name="good.toml", replace=True
    )
    report = invoke_json(server, "submit", good)
    assert report["ok"] and [r["order"] for r in report["replaced"]] == ["Attack"]
    assert [o["target"]["x"] for o in invoke_json(server, "orders")["orders"]] == [0]


def test_dry_run_inserts_nothing(server, world, tmp_path):
    path = turn_file(tmp_path, [{"fleet": "bomber", "order": "Attack", "target": [3, 0]}])
    report = invoke_json(server, "submit", "--dry-run", path)
    assert report["ok"] and report["dry_run"] and report["orders"][0]["status"] == "accepted"
    assert invoke_json(server, "orders")["orders"] == []


def test_reinforce_with_a_count(server, world, tmp_path):
    for obj in world.objects.values():
        if obj.owner == 1 and obj.name == "Colonist Fleet":
            world.queues[obj.queue].order_types = (REINFORCE,)
        elif obj.owner == 1 and obj.queue is not None:
            world.queues[obj.queue].order_types = ()
    assert invoke_json(server, "status")["phase"] == "combat"
    too_many = turn_file(tmp_path, [{"order": "Reinforce", "count": 3}], name="three.toml")
    report = invoke_json(server, "submit", too_many, expect=1)
    assert report["stage"] == "resolve"
    assert report["orders"][0]["reason"] == ("only 2 of your fleets can take this order now, 3 asked")
    two = turn_file(tmp_path, [{"order": "Reinforce", "count": 2}], name="two.toml")
    report = invoke_json(server, "submit", two)
    assert [(o["order"], o["status"]) for o in report["orders"]] == [("Reinforce", "inserted")] * 2
    assert len(invoke_json(server, "orders")["orders"]) == 2


def test_a_file_for_another_turn_is_refused(server, tmp_path):
    path = turn_file(tmp_path, [], turn=4)
    result = invoke(server, "submit", path, expect=1)
    assert result.stderr == "tae-client: the file is for turn 4, but the game is at turn 0\n"


def test_a_file_for_the_other_kind_of_turn_is_refused(server, world, tmp_path):
    combat = turn_file(tmp_path, [{"order": "Reinforce", "count": 0}], name="combat.toml", when="combat")
    result = invoke(server, "submit", combat, expect=1)
    assert result.stderr == "tae-client: the file is for a combat turn, but turn 0 is a normal turn\n"
    normal = turn_file(tmp_path, [], name="normal.toml", when="normal")
    assert invoke_json(server, "submit", normal)["ok"]
    for obj in world.objects.values():  # a combat turn alice is part of
        if obj.owner == 1 and obj.queue is not None:
            world.queues[obj.queue].order_types = (REINFORCE,) if obj.name == "Colonist Fleet" else ()
    result = invoke(server, "submit", normal, expect=1)
    assert result.stderr == "tae-client: the file is for a normal turn, but turn 0 is a combat turn\n"
    assert invoke_json(server, "submit", combat)["ok"]


def test_a_bad_file_exits_2_before_connecting(tmp_path):
    path = tmp_path / "turn.toml"
    path.write_text('[[orders]]\nfleet = "bomber"\norder = "Attack"\n')
    result = CliRunner().invoke(cli, ["--port", "1", "--user", "a", "--password", "b", "submit", str(path)])
    assert result.exit_code == 2
    assert result.stderr == f"tae-client: {path}: order 1: Attack needs a 'target' ([x, y] or a system id)\n"


def test_a_long_path_of_the_users_own_is_repeated_whole(tmp_path):
    folder = tmp_path / ("turns-" + "x" * 100)
    folder.mkdir()
    path = folder / "turn.toml"
    path.write_text("[[orders]\n")
    result = CliRunner().invoke(cli, ["--port", "1", "--user", "a", "--password", "b", "submit", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"tae-client: {path}: not valid TOML")
    missing = folder / "absent.toml"
    args = ["--port", "1", "--user", "a", "--password", "b", "submit", str(missing)]
    result = CliRunner().invoke(cli, args)
    assert str(missing) in result.stderr and "…" not in result.stderr


def test_finish_and_wait(server, world):
    assert invoke(server, "finish").stdout == "finished turn 0\n"
    assert world.finished == {1}
    timer = threading.Timer(0.3, world.end_turn, kwargs={"scores": {1: (1, 0, 0, 0, 0)}})
    timer.start()
    started = time.monotonic()
    result = invoke(server, "wait", "--poll", "5")
    assert time.monotonic() - started < 4  # woken by the pushed TimeRemaining, not the poll
    assert result.stdout == "turn 1 started; scores M 1 T 0 P 0 R 0 A 0\n"
    timer.join()


def test_wait_warns_when_i_have_not_finished_and_times_out_with_5(server, world):
    world_waiting = world
    original = FakeConnection._answer

    def waiting_for_alice(self, message, sequence):
        from protocol import GetTimeRemaining, TimeRemaining

        if isinstance(message, GetTimeRemaining) and self.player:
            return self._one(TimeRemaining(300, 0, world_waiting.turn, "Turn 0", (1,)), sequence)
        return original(self, message, sequence)

    FakeConnection._answer = waiting_for_alice
    try:
        result = invoke(server, "wait", "--timeout", "0.3", "--poll", "0.1", expect=5)
    finally:
        FakeConnection._answer = original
    assert result.stderr == (
        "tae-client: note: you have not finished turn 0\ntae-client: turn 0 had not ended after 0.3 s\n"
    )


def test_wait_after_a_turn_that_already_ended_returns_at_once(server, world):
    world.end_turn()
    data = invoke_json(server, "wait", "--after-turn", "0", "--timeout", "1")
    assert (data["turn"], data["previous_turn"]) == (1, 0)


def test_play_submits_finishes_and_waits(server, world, tmp_path):
    def end_when_alice_finished():
        deadline = time.monotonic() + 10
        while 1 not in world.finished and time.monotonic() < deadline:
            time.sleep(0.02)
        world.end_turn()

    thread = threading.Thread(target=end_when_alice_finished)
    thread.start()
    path = turn_file(tmp_path, [{"fleet": "bomber", "order": "Attack", "target": [3, 0]}])
    data = invoke_json(server, "play", path, "--poll", "0.2", "--timeout", "10")
    thread.join()
    assert data["submit"]["ok"] and data["finished"] == 0 and data["wait"]["turn"] == 1
    world.finished.clear()
    bad = turn_file(tmp_path, [{"fleet": "bomber", "order": "Move", "target": [3, 0]}], name="bad.toml")
    result = invoke(server, "play", bad, expect=1)
    assert world.finished == set()  # a refused turn is not finished
    assert "refused" in result.stdout


def test_game_over(server, world, tmp_path):
    world.post(1, "GAME OVER!", "alice has won the game with a score of 6!")
    status = invoke_json(server, "status")
    assert status["phase"] == "over"
    over = status["game_over"]
    assert (over["turn"], over["message"]) == (0, "alice has won the game with a score of 6!")
    assert over["ranking"] == [] and over["reason"] is None  # REF's sentence carries no ranking
    path = turn_file(tmp_path, [])
    result = invoke(server, "submit", path, expect=4)
    assert result.stderr == (
        "tae-client: the game is over (turn 0): alice has won the game with a score of 6!\n"
    )
    invoke(server, "finish", expect=4)
    result = invoke(server, "wait", expect=4)
    assert "alice has won" in result.stdout
    assert invoke_json(server, "wait", expect=4)["game_over"]["turn"] == 0


# ------------------------------------------------------------------------------------------------
# Accounts and failures
# ------------------------------------------------------------------------------------------------


def test_create_account(server, world):
    result = invoke(server, "create-account", user="carol", password="pw")
    assert result.stdout == "account carol created (Account created.)\n"
    assert any(p.name == "carol" for p in world.players.values())
    result = invoke(server, "create-account", user="carol", password="pw", expect=1)
    assert result.stderr == "tae-client: account carol not created: Account exists\n"


def test_a_5000_character_name_is_not_echoed_back_whole(server):
    name = "n" * 5000
    invoke(server, "create-account", user=name, password="pw")
    refused = invoke(server, "--json", "create-account", user=name, password="pw", expect=1)
    cut = "n" * 80 + "…"
    assert refused.stderr == f"tae-client: account {cut} not created: Account exists\n"
    assert json_answer(refused.stdout)["error"]["message"] == f"account {cut} not created: Account exists"


def test_wrong_password_exits_1(server):
    result = invoke(server, "status", password="nope", expect=1)
    assert result.stderr == ("tae-client: login as alice refused: Login Error - bad username or password\n")
    assert result.stdout == "" and "nope" not in result.output


def test_login_with_a_game_name(server):
    assert invoke_json(server, "status", user="alice@fake")["game"] == "fake"


def test_server_down_exits_3():
    with ThreadedFakeServer(tae_world()) as stopped:
        port = stopped.port
    result = CliRunner().invoke(
        cli, ["--port", str(port), "--host", "127.0.0.1", "--user", "a", "--password", "b", "status"]
    )
    assert result.exit_code == 3
    assert result.stderr == f"tae-client: connection to 127.0.0.1:{port} refused\n"


def test_a_silent_server_times_out_with_3(server):
    server.silent = True
    started = time.monotonic()
    result = invoke(server, "status", timeout="0.3", expect=3)
    assert time.monotonic() - started < 3
    assert result.stderr.startswith("tae-client: the server did not answer in time")
    assert result.stderr.count("\n") == 1


def test_environment_settings_are_used(server):
    env = {
        "TAE_HOST": "127.0.0.1",
        "TAE_PORT": str(server.port),
        "TAE_USER": "bob",
        "TAE_PASSWORD": "hunter2",
    }
    result = CliRunner().invoke(cli, ["--json", "status"], env=env)
    assert result.exit_code == 0, result.output
    assert json_answer(result.stdout)["player"]["name"] == "bob"


def test_internal_errors_are_one_line_unless_debug(server, monkeypatch):
    from clients import cli_output

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli_output, "fleets_data", broken)
    result = invoke(server, "fleets", expect=70)
    assert result.stderr == ("tae-client: internal error: ZeroDivisionError: boom (rerun with --debug)\n")
    result = CliRunner().invoke(
        cli,
        [
            "--debug",
            "--port",
            str(server.port),
            "--host",
            "127.0.0.1",
            "--user",
            "alice",
            "--password",
            "secret",
            "fleets",
        ],
    )
    assert isinstance(result.exception, ZeroDivisionError)


def test_submit_reads_standard_input(server, world):
    base = [
        "--host",
        "127.0.0.1",
        "--port",
        str(server.port),
        "--user",
        "alice",
        "--password",
        "secret",
        "--json",
    ]
    orders = json.dumps([{"fleet": "bomber", "order": "Attack", "target": "3,0"}])
    result = CliRunner().invoke(cli, base + ["submit", "-"], input=orders)
    assert result.exit_code == 0, result.output
    assert json_answer(result.stdout)["file"] == "<stdin>"
    toml = '[[orders]]\nfleet = "merchant-leader"\norder = "Move"\ntarget = [0, 1]\n'
    result = CliRunner().invoke(cli, base + ["submit", "--format", "toml", "-"], input=toml)
    assert result.exit_code == 0, result.output
    assert len(invoke_json(server, "orders")["orders"]) == 2


# ------------------------------------------------------------------------------------------------
# Orders that cannot succeed (R7a): the server's reason for each
# ------------------------------------------------------------------------------------------------


def test_a_probe_refused_for_a_static_reason_prints_it(server, world):
    # (1, 0) holds a merchant colony: Colonize there can never work this turn (Fail code 3).
    result = invoke(server, "order", "probe", "colonist:merchant", "Colonize", "1,0", expect=1)
    assert result.stderr.endswith("refused: 1, 0 is already colonized\n")
    assert "accepts:" not in result.stderr  # the type is allowed: only the target is wrong
    data = json_answer(
        invoke(server, "--json", "order", "probe", "colonist:merchant", "Colonize", "1,0", expect=1).stdout
    )
    assert (data["accepted"], data["code"]) == (False, 3)
    assert data["reason"].endswith("1, 0 is already colonized")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_dry_run_prints_the_reason_of_every_refused_order(server, world, tmp_path, version):
    orders = [
        {"fleet": "colonist:merchant", "order": "Colonize", "target": [1, 0]},
        {"fleet": "bomber", "order": "Attack", "target": [3, 2]},
        {"fleet": "colonist:mining", "order": "ColonizeMining", "target": [2, 0]},
    ]
    path = turn_file(tmp_path, orders)
    report = json_answer(
        invoke(server, "--json", "submit", "--dry-run", path, version=version, expect=1).stdout
    )
    assert [(o["status"], o["code"], o["reason"]) for o in report["orders"]] == [
        ("refused", 3, "1, 0 is already colonized"),
        ("refused", 3, "3, 2 carries an alien artifact"),
        ("accepted", None, None),  # a dry run says which orders would pass
    ]
    text = invoke(server, "submit", "--dry-run", path, version=version, expect=1).stdout
    assert "order 1 (Colonize by" in text and "→ 1,0): refused: 1, 0 is already colonized" in text
    assert "→ 3,2): refused: 3, 2 carries an alien artifact" in text
    assert invoke_json(server, "orders")["orders"] == []


def test_submit_from_standard_input_detects_toml_and_json(server, world):
    toml = '[[orders]]\nfleet = "bomber"\norder = "Attack"\ntarget = [3, 0]\n'
    report = json_answer(invoke(server, "--json", "submit", "--dry-run", "-", input=toml).stdout)
    assert report["ok"] and report["orders"][0]["order"] == "Attack"
    for text in ('{"orders": [{"fleet": "bomber", "order": "Attack", "target": "3,0"}]}', ' [ {"fleet": 1,'):
        result = invoke(
            server, "submit", "--dry-run", "-", input=text, expect=0 if text.startswith("{") else 2
        )
    assert result.stderr == (
        "tae-client: <stdin>: not valid JSON: Expecting property name enclosed in double quotes (line 1, "
        "column 16) (read as JSON; give --format toml if it is TOML)\n"
    )
    result = invoke(server, "submit", "-", input="orders = [", expect=2)
    assert result.stderr.startswith("tae-client: <stdin>: not valid TOML: ")
    assert result.stderr.endswith("(read as TOML; give --format json if it is JSON)\n")
    result = invoke(server, "submit", "--format", "json", "-", input=toml, expect=2)
    assert "not valid JSON" in result.stderr and "read as" not in result.stderr
    assert "detected" in invoke(server, "submit", "--help").stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(server, world):
    """`tae-client … | head -1`: no traceback, no "Broken pipe" message, exit 0."""

    for turn in range(400):
        world.post(1, "Turn complete", f"turn {turn}: " + "x" * 300)
    command = [
        sys.executable,
        "-m",
        "clients.cli",
        "--host",
        "127.0.0.1",
        "--port",
        str(server.port),
        "--user",
        "alice",
        "--password",
        "secret",
        "--json",
        "messages",
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("TAE_")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout.readline().strip() == b"{"
    process.stdout.close()  # more than a pipe's worth is still to come
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr) == (0, b"")


def test_wait_reconnects_after_a_server_restart(world):
    """The server stops (every connection closed) and comes back on the same port; the turn
    then ends: `wait` reconnects, logs in again and reports the new turn."""
    first = ThreadedFakeServer(world).__enter__()
    port = first.port
    restarted: list[ThreadedFakeServer] = []

    def restart_then_end_the_turn():
        deadline = time.monotonic() + 10
        while not any(c.player for c in first.connections) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # `wait` is waiting now
        first.__exit__(None, None, None)
        time.sleep(0.5)  # down for a while: the first try to reconnect fails
        second = ThreadedFakeServer(world, port=port).__enter__()
        restarted.append(second)
        while not any(c.player for c in second.connections) and time.monotonic() < deadline + 10:
            time.sleep(0.05)
        world.end_turn()

    thread = threading.Thread(target=restart_then_end_the_turn)
    thread.start()
    try:
        result = invoke(first, "--json", "wait", "--poll", "0.2", "--timeout", "20", "--retries", "5")
    finally:
        thread.join()
        for server in restarted:
            server.__exit__(None, None, None)
    data = json_answer(result.stdout)
    assert (data["previous_turn"], data["turn"]) == (0, 1)
    assert "tae-client: note: lost the connection" in result.stderr
    assert "tae-client: note: reconnected (turn" in result.stderr


def test_wait_gives_up_when_the_server_stays_away(world):
    server = ThreadedFakeServer(world).__enter__()

    def stop():
        deadline = time.monotonic() + 10
        while not any(c.player for c in server.connections) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        server.__exit__(None, None, None)

    thread = threading.Thread(target=stop)
    thread.start()
    try:
        result = invoke(server, "wait", "--poll", "0.2", "--retries", "2", expect=3)
    finally:
        thread.join()
    assert result.stderr.count("reconnecting in") == 2
    assert result.stderr.splitlines()[-1].endswith("(gave up after 2 tries to reconnect)")
    assert f"connection to 127.0.0.1:{server.port} refused" in result.stderr.splitlines()[-1]
