"""One account per server (`server.game.server_accounts`): joining a second game with the same
name and password, a password change that holds in every game, names compared as RFC 8265
compares them, and accounts kept apart (`alice~g2`) joined once their owner proves each password.
In memory (MemoryStore, a Clock); the database side is in test_account_migration.py."""

from __future__ import annotations

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

import protocol as tp
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import hash_password
from server.model.memory_store import MemoryStore
from server.model.refusals import (
    ACCOUNT_EXISTS,
    BAD_LOGIN,
    NO_SUCH_ACCOUNT,
    WRONG_ACCOUNT_PASSWORD,
    Refused,
)
from server.model.store import Account, GameSetup, StoredGame
from server.model.timer_settings import TimerSettings
from server.model.writes import StoreAccount
from tests.support.deferreds import failureResultOf, successResultOf

from .wire import Wire


def games_named(*names: str) -> tuple[GameDirectory, list[Game]]:
    store = MemoryStore()
    directory = GameDirectory()
    games = []
    for name in names:
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=0))
        game = Game(store.create_game(setup), setup, setup.initial_state(), store, Clock())
        directory.add(game)
        game.start()
        games.append(game)
    return directory, games


def two_games() -> tuple[GameDirectory, Game, Game]:
    directory, (tae, g2) = games_named("tae", "g2")
    return directory, tae, g2


def refusal(d) -> object:
    return failureResultOf(d, Refused).value.problem


def test_the_same_name_and_password_join_a_second_game_and_log_in_to_both():
    directory, tae, g2 = two_games()
    assert successResultOf(tae.create_account("Alice", "alice-pw")) == 1
    assert refusal(g2.create_account("alice", "wrong-pw")) == WRONG_ACCOUNT_PASSWORD
    assert successResultOf(g2.create_account("ALICE", "alice-pw")) == 1
    assert g2.snapshot.usernames[1] == "Alice"  # the account's own name, whatever the case typed
    assert successResultOf(tae.authenticate("alice", "alice-pw")) == 1
    assert successResultOf(g2.authenticate("alice", "alice-pw")) == 1
    assert refusal(g2.create_account("alice", "alice-pw")) == ACCOUNT_EXISTS  # already seated
    assert [game.setup.name for game, _ in directory.accounts.seats("alice")] == ["tae", "g2"]


def test_a_new_name_that_looks_like_another_games_account_is_refused():
    _, tae, g2 = two_games()
    successResultOf(tae.create_account("ann", "ann-password"))
    problem = refusal(g2.create_account("\u0430nn", "other-password"))  # Cyrillic а
    assert problem.code == 2 and "looks like" in problem.message.lower()


def test_a_password_change_holds_in_every_game_and_revokes_the_other_games_marks():
    _, tae, g2 = two_games()
    successResultOf(tae.create_account("alice", "alice-pw"))
    successResultOf(g2.create_account("alice", "alice-pw"))
    old_mark = g2.snapshot.credential_marks[1]
    successResultOf(tae.change_password("alice", "alice-pw", "new-password"))
    assert successResultOf(g2.authenticate("alice", "new-password")) == 1
    assert refusal(g2.authenticate("alice", "alice-pw")) == BAD_LOGIN
    assert g2.snapshot.credential_marks[1] != old_mark
    assert g2.snapshot.credential_marks[1] == tae.snapshot.credential_marks[1]


def test_a_vouched_join_and_the_operators_add_player_take_the_existing_account():
    _, (tae, g2, g3) = games_named("tae", "g2", "g3")
    successResultOf(tae.create_account("alice", "alice-pw"))
    assert refusal(g2.join_account("nobody")) == NO_SUCH_ACCOUNT
    assert successResultOf(g2.join_account("alice")) == 1
    assert successResultOf(g2.authenticate("alice", "alice-pw")) == 1
    # an operator's add-player of an existing name: the account joins with its own password
    added = g3.create_account("alice", "", password_hash=hash_password("operator-pw", n=2**4))
    assert successResultOf(added) == 1
    assert successResultOf(g3.authenticate("alice", "alice-pw")) == 1


def kept_apart_games(pw_tae: str, pw_g2: str) -> tuple[GameDirectory, Game, Game]:
    """Two games as revision 0007a leaves per-game accounts that shared the name alice."""
    store = MemoryStore()
    directory = GameDirectory()
    seats = {"tae": Account("alice", hash_password(pw_tae, n=2**4), 1), "g2": None}
    seats["g2"] = Account("alice", hash_password(pw_g2, n=2**4), 1, owner="alice~g2")
    games = []
    for name, seat in seats.items():
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=0))
        game_id = store.create_game(setup)
        store.games[game_id].accounts.append(seat)
        game = Game.restore(StoredGame(game_id, setup, accounts=[seat]), store, Clock())
        directory.add(game)
        games.append(game)
    return directory, games[0], games[1]


def test_accounts_kept_apart_join_when_a_login_proves_the_same_password():
    directory, tae, g2 = kept_apart_games("same-pw", "same-pw")
    assert g2.snapshot.owners[1] == "alice~g2" and directory.accounts.kin("alice") == ["alice~g2"]
    assert successResultOf(g2.authenticate("alice", "same-pw")) == 1  # the old login goes on
    assert g2.snapshot.owners[1] == "alice" and directory.accounts.kin("alice") == []
    assert [account.owner for account in g2.store.games[g2.id].accounts] == [""]
    assert [game.setup.name for game, _ in directory.accounts.seats("alice")] == ["tae", "g2"]


