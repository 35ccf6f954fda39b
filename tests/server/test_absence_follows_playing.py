"""Absence follows playing, not reading: a player the stand-in replaces reads the game through
every read path of the server (TP login and every TP read request, the web login, every page
and event stream, an API token and every GET) and the seat stays the stand-in's, nobody being
told anything; each read shows that player, and only them, how to take the seat back. An
order (TP, page, API), a finished turn (TP, page, API) and "I am back" (page button, API) each
take it back, and everyone is told once.

A real `Game` on a memory store and a task.Clock, its TP sessions on StringTransports
(`tests.server.wire`) and its web site in memory (`tests.web.helpers`): nothing waits on the
wall clock. `tests/integration/test_absence_read_paths.py` does the same through `tae-client`
against a real server process.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import treq
from twisted.internet.task import Clock

import protocol as tp
from protocol import Version
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.attendance import Presence
from server.model.memory_store import MemoryStore
from server.model.refusals import NOT_AWAY
from server.model.timer_settings import TimerSettings
from server.tp.session import COMMANDS
from server.views.board import absence_notices
from server.views.own_seat import ABSENT_NOTE
from server.views.tp.frames import PLAYING_RACE
from server.web import make_site
from server.web.routing import Route
from tests.support.deferreds import successResultOf
from tests.support.games import legal_orders, new_game
from tests.web.helpers import Answer, Client

from .wire import Wire

NAME = "long"
NAMES = ("ann", "bob", "cy")
PASSWORD = "secret-password"
AWAY, AWAY_NAME = 3, "cy"
TURN = 3600


@dataclass
class World:
    clock: Clock
    store: MemoryStore
    game: Game
    directory: GameDirectory
    site: object

    @property
    def boards(self):
        return self.game.snapshot.boards

    def assert_still_absent(self, boards) -> None:
        """The stand-in still plays the seat, the turn does not wait for it, nobody was told."""
        snapshot = self.game.snapshot
        assert snapshot.presence(AWAY) is Presence.ABSENT
        assert AWAY in snapshot.stand_ins() and AWAY not in snapshot.acting_players()
        assert snapshot.boards == boards

    def assert_back(self) -> None:
        """The player plays their seat again, and every board says so exactly once."""
        snapshot = self.game.snapshot
        assert snapshot.presence(AWAY) is Presence.PLAYING and AWAY not in snapshot.stand_ins()
        for player in range(1, len(NAMES) + 1):
            subjects = [item.message.subject for item in snapshot.board(player)]
            assert subjects.count(absence_notices.BACK) == 1, (player, subjects)
            assert subjects[-1] == absence_notices.BACK or player == AWAY


def absent_world() -> World:
    """Three players; cy missed a turn (the game marks a player absent after one)."""
    clock = Clock()
    clock.advance(1_700_000_000)
    store, game = new_game(
        NAME, clock=clock, seed=17, timer=TimerSettings(turn_length=TURN), absent_after_missed_turns=1
    )
    directory = GameDirectory()
    directory.add(game)
    game.start()
    for name in NAMES:
        successResultOf(game.create_account(name, PASSWORD))
    turn = game.state.turn
    for player in game.snapshot.acting_players():
        if player != AWAY:
            game.finish_turn(player)
    clock.advance(TURN)
    assert game.state.turn == turn + 1
    assert game.snapshot.presence(AWAY) is Presence.ABSENT
    site = make_site(directory, store, clock, secret=b"absence-secret")
    return World(clock, store, game, directory, site)


def basic(name: str = AWAY_NAME) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def tp_player(world: World, name: str = AWAY_NAME, version: Version = Version.TP04) -> Wire:
    wire = Wire(world.directory, version)
    assert isinstance(wire.one(tp.Connect("test")), tp.Okay)
    assert isinstance(wire.one(tp.Login(f"{name}@{NAME}", PASSWORD)), tp.Okay)
    return wire


def web_player(world: World, name: str = AWAY_NAME) -> Client:
    browser = Client(world.site)
    csrf = browser.csrf(f"/games/{NAME}")
    answer = browser.post_form(f"/games/{NAME}/login", {"csrf": csrf, "username": name, "password": PASSWORD})
    assert answer.status == 303, answer.text
    return browser


def own_race(wire: Wire, player: int = 0) -> str:
    (frame,) = wire.items(tp.GetPlayer((player,))) if player else wire.items(tp.GetPlayer((0,)))
    assert isinstance(frame, tp.Player), frame
    return frame.race


def open_stream(client: Client, path: str) -> list[bytes]:
    """Open an event stream (it never ends); the chunks it has written so far, growing."""
    chunks: list[bytes] = []
    d = client.stub.request(
        "GET",
        "http://127.0.0.1:8080" + path,
        headers={"Cookie": ["; ".join(f"{k}={v}" for k, v in client.cookies.items())]},
    )
    client.stub.flush()
    response = successResultOf(d)
    assert response.code == 200
    treq.collect(response, chunks.append)
    client.stub.flush()
    return chunks


# -- every read --------------------------------------------------------------------------------

# What a player sends that is not reading: logging in and creating accounts come first, the
# order and turn writes are the subject of the second half, and removing a message changes the
# player's own board (a write, but no more playing than reading is).
TP_NOT_READS = {
    tp.Connect,
    tp.Login,
    tp.CreateAccount,
    tp.InsertOrder,
    tp.RemoveOrder,
    tp.FinishedTurn,
    tp.RemoveMessage,
}


def tp_reads(world: World, wire: Wire) -> list[tp.Message]:
    """One request of every kind a logged-in TP04 client may send that only reads (and the
    edits TaE refuses), aimed at the absent player's own things where it matters."""
    state = world.game.snapshot.state
    fleet, order_type, target = legal_orders(world.game, AWAY)[0]
    args = (tp.ObjectArg(target),)
    ids = wire.id_request
    return [
        tp.Ping(),
        tp.GetFeatures(),
        tp.SetFilters(()),
        tp.GetGames(),
        tp.GetTimeRemaining(),
        ids(tp.GetObjectIDs),
        tp.GetObjectsByID((0, 1, fleet)),
        tp.GetObjectsByPos(tp.Vec3(0, 0, 0), 10**12),
        tp.GetObjectIDsByPos(tp.Vec3(0, 0, 0), 10**12),
        tp.GetObjectIDsByContainer(0),
        tp.GetObjectDesc((0, 1, 2, 3, 4)),
        ids(tp.GetObjectDescIDs),
        tp.ModifyObject(fleet, 4, "renamed", "", 0, (), 0, ()),
        tp.GetOrderDesc((0, 1, 2, 3, 4)),
        ids(tp.GetOrderDescIDs),
        tp.GetOrder(fleet, (0,)),
        tp.ProbeOrder(fleet, -1, order_type, args),
        ids(tp.GetOrderQueueIDs),
        tp.GetOrderQueue((fleet,)),
        ids(tp.GetBoardIDs),
        tp.GetBoards((0,)),
        tp.GetMessage(AWAY, (0,)),
        tp.PostMessage(AWAY, -1, "hello", "I am reading", 0, (), ()),
        ids(tp.GetResourceIDs),
        tp.GetResource((1,)),
        ids(tp.GetCategoryIDs),
        tp.GetCategory((1,)),
        tp.AddCategory(0, 0, "mine", "a category"),
        tp.RemoveCategory((1,)),
        ids(tp.GetComponentIDs),
        tp.GetComponent((1,)),
        ids(tp.GetPropertyIDs),
        tp.GetProperty((1,)),
        ids(tp.GetDesignIDs),
        tp.GetDesign((fleet,)),
        tp.AddDesign(0, 0, (), "ship", "a design", 0, AWAY, (), "", ()),
        tp.ModifyDesign(fleet, 0, (), "ship", "a design", 0, AWAY, (), "", ()),
        tp.RemoveDesign((fleet,)),
        ids(tp.GetPlayerIDs),
        tp.GetPlayer((0,)),
        tp.GetPlayer(tuple(p.id for p in state.players)),
    ]


