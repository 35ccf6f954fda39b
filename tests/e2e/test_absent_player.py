"""One of four players stops playing: the stand-in takes the seat, the player comes back.

A real ``tae-server serve`` (``tests/e2e/conftest.py``) with a two-second turn deadline and
``absent_after_missed_turns = 2`` from its configuration file. Three bots (``clients.bot``) play
over TCP from the start; "dee" joins and leaves at once. Her first two turns end at their
deadline; then she is absent and the server's stand-in plays her seat, so the turns end as soon
as the three bots finish. Mid-game she logs in again over TCP and reads the game, which leaves
the seat with the stand-in; then she plays to GAME OVER with a bot of her own, whose first order
takes the seat back. The test reads the database the server writes (as
``tae-server status`` does) to see who plays the seat and which orders were recorded.
"""

from __future__ import annotations

import threading
import time

from clients import Version
from clients.blocking import BlockingClient
from clients.bot import Bot, play_blocking, run_bots
from clients.seat_frames import AiStrategy
from server.database import SyncDatabase
from server.operating.on_database import game_status
from server.views.board import absence_notices
from server.views.operator_status import status_document

from .conftest import running_tae_server

NAMES = ["ann", "bob", "cid"]
AWAY = "dee"
PASSWORD = "secret-password"
TURN_LENGTH = 2


class UnhurriedStrategy(AiStrategy):
    """The bot, thinking a little while each turn, so the game lasts long enough to come back
    in the middle of it."""

    def decide(self, view):
        time.sleep(0.15)
        return super().decide(view)


def wait_until(condition, timeout: float, what: str):
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_an_absent_player_is_played_by_the_stand_in_and_takes_the_seat_back(tmp_path):
    config = tmp_path / "tae.toml"
    config.write_text("[game]\nabsent_after_missed_turns = 2\nseed = 5\n")
    with running_tae_server(
        tmp_path / "server", "--config", str(config), "--turn-length", str(TURN_LENGTH)
    ) as server:
        host, port = server.address
        db = SyncDatabase(f"sqlite:///{server.database}")

        def status():
            return game_status(db, "tae", wallclock=time.time)

        def seat(info) -> str:
            return next(p.seat for p in info.players if p.name == AWAY)

        try:
            # dee joins and stops playing at once
            away = BlockingClient.connect(host, port, version=Version.TP04, timeout=10)
            away.login(AWAY, PASSWORD, create=True)
            away.close()

            results: list = []
            bots = threading.Thread(
                target=lambda: results.extend(
                    run_bots(
                        host,
                        port,
                        NAMES,
                        PASSWORD,
                        Version.TP04,
                        max_turns=300,
                        timeout=20,
                        turn_timeout=30,
                        deadline=150,
                        strategy=lambda _name: UnhurriedStrategy(),
                    )
                ),
                daemon=True,
            )
            bots.start()

            # two turns end at their deadline without her; then the stand-in plays her seat
            absent = wait_until(lambda: (s := status()) and seat(s) == "absent" and s, 40, "dee to be absent")
            assert absent.snapshot.turn >= 2 and not absent.snapshot.over, status_document(absent)
            marked = absent.snapshot.turn
            dee = next(p for p in absent.players if p.name == AWAY)
            assert (dee.seat, dee.state) == ("absent", "stand-in")

            def stand_in_orders():
                stored = db.load_games(all_states=False)[0]
                return [e for e in stored.orders if e.player == 4 and e.turn > marked]

            played = wait_until(stand_in_orders, 30, "the stand-in's orders for dee")
            assert played, "the stand-in gave no orders"
            assert not status().snapshot.over, "the game ended before dee came back"

            # she comes back mid-game: logging in and reading leave the seat with the stand-in
            back = BlockingClient.connect(host, port, version=Version.TP04, timeout=20)
            back.login(AWAY, PASSWORD)
            back.update()
            returned = status()
            assert seat(returned) == "absent", status_document(returned)
            assert not returned.snapshot.over
            subjects = [m.subject for m in back.game.messages()]
            assert absence_notices.ABSENT in subjects and absence_notices.BACK not in subjects, subjects
            assert back.game.cache.me is not None and "stand-in" in back.game.cache.me.race
            # her bot's first order takes it back
            bot = Bot(AWAY, AiStrategy())
            mine = play_blocking(
                back, bot, max_turns=300, timeout=20, turn_timeout=30, deadline=time.monotonic() + 120
            )
            back.close()
            bots.join(timeout=160)

            report = "\n".join(f"{r.name}: {r.error}" for r in results) + "\n" + server.log()[-3000:]
            assert mine.error is None and mine.game_over, (mine.error, report)
            assert mine.turns_played > 0
            assert len(results) == 3 and all(r.error is None and r.game_over for r in results), report
            final = status()
            assert final.snapshot.over and seat(final) == "playing"
            notices = db.load_games(all_states=False)[0].join_messages
            told = [m.player for m in notices if m.subject == absence_notices.BACK]
            assert sorted(told) == [1, 2, 3, 4], told  # every player was told once
            # the stand-in's orders are in the order log like anyone's, for the turns she was away
            stored = db.load_games(all_states=False)[0]
            away_turns = {e.turn for e in stored.orders if e.player == 4 and marked < e.turn}
            assert away_turns, "no recorded orders for dee's seat"
        finally:
            db.close()
