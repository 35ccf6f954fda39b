"""Server-sent events: a page hears of changes it shows, and of nothing private."""

from __future__ import annotations

from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import OrderType
from server.web.live import KEEPALIVE, LiveFeed, player_key, public_key

from .helpers import world
from .test_pages import first_colonist, free_habitable_system


class StreamRequest:
    """Just enough of a twisted.web request for an event stream."""

    def __init__(self):
        self.headers = {}
        self.written = []
        self.finished = defer.Deferred()

    def setHeader(self, name, value):
        self.headers[name] = value

    def write(self, data):
        self.written.append(data)

    def notifyFinish(self):
        return self.finished

    def finish(self):
        self.finished.callback(None)

    def events(self):
        return [chunk for chunk in self.written if chunk.startswith(b"event: change")]


def test_a_spectator_hears_of_a_new_turn_but_not_of_an_order():
    clock, game, _ = world()
    feed = LiveFeed(game, clock)
    spectator = StreamRequest()
    feed.open(spectator, public_key)
    assert spectator.headers[b"content-type"].startswith(b"text/event-stream")
    settler = first_colonist(game, 1)
    _, target = free_habitable_system(game)
    game.insert_order(1, settler.id, -1, int(OrderType.COLONIZE), target)
    assert spectator.events() == []
    game.finish_turn(1)  # who has finished is public
    assert len(spectator.events()) == 1
    game.finish_turn(2)  # ends the turn
    assert spectator.events()[-1].startswith(
        b'event: change\ndata: {"turn": 1, "phase": "normal", "version": "'
    )


def test_a_player_hears_of_their_own_orders_only():
    clock, game, _ = world()
    feed = LiveFeed(game, clock)
    alice, bob = StreamRequest(), StreamRequest()
    feed.open(alice, player_key(1))
    feed.open(bob, player_key(2))
    settler = first_colonist(game, 1)
    _, target = free_habitable_system(game)
    game.insert_order(1, settler.id, -1, int(OrderType.COLONIZE), target)
    assert len(alice.events()) == 1 and bob.events() == []


def test_keepalives_and_unsubscribing_when_the_last_listener_goes():
    clock = Clock()
    _, game, _ = world()
    feed = LiveFeed(game, clock)
    listener = StreamRequest()
    feed.open(listener, public_key)
    assert len(game.listeners) == 1
    clock.advance(KEEPALIVE)
    assert listener.written[-1] == b": keepalive\n\n"
    listener.finish()
    assert game.listeners == [] and feed.listeners == []
    assert clock.getDelayedCalls() == []


def test_the_stream_opens_with_the_version_the_page_shows():
    clock, game, site = world()
    from .helpers import Client

    page = Client(site).get("/games/Nebula").text
    shown = page.split('data-version="', 1)[1].split('"', 1)[0]
    feed = LiveFeed(game, clock)
    listener = StreamRequest()
    feed.open(listener, public_key)
    assert f'event: hello\ndata: {{"version": "{shown}"}}'.encode() in listener.written[0]
    game.finish_turn(1)
    changed = listener.events()[-1]
    assert shown.encode() not in changed
