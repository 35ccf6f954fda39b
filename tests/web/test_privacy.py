"""Nothing private reaches a page it should not (R27), over whole bot games.

The test is a difference test: every page and API answer is rendered twice, once from the real
game and once from a copy in which everything the viewer must not know was changed (the other
players' colonist types, their scores before the end, their orders, their board messages, the
pool's make-up, the private events of every turn). If an answer depends on any of it, the two
renderings differ. The public view is the view of nobody, so for it everything private changes.
"""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from types import MappingProxyType

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import Kind, Message, Phase, Role
from server.model.refusals import BAD_LOGIN, Refused
from server.model.snapshot import BoardMessage, GameSnapshot
from server.model.store import TurnRecord
from server.web import make_site

from .bot_games import play
from .fake_game import FakeArchive, FakeGame
from .helpers import Client

PRIVATE_EVENTS = ("scored", "drawn", "reinforced", "order failed")
CSRF = re.compile(r'name="csrf" value="[^"]+"')


class FrozenGame:
    """One fixed snapshot served as a game (the pages only read it)."""

    def __init__(self, snapshot: GameSnapshot, passwords: dict[str, tuple[str, int]]):
        self.snapshot = snapshot
        self.passwords = passwords

    def subscribe(self, listener):
        return lambda: None

    def authenticate(self, username, password):
        found = self.passwords.get(username)
        if found is None or found[0] != password:
            return defer.fail(Refused(BAD_LOGIN))
        return defer.succeed(found[1])

    def come_back(self, player):
        raise AssertionError("the pages only read")


class OneGame:
    def __init__(self, game):
        self.game = game

    def find(self, name):
        return self.game if name == self.game.snapshot.name else None

    def ordered(self):
        return [self.game]


def hide_state(state, viewer: int, reveal_scores: bool):
    """The state with everything `viewer` may not see changed."""
    fleets = {}
    for fid, fleet in state.fleets.items():
        if fleet.role is Role.COLONIST and fleet.owner != viewer:
            fleet = replace(fleet, kind=Kind((fleet.kind + 1) % 4))
        fleets[fid] = fleet
    players = tuple(
        p if p.id == viewer or reveal_scores else replace(p, scores=tuple(s + 3 for s in p.scores))
        for p in state.players
    )
    pool = state.pool
    if sum(pool) >= 2:  # the same total, another make-up
        largest = max(range(4), key=lambda i: pool[i])
        other = (largest + 1) % 4
        pool = tuple(n - 1 if i == largest else n + 1 if i == other else n for i, n in enumerate(pool))
    return replace(state, fleets=fleets, players=players, pool=pool)


def hide_messages(messages, viewer: int):
    return tuple(
        m if m.player == viewer else Message(m.player, m.turn, "SECRET subject", "SECRET body")
        for m in messages
    )


def hide_events(events):
    return tuple(e for e in events if e.kind not in PRIVATE_EVENTS)


def hidden_snapshot(snapshot: GameSnapshot, viewer: int) -> GameSnapshot:
    over = snapshot.state.phase is Phase.OVER
    queues = {}
    for object_id, queue in snapshot.queues.items():
        kept = tuple(q for q in queue if q.order.player == viewer)
        if kept:
            queues[object_id] = kept
    boards = {
        pid: board
        if pid == viewer
        else tuple(BoardMessage(item.index + 100, Message(pid, 0, "SECRET", "SECRET")) for item in board)
        for pid, board in snapshot.boards.items()
    }
    return replace(
        snapshot,
        state=hide_state(snapshot.state, viewer, reveal_scores=over),
        queues=MappingProxyType(queues),
        boards=MappingProxyType(boards),
        last_turn_messages=hide_messages(snapshot.last_turn_messages, viewer),
        last_turn_events=hide_events(snapshot.last_turn_events),
        state_cache={},
        _derived={},
    )


def hidden_archive(archive: FakeArchive, viewer: int, final_turn_over: bool) -> FakeArchive:
    copy = FakeArchive()
    for key, record in archive.turns.items():
        copy.turns[key] = TurnRecord(
            record.turn,
            hide_state(record.state, viewer, reveal_scores=record.state.phase is Phase.OVER),
            hide_messages(record.messages, viewer),
            hide_events(record.events),
            record.modtime_serial,
        )
    return copy


def site_for(snapshot, archive, passwords):
    clock = Clock()
    clock.advance(5_000_000)
    return make_site(OneGame(FrozenGame(snapshot, passwords)), archive, clock, secret=b"same")