def test_every_tp_read_leaves_the_seat_with_the_stand_in_and_tells_only_the_player():
    world = absent_world()
    boards = world.boards
    cy = tp_player(world)
    world.assert_still_absent(boards)
    sent = tp_reads(world, cy)
    assert {type(m) for m in sent} | TP_NOT_READS == set(COMMANDS), "a TP request is not read here"
    for message in sent:
        replies = cy.send(message)
        assert replies, message
        world.assert_still_absent(boards)
    # the player reads, in their own Player frame, that the stand-in plays and how to take it back
    assert own_race(cy) == ABSENT_NOTE == own_race(cy, AWAY)
    assert own_race(cy, 1) == PLAYING_RACE
    # nobody else does: to them cy is a player like any other
    ann = tp_player(world, "ann")
    assert own_race(ann, AWAY) == PLAYING_RACE and own_race(ann) == PLAYING_RACE
    # TP03 too, and a second login changes nothing
    old = tp_player(world, AWAY_NAME, Version.TP03)
    assert own_race(old) == ABSENT_NOTE
    world.assert_still_absent(boards)


def get_routes(site) -> list[Route]:
    """Every GET the site answers (its root is wrapped for gzip)."""
    root = getattr(site.resource, "original", site.resource)
    return [route for route in root.router.routes if route.method == b"GET"]


