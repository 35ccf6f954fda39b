"""What the operator's clock and setting commands answer, and what players are told, in the
cases a new operator met: a calendar setting under another timer, a finished game, a paused
game without a deadline yet, a setting that does not touch the clock."""

from __future__ import annotations

from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import Phase
from server.model.timer_settings import TimerSettings
from server.operating.commands import SET
from server.operating.game_actions import OperationError, extend_game
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import new_game


def set_setting_of(game, key: str, value: str):
    """`tae-server set` carried out on a live game, as a running server's desk does it."""
    return SET.carry_out(game, {"key": key, "value": value})


def run(coroutine):
    return successResultOf(defer.ensureDeferred(coroutine))


def refused(coroutine) -> str:
    return str(failureResultOf(defer.ensureDeferred(coroutine), OperationError).value)


def notices(game, player=1):
    return [m.message.body for m in game.snapshot.board(player) if m.message.subject == "Game settings"]


def started(timer: TimerSettings, **setup):
    clock = Clock()
    clock.advance(1_000)
    _, game = new_game(clock=clock, timer=timer, **setup)
    for name in ("ann", "bob"):
        successResultOf(game.create_account(name, "x"))
    game.start()
    return game, clock


def test_finish_early_under_another_timer_is_said_neutrally_and_leaves_the_clock_alone():
    game, clock = started(TimerSettings("basic", turn_length=600))
    clock.advance(100)
    deadline = game.timer.deadline
    answer = run(set_setting_of(game, "finish_early", "no"))
    assert "never ends a turn early" not in answer and "finish_early is now no" in answer
    assert "calendar timer setting" in answer and "the timer is basic" in answer
    assert "ends in" not in answer and "deadline" not in answer
    assert game.timer.deadline == deadline  # the open turn's clock did not start again
    told = notices(game)[-1]
    assert "never ends a turn early" not in told and "started again" not in told
    answer = run(set_setting_of(game, "schedule", "Mon 20:00"))
    assert "calendar schedule is now" in answer and game.timer.deadline == deadline


def test_a_setting_that_does_not_touch_the_clock_does_not_mention_the_deadline():
    game, _ = started(TimerSettings("playersfinished", turn_length=0))
    assert run(set_setting_of(game, "max_players", "6")) == (
        "game 'tae': at most 6 players; players were told"
    )
    assert "deadline" not in run(set_setting_of(game, "account_creation", "no"))


def test_a_timer_setting_still_says_the_time_left():
    game, _ = started(TimerSettings("basic", turn_length=600))
    assert run(set_setting_of(game, "turn_length", "20m")).endswith(
        "turn_length is now 20 min; turn 0 ends in 20 min; players were told"
    )


def finished_game():
    _, game = new_game(map_text="A.A\n")  # two artifacts: the first turn ends the game
    for name in ("ann", "bob"):
        successResultOf(game.create_account(name, "x"))
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.state.phase is Phase.OVER
    return game


def test_extend_and_set_refuse_a_finished_game():
    game = finished_game()
    told = len(notices(game))
    assert refused(extend_game(game, 3600)) == "cannot extend game 'tae': the game is over"
    assert refused(set_setting_of(game, "turn_length", "1h")) == (
        "cannot change game 'tae': the game is over"
    )
    assert len(notices(game)) == told


def test_extending_a_paused_game_without_a_deadline_yet_says_it_is_paused():
    _, game = new_game(timer=TimerSettings("playersfinished", turn_length=86400))
    successResultOf(game.create_account("ann", "x"))  # one player: the clock has not started
    assert successResultOf(game.pause()) is True
    answer = refused(extend_game(game, 3600))
    assert "is paused" in answer and "tae-server resume tae" in answer
    assert "no deadline to extend" not in answer


def test_extending_a_paused_game_with_a_deadline_adds_to_the_time_at_resume():
    game, _ = started(TimerSettings("basic", turn_length=600))
    successResultOf(game.pause())
    answer = run(extend_game(game, 3600))
    assert "paused, 1 h 10 min left when resumed" in answer