PUBLIC_PATHS = (
    "/",
    "/rules",
    "/games/G",
    "/games/G/history",
    "/games/G/map.svg",
    "/api/games",
    "/api/games/G",
    "/api/games/G/history",
)
PLAYER_PATHS = ("/games/G/play", "/api/games/G/me", "/api/games/G/orders")


def answers(site, paths, login=None, turns=()):
    """Every answer of the site for `paths` (and the past-turn pages), CSRF tokens blanked."""
    client = Client(site)
    headers = {}
    if login is not None:
        token = client.csrf("/games/G")
        answer = client.post_form(
            "/games/G/login", {"csrf": token, "username": login[0], "password": login[1]}
        )
        assert answer.status == 303

        headers = {"Authorization": "Basic " + base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()}
    out = {}
    all_paths = (
        list(paths) + [f"/games/G/turns/{t}" for t in turns] + [f"/api/games/G/turns/{t}" for t in turns]
    )
    for path in all_paths:
        answer = client.get(path, headers=headers if path.startswith("/api/") else None)
        assert answer.status == 200, (path, answer.status, answer.text[:300])
        out[path] = CSRF.sub('name="csrf" value=""', answer.text)
    return out


def compare(game, viewer: int, passwords, turns):
    snapshot = game.snapshot
    real = site_for(snapshot, game.archive, passwords)
    hidden = site_for(
        hidden_snapshot(snapshot, viewer),
        hidden_archive(game.archive, viewer, game.state.phase is Phase.OVER),
        passwords,
    )
    if viewer == 0:
        paths, login = PUBLIC_PATHS, None
    else:
        name = snapshot.state.player(viewer).name
        paths, login = PLAYER_PATHS + PUBLIC_PATHS, (name, passwords[name][0])
    seen = answers(real, paths, login, turns)
    shown = answers(hidden, paths, login, turns)
    for path in seen:
        assert seen[path] == shown[path], (
            f"{path} shows something private to viewer {viewer} at turn {game.state.turn}"
        )


def bot_game(seed: int, players=("ann", "<b>bo</b>", "cy & co")):
    clock = Clock()
    game = FakeGame("G", clock, seed=seed)
    passwords = {}
    for name in players:
        game.create_account(name, name + "!")
        passwords[name] = (name + "!", len(passwords) + 1)
    return game, passwords


@pytest.mark.parametrize("seed", [3, 11])
def test_no_page_or_answer_shows_private_data_over_a_whole_bot_game(seed):
    game, passwords = bot_game(seed)
    checked = []
    combat_seen = []

    def check(game):
        combat = game.state.phase is Phase.COMBAT
        if combat:
            combat_seen.append(game.state.turn)
        if game.state.turn % 10 == 1 or (combat and len(combat_seen) <= 2):
            turns = sorted({0, max(0, game.state.turn - 2), game.state.turn - 1})  # played turns, from 0
            for viewer in range(0, len(passwords) + 1):
                compare(game, viewer, passwords, turns)
            checked.append(game.state.turn)

    play(game, every=check)
    assert game.state.phase is Phase.OVER
    assert combat_seen, "the game had no combat turn to check"
    kinds = {e.kind for record in game.archive.turns.values() for e in record.events}
    assert {"scored", "drawn", "order failed"} <= kinds
    turns = [0, game.state.turn - 1]
    for viewer in range(0, len(passwords) + 1):
        compare(game, viewer, passwords, turns)
    assert len(checked) >= 3


def test_orders_placed_but_not_resolved_stay_private():
    game, passwords = bot_game(5)
    from ruleset import game_rng
    from ruleset.simulator import RandomPlayer

    strategy = RandomPlayer()
    play(game, max_turns=3)
    for player in game.state.players:
        for order in strategy(game.state, player.id, game_rng(5, game.state.turn + 1, f"player {player.id}")):
            game.insert_order(player.id, order.fleet, -1, order.type, order.target).addErrback(lambda _: None)
    assert any(game.snapshot.queues.values())
    for viewer in range(0, len(passwords) + 1):
        compare(game, viewer, passwords, [0, 1, 2])


def test_the_difference_test_sees_a_leak():
    """Changing what the viewer may see (their own hand) must change their page: the comparison
    is able to fail."""
    game, passwords = bot_game(5)
    play(game, max_turns=2)
    snapshot = game.snapshot
    own = hidden_snapshot(snapshot, 0)  # hides player 1's hand from player 1 too
    real = answers(site_for(snapshot, game.archive, passwords), PLAYER_PATHS, ("ann", "ann!"))
    changed = answers(site_for(own, game.archive, passwords), PLAYER_PATHS, ("ann", "ann!"))
    assert real["/api/games/G/me"] != changed["/api/games/G/me"]
    assert real["/games/G/play"] != changed["/games/G/play"]
