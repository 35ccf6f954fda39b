"""The turn file format and the fleet/target names it uses: checked before anything is sent,
with one-line errors that name the file and the entry."""

from __future__ import annotations

import json

import pytest

from clients.fleet_refs import (
    FleetSelector,
    Target,
    parse_fleet_selector,
    parse_target,
)
from clients.tae_model import ColonyKind, FleetKind
from clients.turn_file import (
    TurnFileError,
    load_turn_file,
    parse_order_type,
    parse_turn_data,
    parse_turn_text,
)

EXAMPLE_TOML = """
turn = 3
replace = true
[[orders]]
fleet = "colonist:merchant"   # or an id
order = "Colonize"
target = [3, 2]
[[orders]]
fleet = "scientist-leader"
order = "move"
target = "4,2"
[[orders]]
order = "Reinforce"
count = 2
"""


def test_the_documented_toml_example():
    turn = parse_turn_text(EXAMPLE_TOML, "t.toml")
    assert (turn.turn, turn.replace, len(turn.orders)) == (3, True, 3)
    colonize, move, reinforce = turn.orders
    assert colonize.fleet == FleetSelector(
        "colonist:merchant", kind=FleetKind.COLONIST, type=ColonyKind.MERCHANT
    )
    assert (colonize.order_type, colonize.target, colonize.number) == (1, Target(xy=(3, 2)), 1)
    assert (move.order_name, move.target) == ("Move", Target(xy=(4, 2)))
    assert move.describe() == "Move scientist-leader → 4,2"
    assert (reinforce.fleet, reinforce.count, reinforce.target) == (None, 2, None)
    assert reinforce.describe() == "Reinforce any fleet ×2"


def test_json_as_an_object_or_a_bare_list(tmp_path):
    orders = [
        {"fleet": 356, "order": 3, "target": 22},
        {"fleet": "bomber", "order": "Attack", "target": "#24"},
    ]
    (tmp_path / "a.json").write_text(json.dumps({"orders": orders}))
    (tmp_path / "b.json").write_text(json.dumps(orders))
    for name in ("a.json", "b.json"):
        turn = load_turn_file(str(tmp_path / name))
        assert [o.fleet.id for o in turn.orders] == [356, None]
        assert [o.target for o in turn.orders] == [Target(id=22), Target(id=24)]
        assert turn.turn is None and turn.replace is False


def test_an_empty_turn_is_allowed():
    assert parse_turn_text("orders = []").orders == ()
    assert parse_turn_text("[]").orders == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"orders": [{"fleet": "bomber", "order": "Attack", "targt": [1, 1]}]},
            "f.toml: order 1: unknown key 'targt' (allowed: fleet, order, target, count)",
        ),
        ({"orders": [{"fleet": "bomber", "order": "Attack"}]}, "f.toml: order 1: Attack needs a 'target'"),
        ({"orders": [{"order": "Move", "target": [1, 1]}]}, "f.toml: order 1: Move needs a 'fleet'"),
        ({"orders": [{}, {"fleet": "bomber", "target": [1, 1]}]}, "f.toml: order 1: no 'order'"),
        (
            {"orders": [{"fleet": "bomber", "order": "Nuke", "target": [1, 1]}]},
            "f.toml: order 1: unknown order 'Nuke' (one of ColonizeMining, Colonize, Move, Attack, "
            "Reinforce)",
        ),
        ({"orders": [{"fleet": "bomber", "order": 9, "target": [1, 1]}]}, "no order type 9"),
        (
            {"orders": [{"fleet": "admiral", "order": "Move", "target": [1, 1]}]},
            "f.toml: order 1: 'admiral' is not a fleet",
        ),
        (
            {"orders": [{"fleet": "bomber", "order": "Attack", "target": [1, 2, 3]}]},
            "is not a target: a position is two whole numbers [x, y]",
        ),
        ({"orders": [{"fleet": "bomber", "order": "Attack", "target": "north"}]}, "'north' is not a target"),
        (
            {"orders": [{"fleet": "bomber", "order": "Attack", "target": [1, 1], "count": 2}]},
            "order 1: 'count' is only for Reinforce",
        ),
        ({"orders": [{"order": "Reinforce", "target": [1, 1]}]}, "Reinforce takes no target"),
        ({"orders": [{"order": "Reinforce", "count": -1}]}, "'count' must be a whole number"),
        ({"orders": [{"order": "Reinforce", "count": True}]}, "'count' must be a whole number"),
        (
            {"orders": [{"fleet": 356, "order": "Reinforce", "count": 2}]},
            "fleet 356 is one fleet; count must be 0 or 1",
        ),
        ({"orders": ["Move"]}, "order 1: expected a table"),
        ({"orders": {"fleet": "bomber"}}, "'orders' must be a list"),
        ({"turn": "three", "orders": []}, "'turn' must be a whole number"),
        ({"replace": "yes", "orders": []}, "'replace' must be true or false"),
        ({"order": []}, "f.toml: unknown key 'order' (allowed: turn, when, replace, orders)"),
        ({"when": "later", "orders": []}, "'when' must be \"normal\" or \"combat\", not 'later'"),
        ({}, "f.toml: no 'orders'"),
        ("orders", "expected a table with 'orders'"),
    ],
)
def test_bad_entries_are_one_line_errors_naming_the_entry(data, message):
    with pytest.raises(TurnFileError) as caught:
        parse_turn_data(data, "f.toml")
    text = str(caught.value)
    assert message in text
    assert "\n" not in text