def test_standing_words_the_rulesets_places_with_the_board_tie_break():
    from dataclasses import replace

    from ruleset import DEFAULT_BOARD
    from ruleset import new_game as new_state
    from ruleset.final_scoring import final_result
    from ruleset.state import EndReason, Player
    from server.views.standing import place_words, standing_of

    scores = [(12, 12, 12, 12, 0), (7, 9, 9, 9, 0), (7, 8, 20, 20, 0), (12, 12, 12, 12, 0)]
    players = tuple(Player(pid, f"p{pid}", 0, 0, s) for pid, s in enumerate(scores, start=1))
    state = new_state(DEFAULT_BOARD, 1)
    assert standing_of(state) is None  # still played: no standing
    over = replace(state, players=players, phase=Phase.OVER, result=final_result(players, EndReason.OPERATOR))
    standing = standing_of(over)
    assert standing is not None
    words = {place.player: place_words(place, 4) for place in standing.places}
    assert words[1] == words[4] == "shared rank 1 of 4 (winner), final score 12"
    # p2 and p3 both score 7; p2's next-weakest category (9) beats p3's (8).
    assert words[2] == "rank 3 of 4, final score 7"
    assert words[3] == "rank 4 of 4, final score 7"


def test_the_status_of_a_finished_game_shows_each_players_standing(tmp_path):
    from server.database import SyncDatabase, upgrade
    from server.game.game import Game
    from server.model.store import GameSetup
    from server.operating import on_database as operations
    from server.views.operator_status import status_document, status_text

    url = f"sqlite:///{tmp_path / 'tae.db'}"
    upgrade(url)
    with SyncDatabase(url) as db:
        game_setup = GameSetup("g", map_text="A.A\n", seed=1, timer=TimerSettings(turn_length=0))
        game_id = db.create_game(game_setup)
        game = Game(game_id, game_setup, game_setup.initial_state(), db, Clock())
        for name in ("ann", "bob"):
            successResultOf(game.create_account(name, "x"))
        game.finish_turn(1)
        game.finish_turn(2)
        assert game.state.phase is Phase.OVER
        status = operations.game_status(db, "g", wallclock=lambda: 1_800_000_000.0)
    assert [p.state for p in status.players] == ["over", "over"]
    document = status_document(status)
    assert [(p["name"], p["rank"], p["final"]) for p in document["standing"]["places"]] == [
        ("ann", 1, 0),
        ("bob", 1, 0),
    ]
    assert all(" " not in p["turn"] for p in document["players"]), "no sentence as a value"
    text = status_text(status)
    assert "shared rank 1 of 2 (winner), final score 0" in text
    assert "after artifacts: Money 0" in text and "time left" not in text


def test_removing_twice_says_already_removed_and_everyone_is_told_of_a_removal():
    from server.operating.game_actions import reinstate_player_in, remove_player_from

    game, _ = started(TimerSettings("basic", turn_length=600))
    successResultOf(game.create_account("dave", "x"))
    assert run(remove_player_from(game, "dave")) == "player 'dave' (player 3) removed from game 'tae'"
    assert run(remove_player_from(game, "dave")) == (
        "player 'dave' (player 3) was already removed from game 'tae'"
    )
    told = [body for body in notices(game, 1) if "removed dave" in body]
    assert told == [
        "The operator removed dave from the game: they no longer log in or give orders, "
        "and turns no longer wait for them."
    ]
    assert [body for body in notices(game, 3) if "removed dave" in body] == told
    assert 3 in game.removed_players and game.waiting_for() == [1, 2]
    assert run(reinstate_player_in(game, "dave")).endswith("reinstated in game 'tae'")


def test_a_game_whose_clock_has_not_started_says_no_deadline_yet():
    from server.operating.game_actions import pause_game

    _, game = new_game(timer=TimerSettings("playersfinished", turn_length=86400))
    successResultOf(game.create_account("ann", "x"))  # one player: the clock has not started
    assert "no deadline yet: the turn clock starts with the game" in run(
        set_setting_of(game, "turn_length", "2d")
    )
    assert "no deadline yet: it gets its time when the game resumes" in run(pause_game(game))
    _, timeless = new_game(timer=TimerSettings("playersfinished", turn_length=0))
    assert "(the turn has no deadline)" in run(pause_game(timeless))


def test_status_without_a_server_says_no_deadline_for_a_timer_that_sets_none(tmp_path, capsys):
    from server.cli import main

    database = f"sqlite:///{tmp_path / 'tae.db'}"
    main(["create-game", "g", "--seed", "1", "--turn-length", "0", "--database", database])
    main(["create-game", "h", "--seed", "1", "--turn-length", "1h", "--database", database])
    capsys.readouterr()
    main(["status", "g", "--database", database])
    assert "  time left: no deadline\n" in capsys.readouterr().out
    main(["status", "h", "--database", database])
    assert "  time left: no deadline known (the server is not running)\n" in capsys.readouterr().out
    assert not TimerSettings("threshold", turn_length_under_threshold=0).turns_have_a_deadline()
    assert TimerSettings("basic", turn_length=0).turns_have_a_deadline()
