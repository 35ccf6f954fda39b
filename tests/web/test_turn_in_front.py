"""The turn in front of the player: at the top of their page, what the last turn did to them and
what they can do now; a first-turn hint; numbered orders that the map labels; deadlines as
ISO 8601 with an offset in the API; the marks of the player's own pieces and of a combat."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from twisted.internet.task import Clock

from ruleset import Kind, Phase, visible_to
from ruleset.simulator import RandomPlayer
from server.views.web.documents import my_last_turn, my_view, order_type_for
from server.views.web.galaxy import galaxy
from server.views.web.history import HistoryBook
from server.views.web.mapsvg import render_map
from server.web import make_site

from .bot_games import play, play_turn
from .fake_game import FakeDirectory, FakeGame
from .helpers import Client, log_in, world


def colonist(game, player: int, mining: bool = False):
    return next(f for f in game.state.hand(player) if (f.kind is Kind.MINING) == mining)


def free_cell(game, terrain: str = "."):
    state = game.state
    taken = {q.order.target for queue in game.snapshot.queues.values() for q in queue}
    for cell, kind in enumerate(state.board.terrain):
        if kind == terrain and cell not in state.colonies and state.board.system_id(cell) not in taken:
            if cell not in state.leader_at.values():
                return cell
    raise AssertionError("no free system")


def place(game, player: int, fleet_id: int, cell: int) -> None:
    refused = []
    order_type = order_type_for(game.snapshot, fleet_id)
    game.insert_order(player, fleet_id, -1, order_type, game.state.board.system_id(cell)).addErrback(
        refused.append
    )
    assert not refused, refused


def test_a_new_player_gets_the_first_turn_hint_and_two_empty_order_places():
    _, game, site = world()
    page = log_in(site, "Nebula", "alice", "alice-pw").get("/games/Nebula/play").text
    assert 'id="first-turn-hint"' in page and 'href="/rules"' in page
    assert "Give up to 2 more orders" in page
    assert page.count('class="order empty quiet"') == 2
    assert "what happened to you" not in page  # no turn has ended yet


def test_orders_are_numbered_in_the_list_and_on_the_map_with_their_fleet_and_kind():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    settler, miner = game.state.hand(1)[:2]
    first = free_cell(game, "M" if settler.kind is Kind.MINING else ".")
    place(game, 1, settler.id, first)
    second = free_cell(game, "M" if miner.kind is Kind.MINING else ".")
    place(game, 1, miner.id, second)
    view = my_view(game.snapshot, 1, None)
    board = game.state.board
    assert [(o["number"], o["fleet"], o["fleet_kind"], o["x"], o["y"]) for o in view["orders"]] == [
        (1, settler.id, settler.kind.label, *board.coords[first]),
        (2, miner.id, miner.kind.label, *board.coords[second]),
    ]
    assert view["orders_left"] == 0
    page = alice.get("/games/Nebula/play").text
    assert "You have given your orders" in page and 'class="order empty' not in page
    for number, cell, letter in ((1, first, "MSPR"[settler.kind]), (2, second, "MSPR"[miner.kind])):
        mark = re.search(rf'<g class="order" data-order="{number}"><title>(.*?)</title>(.*?)</g>', page)
        assert mark, number
        x, y = board.coords[cell]
        assert f"{x}, {y}" in mark.group(1) and f"My order {number}:" in mark.group(1)
        assert f">{letter}</text>" in mark.group(2) and f">{number}</text>" in mark.group(2)


def test_my_own_leaders_are_marked_only_on_my_page():
    game = FakeGame("G", Clock(), seed=5)
    for name in ("a", "b", "c"):
        game.create_account(name, "pw")
    strategy = RandomPlayer()
    while not any(game.state.fleets[f].owner == 1 for f in game.state.leader_at):
        play_turn(game, strategy)
    site = make_site(FakeDirectory(game), game.archive, game.clock, secret=b"s")
    mine = sum(1 for f in game.state.leader_at if game.state.fleets[f].owner == 1)
    page = log_in(site, "G", "a", "pw").get("/games/G/play").text
    assert the_map(page).count('<path class="own"') == mine
    assert '<path class="own"' not in Client(site).get("/games/G").text


def the_map(page: str) -> str:
    """The galaxy map of a page (not the key's pictures)."""
    return page.split('class="galaxy"', 1)[1].split("</svg>", 1)[0]


def test_the_last_turn_says_what_my_orders_did_and_what_my_scores_gained():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    settler = colonist(game, 1)
    cell = free_cell(game)
    place(game, 1, settler.id, cell)
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.snapshot.turn == 1
    book = HistoryBook(game.archive, game.game_id)
    book.ensure(game.snapshot)
    last = my_last_turn(game.snapshot, 1, book)
    assert last["turn"] == 0
    name = game.state.board.system_name(cell)
    assert [n["kind"] for n in last["news"]][:1] == ["done"]
    assert f"has colonized {name}" in last["news"][0]["text"]
    page = alice.get("/games/Nebula/play").text
    assert "Turn 0: what happened to you" in page and f"has colonized {name}" in page
    assert 'id="first-turn-hint"' not in page  # a turn has ended: no longer new
    # another player's page never tells of my orders
    bob = log_in(site, "Nebula", "bob", "bob-pw").get("/games/Nebula/play").text
    assert f"has colonized {name}" not in bob.split("what happened to you")[1].split("</ul>")[0]


def test_score_changes_are_the_differences_of_my_score_history():
    game = FakeGame("G", Clock(), seed=3)
    for name in ("a", "b"):
        game.create_account(name, "pw")
    book = HistoryBook(game.archive, game.game_id)
    seen = []

    def look(game):
        book.ensure(game.snapshot)
        turn = game.snapshot.turn
        for player in (1, 2):
            last = my_last_turn(game.snapshot, player, book)
            history = dict(book.scores_of(player))
            before = history.get(turn - 2, (0, 0, 0, 0, 0))
            gained = {s["score"]: s["change"] for s in last["scores"]}
            keys = ("money", "technology", "people", "raw_materials", "artifacts")
            expected = {k: a - b for k, a, b in zip(keys, history[turn - 1], before, strict=True) if a != b}
            assert gained == expected
            seen.extend(gained)

    play(game, max_turns=30, every=look)
    assert seen  # some score changed


def test_the_api_gives_the_deadline_as_iso_8601_with_its_offset_beside_the_seconds_left():
    clock, game, site = world()
    client = Client(site)
    for document in (client.get("/api/games/Nebula").json(), client.get("/api/games").json()["games"][0]):
        deadline = datetime.fromisoformat(document["deadline"])
        assert deadline.utcoffset() is not None
        assert deadline.timestamp() == game.snapshot.deadline
        assert document["seconds_left"] == round(game.snapshot.deadline - clock.seconds())
    page = client.get("/games/Nebula").text
    assert f'datetime="{client.get("/api/games/Nebula").json()["deadline"]}"' in page


def test_a_combat_marks_its_fighters_and_an_external_ones_place():
    """The first bot game that comes to an external combat: its leaders get rings tagged A and
    D, and the unification system a burst."""
    found: list = []

    def look(game):
        state = game.state
        if state.phase is Phase.COMBAT and not state.conflicts[0].internal:
            found.append(state)
            raise StopIteration

    for seed in range(1, 40):
        game = FakeGame("G", Clock(), seed=seed)
        for name in ("a", "b", "c"):
            game.create_account(name, "pw")
        try:
            play(game, max_turns=80, every=look)
        except StopIteration:
            break
    assert found, "no bot game came to an external combat"
    state = found[0]
    conflict = state.conflicts[0]
    svg = render_map(galaxy(state.board, visible_to(state, 0)))
    marks = re.search(r'<g class="combat">(.*?)</g>', svg).group(1)
    assert marks.count('class="fight"') == 2 and marks.count('class="clash"') == 1
    assert re.findall(r'class="tag-n"[^>]*>([AD])<', marks) == ["A", "D"]
    for fleet_id, tag in ((conflict.attacker, "A"), (conflict.defender, "D")):
        x, y = state.board.coords[state.leader_at[fleet_id]]
        cx, cy = x * 20 + 10, (len(state.board.rows) - 1 - y) * 20 + 10
        assert f'<circle class="fight" cx="{cx}" cy="{cy}"' in marks, tag
    # a normal turn has none
    normal = replace(state, phase=Phase.NORMAL)
    assert '<g class="combat">' not in render_map(galaxy(normal.board, visible_to(normal, 0)))