def test_the_second_entry_is_named():
    data = {
        "orders": [
            {"fleet": "bomber", "order": "Attack", "target": [1, 1]},
            {"fleet": "bomber", "order": "Attack"},
        ]
    }
    with pytest.raises(TurnFileError, match=r"^f.json: order 2: Attack needs a 'target'"):
        parse_turn_data(data, "f.json")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("t.toml", "[[orders]\n", "t.toml: not valid TOML"),
        ("t.json", '{"orders": [', "t.json: not valid JSON"),
        ("t.yaml", "orders: []", "unknown extension '.yaml'"),
        ("t.toml", b"\xff\xfe", "not UTF-8"),
    ],
)
def test_unreadable_files(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TurnFileError, match=message):
        load_turn_file(str(path))


def test_missing_file_and_format_override(tmp_path):
    with pytest.raises(TurnFileError, match="no such file"):
        load_turn_file(str(tmp_path / "nope.toml"))
    path = tmp_path / "turn.txt"
    path.write_text('{"orders": []}')
    assert load_turn_file(str(path), "json").orders == ()
    with pytest.raises(TurnFileError, match="not valid TOML"):
        load_turn_file(str(path), "toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("356", FleetSelector("356", id=356)),
        ("#356", FleetSelector("#356", id=356)),
        (356, FleetSelector("356", id=356)),
        ("bomber", FleetSelector("bomber", kind=FleetKind.BOMBER)),
        ("colonist", FleetSelector("colonist", kind=FleetKind.COLONIST)),
        (
            "Scientist-Leader",
            FleetSelector("Scientist-Leader", kind=FleetKind.LEADER, type=ColonyKind.SCIENTIST),
        ),
        ("leader:mining", FleetSelector("leader:mining", kind=FleetKind.LEADER, type=ColonyKind.MINING)),
        (
            "colonist:settler",
            FleetSelector("colonist:settler", kind=FleetKind.COLONIST, type=ColonyKind.SETTLER),
        ),
        (
            "merchant colonist",
            FleetSelector("merchant colonist", kind=FleetKind.COLONIST, type=ColonyKind.MERCHANT),
        ),
    ],
)
def test_fleet_names(text, expected):
    assert parse_fleet_selector(text) == expected


@pytest.mark.parametrize("text", ["", "leader", "colonist:pirate", "bomber:2", -3, 1.5, None, True])
def test_bad_fleet_names(text):
    with pytest.raises(ValueError):
        parse_fleet_selector(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3,2", Target(xy=(3, 2))),
        ("(3, 2)", Target(xy=(3, 2))),
        ("3 2", Target(xy=(3, 2))),
        ([3, 2], Target(xy=(3, 2))),
        ("#22", Target(id=22)),
        ("22", Target(id=22)),
        (22, Target(id=22)),
    ],
)
def test_targets(value, expected):
    assert parse_target(value) == expected


@pytest.mark.parametrize("value", ["", "a,b", [1], [1, "2"], [True, 2], -1, 2.5, "3,2,1"])
def test_bad_targets(value):
    with pytest.raises(ValueError):
        parse_target(value)


def test_order_type_names_and_ids():
    assert parse_order_type("colonizemining") == 0
    assert parse_order_type("Colonize") == 1
    assert parse_order_type("4") == 4
    assert parse_order_type(2) == 2
    with pytest.raises(ValueError):
        parse_order_type(True)
