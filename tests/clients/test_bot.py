"""The bot runner: whole games in process through the server's own code (the bot talks bytes
over an in-memory loopback), refusals, game over, the command line."""

from __future__ import annotations

import dataclasses

import pytest

from clients import Version
from clients.bot import Bot, BotResult, format_results, run_bots
from clients.bot_view import Intent, Strategy, View
from clients.seat_frames import AiStrategy, RandomStrategy
from clients.tae_model import MOVE, FleetKind
from tests.benchmarks.bench_bot import (
    cheap_passwords as cheap_password_hashing,
)
from tests.benchmarks.bench_bot import (
    loopback_client,
    make_game,
    play_in_process,
)

SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"


@pytest.fixture(autouse=True, scope="module")
def cheap_passwords():
    with cheap_password_hashing():
        yield


@pytest.mark.parametrize("version", [Version.TP04, Version.TP03], ids=["tp04", "tp03"])
def test_bot_beats_random_in_process(version):
    outcome = play_in_process(3, ["bot", "random"], map_text=SMALL_MAP, version=version)
    assert outcome.ended
    (bot_id,) = outcome.bots
    result = outcome.bots[bot_id]
    assert result.game_over and result.error is None and result.orders_refused == 0
    assert result.final_score == outcome.final[bot_id]  # what the wire said = the server's result
    assert result.won == (bot_id in outcome.winners)
    assert result.turns_played > 0 and result.orders_accepted > 0


def test_two_bots_play_to_the_end_in_process():
    outcome = play_in_process(5, ["bot", "bot"], map_text=SMALL_MAP, version=Version.TP03)
    assert outcome.ended
    for pid, result in outcome.bots.items():
        assert result.game_over and result.error is None
        assert result.final_score == outcome.final[pid]
        assert result.player_id == pid


def test_bots_on_the_default_map_with_random_players():
    outcome = play_in_process(11, ["random", "bot", "random"])
    assert outcome.ended
    (bot_id,) = outcome.bots
    assert outcome.bots[bot_id].ok


class Scripted(Strategy):
    """First a Move on a colonist (refused: R7), then whatever the real bot would do, as
    alternates."""

    def __init__(self):
        self.views: list[View] = []

    def decide(self, view: View) -> list[Intent]:
        self.views.append(view)
        colonist = next(f for f in view.fleets if f.role is FleetKind.COLONIST)
        target = next(s.system_id for s in view.squares.values() if s.colony is None)
        good = [dataclasses.replace(i, alternate=True) for i in AiStrategy().decide(view)]
        return [Intent(colonist.id, MOVE, target, 1.0, "bad")] + good


def test_a_refused_order_is_logged_and_an_alternate_sent():
    directory, game = make_game(1, SMALL_MAP)
    clients = []
    for name in ("ann", "bob"):
        client = loopback_client(directory)
        client.login(name, "pw", create=True)
        clients.append(client)
    strategy = Scripted()
    bot = Bot("ann", strategy)
    report = clients[0].run(bot.turn_plan(clients[0].game))
    assert len(report.refused) == 1
    refused, problem = report.refused[0]
    assert refused.reason == "bad" and "Not allowed" in problem
    assert len(report.accepted) == 1 and report.accepted[0].alternate
    assert bot.result.orders_refused == 1 and bot.result.orders_accepted == 1
    assert report.finished and game.finished == {1}
    queued = game.orders_of(1)
    assert [(o.fleet, o.target) for o in queued] == [(report.accepted[0].fleet, report.accepted[0].target)]


def test_game_over_stops_the_bot():
    outcome = play_in_process(4, ["random", "bot"], map_text=SMALL_MAP, keep_clients=True)
    assert outcome.ended
    ((bot, client),) = outcome.clients.values()
    played = bot.result.turns_played
    sent = len(client.connection.session.pending)
    report = client.run(bot.turn_plan(client.game))  # after GAME OVER: read, decide nothing
    assert report.over and not report.intents and not report.finished
    assert bot.result.turns_played == played and bot.result.game_over
    assert sent == 0 and client.game.is_over
    client.close()


def test_run_bots_reports_a_server_that_is_not_there(closed_port):
    results = run_bots("127.0.0.1", closed_port, ["a", "b"], "pw", "tp03", timeout=2, turn_timeout=2)
    assert [r.name for r in results] == ["a", "b"]
    assert all(r.error and "ConnectFailed" in r.error for r in results)
    assert all(not r.ok for r in results)
    with pytest.raises(ValueError):
        run_bots("127.0.0.1", 1, ["a", "a"], "pw")


def test_format_results():
    done = BotResult(
        "ann",
        player_id=1,
        game_over=True,
        turn=30,
        final_score=4,
        won=True,
        winners=("ann",),
        scores=(4, 5, 6, 7, 1),
    )
    text = format_results([done, BotResult("bob", error="ConnectFailed: no")], 1.5)
    assert "WON" in text and "ERROR ConnectFailed" in text and "2 bots in 1.5 s" in text


def test_random_strategy_plays_a_game_in_process():
    outcome = play_in_process(
        6, ["bot", "bot"], map_text=SMALL_MAP, strategy=lambda: RandomStrategy(6), max_turns=150
    )
    for result in outcome.bots.values():
        assert result.error is None and result.orders_refused == 0


def test_turn_plan_runs_on_the_twisted_transport():
    """The same turn plan runs on a TwistedClient (here over an in-memory IOPump)."""
    from twisted.internet.task import Clock
    from twisted.test.iosim import connectedServerAndClient

    from clients.twisted_transport import TPClientProtocol, TwistedClient
    from protocol import Connect
    from protocol import Version as V
    from server.tp.network import TPConnection

    directory, game = make_game(7, SMALL_MAP)
    other = loopback_client(directory)
    other.login("other", "pw", create=True)
    clock = Clock()
    protocol, _server, pump = connectedServerAndClient(
        lambda: TPConnection(directory), lambda: TPClientProtocol(V.TP04, clock=clock, timeout=5)
    )
    client = TwistedClient(protocol, clock=clock)

    def wait(deferred):
        box = []
        deferred.addBoth(box.append)
        for _ in range(1000):
            if box:
                break
            pump.flush()
        assert box, "no answer"
        if hasattr(box[0], "raiseException"):
            box[0].raiseException()
        return box[0]

    wait(client.request(Connect("bot-test")))
    wait(client.login("twisty", "pw", create=True))
    bot = Bot("twisty")
    report = wait(client.run(bot.turn_plan(client.game)))
    assert report.finished and report.accepted and not report.refused
    assert game.finished == {2} and len(game.orders_of(2)) == len(report.accepted)