def test_every_page_api_read_and_event_stream_leaves_the_seat_with_the_stand_in():
    world = absent_world()
    boards = world.boards
    fleet, order_type, target = legal_orders(world.game, AWAY)[0]
    # the web login, the player's page and its stream, a token and the API with it and with Basic
    browser = web_player(world)
    world.assert_still_absent(boards)
    token_answer = Client(world.site).post_json(f"/api/games/{NAME}/token", {}, basic())
    assert token_answer.status == 200, token_answer.text
    bearer = {"Authorization": f"Bearer {token_answer.json()['token']}"}
    world.assert_still_absent(boards)
    pages = [
        "/",
        "/static/play.js",
        f"/games/{NAME}",
        f"/games/{NAME}/history",
        f"/games/{NAME}/turns/0",
        f"/games/{NAME}/map.svg",
        f"/games/{NAME}/play",
        "/rules",
        "/rules/examples/",
        "/rules/diagrams/board.svg",
        "/players",
        f"/players/{AWAY_NAME}",
        f"/games/{NAME}/notifications/confirm/not-a-token",  # an e-mail confirmation link's page
    ]
    api = [
        "/api/me",
        "/api/games",
        "/api/players",
        f"/api/players/{AWAY_NAME}",
        f"/api/games/{NAME}",
        f"/api/games/{NAME}/history",
        f"/api/games/{NAME}/turns/0",
        f"/api/games/{NAME}/me",
        f"/api/games/{NAME}/orders",
        f"/api/games/{NAME}/seat",
        f"/api/games/{NAME}/notifications",
        "/api/openapi.json",
    ]
    streams = [f"/games/{NAME}/events", f"/games/{NAME}/play/events"]
    read: list[str] = []
    answers: dict[str, Answer] = {}
    for path in pages:
        answers[path] = browser.get(path)
        read.append(path)
        world.assert_still_absent(boards)
    for credentials in (bearer, basic()):
        for path in api:
            answers[path] = Client(world.site).get(path, headers=credentials)
            read.append(path)
            world.assert_still_absent(boards)
    opened = [open_stream(browser, path) for path in streams]
    read += streams
    assert all(b"event: hello" in b"".join(chunks) for chunks in opened)
    world.assert_still_absent(boards)
    for route in get_routes(world.site):
        assert any(route.pattern.match(path) for path in read), f"no read of {route.pattern.pattern}"
    assert all(answer.status < 500 for answer in answers.values())
    # asking whether an order would be taken is reading too
    probe = {"fleet": fleet, "type": order_type, "target": target}
    assert Client(world.site).post_json(f"/api/games/{NAME}/orders/probe", probe, bearer).status == 200
    csrf = browser.csrf(f"/games/{NAME}/play")
    assert browser.post_form(f"/games/{NAME}/play/probe", {"csrf": csrf, **probe}, True).status == 200
    world.assert_still_absent(boards)

    # the player's page and the API's documents say it, to the player only
    page = answers[f"/games/{NAME}/play"].text
    assert ABSENT_NOTE in page and f'action="/games/{NAME}/play/back"' in page
    assert answers[f"/api/games/{NAME}/me"].json()["note"] == ABSENT_NOTE
    seat = answers[f"/api/games/{NAME}/seat"].json()
    assert (seat["seat"], seat["stand_in"], seat["note"]) == ("absent", True, ABSENT_NOTE)
    public = answers[f"/games/{NAME}"].text + answers[f"/api/games/{NAME}"].text + answers["/"].text
    assert ABSENT_NOTE not in public and "say you are back" not in public
    ann = web_player(world, "ann")
    assert ABSENT_NOTE not in ann.get(f"/games/{NAME}/play").text
    assert Client(world.site).get(f"/api/games/{NAME}/me", headers=basic("ann")).json()["note"] is None
    world.assert_still_absent(boards)