def test_accounts_with_different_passwords_stay_apart_and_each_logs_in_to_its_game():
    directory, tae, g2 = kept_apart_games("tae-pw", "g2-pw")
    assert successResultOf(tae.authenticate("alice", "tae-pw")) == 1
    assert successResultOf(g2.authenticate("alice", "g2-pw")) == 1
    assert refusal(g2.authenticate("alice", "tae-pw")) == BAD_LOGIN
    assert g2.snapshot.owners[1] == "alice~g2"
    # the server account alice is the first game's; the name kept apart is found by its password
    assert successResultOf(directory.accounts.authenticate("alice", "tae-pw")) == "alice"
    assert successResultOf(directory.accounts.authenticate("alice", "g2-pw")) == "alice~g2"
    assert refusal(directory.accounts.authenticate("alice", "nobodys-pw")) == BAD_LOGIN
    # after a password change to the other one's, the next login joins them
    successResultOf(g2.change_password("alice", "g2-pw", "tae-pw"))
    assert successResultOf(directory.accounts.authenticate("alice", "tae-pw")) == "alice"
    assert g2.snapshot.owners[1] == "alice"


@pytest.mark.parametrize("version", [tp.Version.TP03, tp.Version.TP04])
def test_a_tp_client_creates_name_at_game_with_the_accounts_password(version):
    directory, tae, g2 = two_games()
    first = Wire(directory, version)
    first.login("alice@tae", "alice-pw")
    second = Wire(directory, version)
    assert isinstance(second.one(tp.Connect("test")), tp.Okay)
    wrong = second.one(tp.CreateAccount("alice@g2", "not-it", "", ""))
    assert isinstance(wrong, tp.Fail) and wrong.message == WRONG_ACCOUNT_PASSWORD.message
    assert isinstance(second.one(tp.CreateAccount("alice@g2", "alice-pw", "", "")), tp.Okay)
    assert isinstance(second.one(tp.Login("alice@g2", "alice-pw")), tp.Okay)
    assert g2.snapshot.usernames == {1: "alice"}


def two_processes() -> tuple[Game, Game]:
    """Two directories on one store, as two cluster nodes: the store knows every account."""
    store = MemoryStore()
    games = []
    for name in ("north", "south"):
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=0))
        game = Game(store.create_game(setup), setup, setup.initial_state(), store, Clock())
        GameDirectory().add(game)
        games.append(game)
    return games[0], games[1]


def test_an_account_another_process_plays_logs_in_and_joins_through_the_store():
    north, south = two_processes()
    successResultOf(north.create_account("alice", "alice-pw"))
    assert successResultOf(south.server_accounts.authenticate("ALICE", "alice-pw")) == "alice"
    assert refusal(south.server_accounts.authenticate("alice", "other-pw")) == BAD_LOGIN
    assert refusal(south.server_accounts.authenticate("nobody", "other-pw")) == BAD_LOGIN
    assert successResultOf(south.join_account("alice")) == 1
    assert successResultOf(south.authenticate("alice", "alice-pw")) == 1


def test_an_account_of_a_game_another_process_runs_joins_with_its_password_only():
    north, south = two_processes()
    successResultOf(north.create_account("alice", "alice-pw"))
    assert refusal(south.create_account("alice", "other-pw")) == WRONG_ACCOUNT_PASSWORD
    assert south.snapshot.usernames == {}
    assert successResultOf(south.create_account("Alice", "alice-pw")) == 1
    assert successResultOf(south.authenticate("alice", "alice-pw")) == 1
    assert south.snapshot.usernames == {1: "alice"}


class HeldStore(MemoryStore):
    """A store whose seats are stored only when the test says so (a busy database)."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list = []

    def write(self, game_id, write):
        if any(isinstance(step, StoreAccount) for step in write.steps):
            d = defer.Deferred()
            self.held.append((d, game_id, write))
            return d
        return super().write(game_id, write)

    def release(self) -> None:
        while self.held:
            d, game_id, write = self.held.pop(0)
            try:
                d.callback(super().write(game_id, write))
            except Exception:
                d.errback()


def test_one_person_joining_two_games_at_once_makes_one_account():
    """As bots join every game of a cluster at the same moment: both games find no account and
    make one; the second store write finds the first's, and its game joins it instead."""
    store = HeldStore()
    games = []
    for name in ("north", "south"):
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=0))
        game = Game(store.create_game(setup), setup, setup.initial_state(), store, Clock())
        GameDirectory().add(game)
        games.append(game)
    north, south = games
    first, second = north.create_account("p0", "a-password"), south.create_account("p0", "a-password")
    other = south.create_account("p1", "b-password")
    store.release()  # north's p0 is stored; south's p0 finds it and joins it (held again)
    store.release()
    assert successResultOf(first) == 1 and successResultOf(second) in (1, 2) and successResultOf(other)
    assert successResultOf(south.authenticate("p0", "a-password")) == south.player_id("p0")
    made = [north.create_account("p2", "c-password"), south.create_account("p2", "not-the-same")]
    store.release()
    store.release()
    assert successResultOf(made[0]) == 2 and refusal(made[1]) == WRONG_ACCOUNT_PASSWORD
