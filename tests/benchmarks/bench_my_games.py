"""`GET /api/me` for a player in 20 games: target ≤ 20 ms.

Twenty real games (MemoryStore, the default map, 4 players each, the account `alice` in all of
them) behind the web site in memory (twisted.web without gzip, as bench_web measures pages).
The caller authenticates with HTTP Basic: its first request verifies the password (scrypt at the
server's cost, counted apart); every later one is remembered (`server.web.logins`). Printed: the
median of a request while nothing changed, and of a request after every game published a new
snapshot (each game's documents built again, as after a turn or an order in each of them).
Run: `python -m tests.benchmarks my_games`.
"""

from __future__ import annotations

import base64
import time

from treq.testing import StubTreq
from twisted.internet.task import Clock

from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import InlineHasher
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.web import make_site
from tests.benchmarks.bench_web import timed
from tests.support.deferreds import successResultOf
from tests.web.helpers import Client

GAMES = 20
TARGET_MS = 20.0


def twenty_games() -> tuple[GameDirectory, Clock]:
    clock = Clock()
    clock.advance(1_700_000_000)
    store = MemoryStore()
    directory = GameDirectory()
    hasher = InlineHasher()  # the server's default cost
    for number in range(GAMES):
        setup = GameSetup(f"game{number + 1}", seed=number, timer=TimerSettings(turn_length=86_400))
        game = Game(store.create_game(setup), setup, setup.initial_state(), store, clock, hasher=hasher)
        directory.add(game)
        game.start()
        for name in ("alice", "bob", "carol", "dave")[: 2 + number % 3]:
            successResultOf(game.create_account(name, f"{name}-password"))
    return directory, clock


def main() -> None:
    directory, clock = twenty_games()
    site = make_site(directory, None, clock, secret=b"bench")
    client = Client(site)
    client.stub = StubTreq(site.resource.original)  # without the gzip layer
    headers = {"Authorization": "Basic " + base64.b64encode(b"alice:alice-password").decode()}

    def me() -> None:
        answer = client.get("/api/me", headers)
        assert answer.status == 200 and len(answer.json()["games"]) == GAMES, answer.text

    started = time.perf_counter()
    me()
    first_ms = (time.perf_counter() - started) * 1000
    warm_ms = timed(me, 200)

    def publish_all() -> None:
        for game in directory.games.values():
            game._publish()  # a new snapshot, as an order or a finished flag publishes

    def after_changes() -> None:
        publish_all()
        me()

    publish_ms = timed(publish_all, 50)
    changed_ms = timed(after_changes, 50) - publish_ms
    print(
        f"GET /api/me for a player in {GAMES} games (target ≤ {TARGET_MS:.0f} ms): {warm_ms:.1f} ms; "
        f"{changed_ms:.1f} ms after every game published a new snapshot (the publishing, "
        f"{publish_ms:.1f} ms, not counted); the first request, which verifies the password: "
        f"{first_ms:.0f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
