"""Revision 0007a upgrades a database of per-game accounts, made as the code before it made them
(the schema at 0006c, the rows `thd_add_account` of that version wrote), without losing anyone:
SQLite and PostgreSQL (`database_url`)."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from alembic import command
from twisted.internet.task import Clock

from server.database import SyncDatabase, create_engine, upgrade
from server.database import games as q
from server.database.migrate import alembic_config
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import hash_password
from server.model.refusals import BAD_LOGIN, Refused
from server.model.store import GameSetup
from server.operating.game_actions import OperationError
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.operator import operate

pytestmark = pytest.mark.timeout(120)

# game -> [(player, name, password)]: alice plays both games with one password, carol with two;
# Bob and bob are one name (compared as RFC 8265 compares names) with one password.
PER_GAME = {
    "tae": [
        (1, "alice", "alice-pw"),
        (2, "Bob", "bob-pw"),
        (3, "carol", "carol-tae"),
        (4, "dave", "dave-pw"),
    ],
    "g2": [(1, "alice", "alice-pw"), (2, "carol", "carol-g2"), (3, "bob", "bob-pw")],
}


def database_of_the_version_before(url: str) -> None:
    """Migrate to 0006c and store per-game accounts as that version's thd_add_account did."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0006c")
        with engine.begin() as conn:
            for name, seats in PER_GAME.items():
                game_id = q.thd_create_game(conn, GameSetup(name, ctime=1_700_000_000))
                for player, username, password in seats:
                    conn.execute(
                        sa.text(
                            "INSERT INTO accounts (game_id, player_id, username, password_hash, email,"
                            " comment, joined_turn) VALUES (:g, :p, :u, :h, '', '', 0)"
                        ),
                        {"g": game_id, "p": player, "u": username, "h": hash_password(password, n=2**4)},
                    )
    finally:
        engine.dispose()


def restored(db: SyncDatabase) -> GameDirectory:
    directory = GameDirectory()
    for stored in db.load_games(all_states=False):
        directory.add(Game.restore(stored, db, Clock()))
    return directory


def test_the_upgrade_keeps_every_player_and_keeps_same_named_accounts_apart(database_url):
    database_of_the_version_before(database_url)
    assert upgrade(database_url) == "0008r"  # the head, past 0007a
    with SyncDatabase(database_url) as db:
        directory = restored(db)
        tae, g2 = directory.find("tae"), directory.find("g2")
        assert dict(tae.snapshot.owners) == {1: "alice", 2: "Bob", 3: "carol", 4: "dave"}
        assert dict(g2.snapshot.owners) == {1: "alice~g2", 2: "carol~g2", 3: "bob~g2"}
        assert g2.snapshot.usernames[1] == "alice"  # the seat keeps its name in its game
        # the player kept apart is told, on the game's board
        told = [m.message.body for m in g2.snapshot.boards[2]]
        assert any("kept apart as carol~g2" in body for body in told)
        assert not any("kept apart" in m.message.body for m in tae.snapshot.boards.get(4, ()))
        # every old login works
        for game in (tae, g2):
            for player, username, password in PER_GAME[game.setup.name]:
                assert successResultOf(game.authenticate(f"{username}", password)) == player
        # alice proved one password for both: her accounts are one now; carol's stay apart
        assert dict(g2.snapshot.owners)[1] == "alice" and dict(g2.snapshot.owners)[3] == "Bob"
        assert dict(g2.snapshot.owners)[2] == "carol~g2"
        failure = failureResultOf(tae.authenticate("carol", "carol-g2"), Refused)
        assert failure.value.problem == BAD_LOGIN
    with SyncDatabase(database_url) as db:  # stored: a restart sees the joined accounts
        again = restored(db)
        assert dict(again.find("g2").snapshot.owners) == {1: "alice", 2: "carol~g2", 3: "Bob"}
        names = db.run(lambda conn: sorted(conn.execute(sa.text("SELECT username FROM users")).scalars()))
        assert names == ["Bob", "alice", "carol", "carol~g2", "dave"]


def test_an_operator_joins_an_account_kept_apart_to_the_account_of_its_name(database_url):
    database_of_the_version_before(database_url)
    upgrade(database_url)
    with SyncDatabase(database_url) as db:
        joined = operate(db, "join-accounts", "g2", "carol", wallclock=time.time)
        assert joined.text == (
            "player 'carol' of game 'g2' now plays with the account 'carol' and its password"
            " ('carol~g2' is no more)"
        )
        again = operate(db, "join-accounts", "g2", "carol", wallclock=time.time)
        assert again.text == "player 'carol' of game 'g2' plays with the account 'carol'"
        with pytest.raises(OperationError, match="has no player named 'zed'"):
            operate(db, "join-accounts", "g2", "zed", wallclock=time.time)
        g2 = restored(db).find("g2")
        assert g2.snapshot.owners[2] == "carol"
        assert successResultOf(g2.authenticate("carol", "carol-tae")) == 2
        assert failureResultOf(g2.authenticate("carol", "carol-g2"), Refused).value.problem == BAD_LOGIN


def test_the_upgrade_goes_down_again_with_every_password(database_url):
    database_of_the_version_before(database_url)
    upgrade(database_url)
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0006c")
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT username, password_hash FROM accounts")).all()
            assert len(rows) == 7 and all(h.startswith("scrypt") for _, h in rows)
            assert "users" not in sa.inspect(conn).get_table_names()
        assert upgrade(engine) == "0008r"  # the head, past 0007a
    finally:
        engine.dispose()
