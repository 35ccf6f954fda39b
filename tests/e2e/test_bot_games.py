"""Four bots play whole games of TaE against a real server over TCP, in TP04 and in TP03.

The server is a ``tae-server serve`` subprocess (``tests/e2e/conftest.py``) with a small map, so
a game takes a few seconds; the bots are ``clients.bot.run_bots``, one thread and one TCP
connection each, knowing only what the wire says:

    row 5   ..A....M..
    row 4   ...MM.....
    row 3   .A..M..A..
    row 2   ....MM....
    row 1   ..A.....A.
    row 0   .....M....

Six artifact systems: the game ends when merchant leaders have collected four of them (R22, R25)
or when the pool runs out (R24).
"""

from __future__ import annotations

import pytest

from clients import Version
from clients.bot import format_results, run_bots

from .conftest import running_tae_server

SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"
NAMES = ["ann", "bob", "cid", "dee"]


@pytest.fixture
def small_map_server(request, tmp_path):
    map_path = tmp_path / "small.txt"
    map_path.write_text(SMALL_MAP)
    seed = str(getattr(request, "param", 4))
    with running_tae_server(tmp_path / "server", "--map", str(map_path), "--seed", seed) as server:
        yield server


@pytest.mark.parametrize("version", [Version.TP04, Version.TP03], ids=["tp04", "tp03"])
def test_four_bots_play_to_game_over(small_map_server, version):
    host, port = small_map_server.address
    results = run_bots(
        host, port, NAMES, "secret", version, max_turns=300, timeout=20, turn_timeout=30, deadline=90
    )
    report = format_results(results) + "\n" + small_map_server.log()[-2000:]
    assert [r.name for r in results] == NAMES
    for result in results:
        assert result.error is None, report
        assert result.game_over, report
        assert result.version == version.name
        # Refusals are allowed only as the server's legitimate "no" to a race (none expected:
        # the strategy sends legal orders), and the final score is reported.
        assert result.orders_refused == 0, (result.refusals, report)
        assert result.final_score is not None and result.winning_score is not None, report
        assert result.scores is not None and result.turns_played > 0, report
    assert sorted(r.player_id for r in results) == [1, 2, 3, 4]
    # Everyone saw the same end: the same winners and winning score, and each winner's own
    # final score is the winning one.
    assert len({r.winners for r in results}) == 1 and len({r.winning_score for r in results}) == 1
    winners = set(results[0].winners)
    assert winners and winners <= set(NAMES)
    for result in results:
        assert result.won == (result.name in winners)
        if result.won:
            assert result.final_score == result.winning_score
        else:
            assert result.final_score <= result.winning_score
    assert len({r.turn for r in results}) == 1  # the last turn, seen by all


def test_a_lonely_bot_gives_up_in_time(tae_server):
    # One player never makes a turn end (the server waits for two, turn_players_min): the bot
    # plays its turn, waits, and reports the timeout instead of hanging.
    host, port = tae_server
    (result,) = run_bots(
        host, port, ["solo"], "solo-password", "tp04", timeout=5, turn_timeout=1.5, deadline=30
    )
    assert result.turns_played == 1 and not result.game_over
    assert result.error is not None and "RequestTimeout" in result.error
    assert result.seconds < 15
