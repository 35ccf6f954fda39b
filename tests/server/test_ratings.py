"""Ratings across games (`server.model.ratings`): the rule, and a game's end rating its accounts
once, in memory (`MemoryStore`) and in the database (SQLite and PostgreSQL, `database_url`),
with the rebuild from the finished games giving the same ratings."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from ruleset import Phase, final_standing
from ruleset.ai import Level
from server.database import SyncDatabase, upgrade
from server.game.game import Game
from server.model.attendance import Attendance, Presence, computer_seat
from server.model.ratings import NEW_RATING, Place, Rating, against_computer, rate
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.model.writes import RateGame
from tests.support.deferreds import successResultOf
from tests.support.games import new_game
from tests.web.bot_games import play

#: A map on which the random players end the game in a turn or two (seed 5).
QUICK_MAP = "..A.M.\n.M..A.\nA...M.\n"
#: Nobody can place a leader, so nobody scores: every player shares first place.
ALL_TIED_MAP = "MMMM\nMMMM\n"


# -- the rule ------------------------------------------------------------------------------


def test_a_win_raises_a_rating_and_a_loss_lowers_it_by_the_places():
    after = rate({}, [("ann", 1), ("bob", 2), ("cid", 3)])
    assert after["ann"].mu > NEW_RATING.mu > after["cid"].mu
    assert after["ann"].ordinal > after["bob"].ordinal > after["cid"].ordinal
    assert all(r.sigma < NEW_RATING.sigma and r.games == 1 for r in after.values())


def test_players_who_share_a_place_tie_and_a_shared_rank_skips():
    after = rate({}, [("ann", 1), ("bob", 1), ("cid", 3)])
    assert after["ann"] == after["bob"]
    assert after["ann"].mu > after["cid"].mu
    tied = rate({}, [("ann", 1), ("bob", 1)])
    assert tied["ann"].mu == pytest.approx(NEW_RATING.mu) and tied["ann"] == tied["bob"]


def test_the_rating_before_counts_a_win_over_a_stronger_player_counts_more():
    strong = Rating(35.0, 3.0, 20)
    over_strong = rate({"bob": strong}, [("ann", 1), ("bob", 2)])["ann"]
    over_new = rate({}, [("ann", 1), ("bob", 2)])["ann"]
    assert over_strong.mu > over_new.mu
    assert rate({"bob": strong}, [("ann", 1), ("bob", 2)])["bob"].games == 21


def test_a_game_of_one_account_changes_nothing():
    assert rate({"ann": Rating(30.0, 5.0, 3)}, [("ann", 1)]) == {"ann": Rating(30.0, 5.0, 3)}


def test_the_shown_rating_is_the_conservative_ordinal():
    assert NEW_RATING.ordinal == pytest.approx(0.0)
    assert Rating(30.0, 2.0).ordinal == pytest.approx(24.0)


def test_only_a_computer_player_makes_a_game_against_the_computer():
    assert against_computer([Attendance(1), computer_seat(2, Level.EASY)])
    stood_in = [
        Attendance(1, Presence.ABSENT, 2),
        Attendance(2, Presence.RESIGNED),
        Attendance(3, Presence.VACATION),
    ]
    assert not against_computer(stood_in)


# -- a game's end --------------------------------------------------------------------------


def finished(store_game, names=("ann", "bob", "cid"), computer: bool = False) -> Game:
    _, game = store_game
    for name in names:
        successResultOf(game.create_account(name, name + "-password"))
    if computer:
        successResultOf(game.add_computer_player(Level.EASY))
    play(game)
    assert game.state.phase is Phase.OVER
    return game


def places(game: Game) -> dict[str, tuple[int, bool]]:
    standing = final_standing(game.state)
    assert standing is not None
    return {place.name: (place.rank, place.shared) for place in standing.places}


def test_a_finished_game_rates_its_accounts_by_its_places_once():
    store, game = new_game("nova", map_text=QUICK_MAP, seed=5)
    finished((store, game))
    table = store.ratings.table()
    assert [line.rating.games for line in table] == [1, 1, 1]
    ranks = places(game)
    best = min(ranks, key=lambda name: ranks[name][0])
    assert table[0].name == best
    before = table
    # the same end stored again (a retried commit) rates nothing twice
    standing = final_standing(game.state)
    assert standing is not None
    again = RateGame(tuple(Place(p.player, p.rank, 3, p.shared) for p in standing.places), False, 0.0)
    store.ratings.rate_game(game.id, again.places, again.against_computer, again.ended_at)
    assert store.ratings.table() == before
    record = store.ratings.player("ANN")
    assert record is not None and record.name == "ann"
    assert [(r.game, r.place.rank, r.rated) for r in record.results] == [("nova", ranks["ann"][0], True)]


def test_a_game_against_the_computer_is_kept_but_not_rated():
    store, game = new_game("solo", map_text=QUICK_MAP, seed=5)
    finished((store, game), names=("ann", "bob"), computer=True)
    assert store.ratings.table() == []
    record = store.ratings.player("ann")
    assert record is not None and record.rating == NEW_RATING
    (result,) = record.results
    assert result.against_computer and not result.rated and result.change is None


# -- the database ----------------------------------------------------------------------------


def db_game(db: SyncDatabase, name: str, seed: int = 5, map_text: str = QUICK_MAP) -> Game:
    setup = GameSetup(name, map_text=map_text, seed=seed, timer=TimerSettings(turn_length=0))
    game_id = db.create_game(setup)
    return Game(game_id, setup, setup.initial_state(), db, Clock())


@pytest.mark.timeout(120)
def test_the_database_rates_each_game_once_skips_the_computer_and_rebuilds_the_same(database_url):
    upgrade(database_url)
    with SyncDatabase(database_url) as db:
        first = finished((db, db_game(db, "g1")))
        finished((db, db_game(db, "g2", seed=7)), names=("bob", "cid", "ann"))
        finished((db, db_game(db, "g3", map_text=ALL_TIED_MAP)), names=("ann", "dee"))
        finished((db, db_game(db, "g4")), names=("ann", "bob"), computer=True)
        table = db.ratings.table()
        by_name = {line.name: line.rating for line in table}
        assert {name: rating.games for name, rating in by_name.items()} == {
            "ann": 3,
            "bob": 2,
            "cid": 2,
            "dee": 1,
        }
        assert [line.rating.ordinal for line in table] == sorted(
            (line.rating.ordinal for line in table), reverse=True
        )
        # g3: a tie of ann and dee, both at rank 1
        ann = db.ratings.player("Ann")
        assert ann is not None and ann.name == "ann"
        assert [(r.game, r.against_computer, r.rated) for r in ann.results] == [
            ("g4", True, False),
            ("g3", False, True),
            ("g2", False, True),
            ("g1", False, True),
        ]
        assert ann.results[1].place.rank == 1 and ann.results[1].place.shared
        assert ann.results[-1].place.rank == places(first)["ann"][0]
        assert db.ratings.player("nobody") is None
        # a game's end stored again rates nothing twice
        standing = final_standing(first.state)
        assert standing is not None
        step = RateGame(tuple(Place(p.player, p.rank, 3, p.shared) for p in standing.places), False, 1.0)
        from server.database.ratings import thd_rate_game

        assert db.run(thd_rate_game, first.id, step.places, False, 1.0) is False
        assert db.ratings.table() == table
        # the rebuild rates the finished games again, in the order they ended: the same table
        assert db.ratings.rebuild() == (3, 1)
        assert db.ratings.table() == table
    # the operator's command rebuilds and lists the same table
    from click.testing import CliRunner

    from server.cli import cli
    from tests.support.json_schemas import json_answer

    listed = CliRunner().invoke(cli, ["ratings", "--rebuild", "--json", "--database", database_url])
    assert listed.exit_code == 0, listed.output
    document = json_answer(listed.output)
    assert document["rebuilt"] == {"rated": 3, "against_the_computer": 1}
    assert [(p["name"], p["games"]) for p in document["players"]] == [
        (line.name, line.rating.games) for line in table
    ]
    shown = CliRunner().invoke(cli, ["ratings", "--database", database_url])
    assert shown.exit_code == 0 and f"1. {table[0].name}" in shown.output


@pytest.mark.timeout(120)
def test_games_that_ended_before_the_ratings_are_rated_by_the_rebuild(database_url):
    """A database of the version before (0007a) with a finished game: the upgrade rates nothing,
    `rebuild` rates it as the game's end would have."""
    from alembic import command

    from server.database import create_engine
    from server.database.migrate import alembic_config

    upgrade(database_url)
    with SyncDatabase(database_url) as db:
        finished((db, db_game(db, "old")))
        rated_live = db.ratings.table()
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0007a")  # the schema before the ratings
    finally:
        engine.dispose()
    upgrade(database_url)
    with SyncDatabase(database_url) as db:
        assert db.ratings.table() == []
        ann = db.ratings.player("ann")
        assert ann is not None and ann.results == ()
        assert db.ratings.rebuild() == (1, 0)
        assert db.ratings.table() == rated_live
        ann = db.ratings.player("ann")
        assert ann is not None and [r.game for r in ann.results] == ["old"] and ann.results[0].ended_at > 1e9