# -- what takes the seat back ------------------------------------------------------------------


def tp_order(world: World) -> None:
    cy = tp_player(world)
    fleet, order_type, target = legal_orders(world.game, AWAY)[0]
    reply = cy.one(tp.InsertOrder(fleet, -1, order_type, (tp.ObjectArg(target),)))
    assert isinstance(reply, tp.Order), reply
    assert own_race(cy) == PLAYING_RACE  # the client sees the seat is theirs again


def tp_finish(world: World) -> None:
    assert isinstance(tp_player(world).one(tp.FinishedTurn()), tp.Okay)


def page_order(world: World) -> None:
    browser = web_player(world)
    fleet, order_type, target = legal_orders(world.game, AWAY)[0]
    csrf = browser.csrf(f"/games/{NAME}/play")
    fields = {"csrf": csrf, "fleet": fleet, "type": order_type, "target": target}
    answer = browser.post_form(f"/games/{NAME}/play/orders", fields, json_answer=True)
    assert answer.status == 200, answer.text
    assert ABSENT_NOTE not in browser.get(f"/games/{NAME}/play").text


def page_finish(world: World) -> None:
    browser = web_player(world)
    csrf = browser.csrf(f"/games/{NAME}/play")
    answer = browser.post_form(f"/games/{NAME}/play/finish", {"csrf": csrf}, json_answer=True)
    assert answer.status == 200, answer.text


def page_button(world: World) -> None:
    browser = web_player(world)
    page = browser.get(f"/games/{NAME}/play").text
    form = re.search(
        rf'action="/games/{NAME}/play/back"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"', page
    )
    assert form, page
    answer = browser.post_form(f"/games/{NAME}/play/back", {"csrf": form.group(1)}, json_answer=True)
    assert answer.status == 200 and answer.json()["message"] == "You play your own seat again."
    assert "I am back" not in browser.get(f"/games/{NAME}/play").text


def api_order(world: World) -> None:
    fleet, order_type, target = legal_orders(world.game, AWAY)[0]
    document = {"fleet": fleet, "type": order_type, "target": target}
    answer = Client(world.site).post_json(f"/api/games/{NAME}/orders", document, basic())
    assert answer.status == 201, answer.text


def api_finish(world: World) -> None:
    answer = Client(world.site).post_json(f"/api/games/{NAME}/finish", {}, basic())
    assert answer.status == 200, answer.text


def api_back(world: World) -> None:
    answer = Client(world.site).post_json(f"/api/games/{NAME}/back", {}, basic())
    assert answer.status == 200, answer.text
    seat = answer.json()
    assert (seat["seat"], seat["stand_in"], seat["note"], seat["missed_turns"]) == ("playing", False, None, 0)


PLAYING: dict[str, Callable[[World], None]] = {
    "tp-order": tp_order,
    "tp-finish": tp_finish,
    "page-order": page_order,
    "page-finish": page_finish,
    "page-button": page_button,
    "api-order": api_order,
    "api-finish": api_finish,
    "api-back": api_back,
}


@pytest.mark.parametrize("play", PLAYING.values(), ids=PLAYING.keys())
def test_an_order_a_finish_or_back_takes_the_seat_back_and_everyone_is_told_once(play):
    world = absent_world()
    play(world)
    world.assert_back()
    assert AWAY in world.game.snapshot.acting_players()  # the turn waits for them again
    # saying it again is refused plainly, and nobody is told twice
    again = Client(world.site).post_json(f"/api/games/{NAME}/back", {}, basic())
    assert again.status == 409
    assert again.json()["error"]["message"] == NOT_AWAY.message
    world.assert_back()


def test_back_is_refused_for_a_resigned_or_removed_player_and_answers_the_api_way():
    world = absent_world()
    successResultOf(world.game.resign(1))
    resigned = Client(world.site).post_json(f"/api/games/{NAME}/back", {}, basic("ann"))
    assert resigned.status == 409 and resigned.json()["error"]["message"] == "You resigned from this game."
    successResultOf(world.game.remove_player("bob"))
    removed = Client(world.site).post_json(f"/api/games/{NAME}/back", {}, basic("bob"))
    assert removed.status == 403 and "removed" in removed.json()["error"]["message"]
    nobody = Client(world.site).post_json(f"/api/games/{NAME}/back", {})
    assert nobody.status == 401
    assert world.game.snapshot.presence(AWAY) is Presence.ABSENT
