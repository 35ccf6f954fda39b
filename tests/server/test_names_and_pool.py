"""Names and passwords prepared by RFC 8265 (server.model.names) where accounts are created and
logged in to, over TP and in the game; a game refuses a player its pool cannot deal a hand."""

from __future__ import annotations

import unicodedata

import pytest
from twisted.internet import defer

import protocol as tp
import ruleset
from server.model.names import (
    BadName,
    BadPassword,
    looks_taken,
    prepare_password,
    prepare_username,
    username_key,
)
from server.model.refusals import (
    ACCOUNT_EXISTS,
    BAD_LOGIN,
    BAD_NAME,
    POOL_EXHAUSTED,
    UNUSABLE_PASSWORD,
    Refused,
)
from tests.server.wire import Wire, make_directory
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import logs_in

NFD_ANN = unicodedata.normalize("NFD", "Ånn")


def refused(d: defer.Deferred) -> Refused:
    return failureResultOf(d, Refused).value


def test_the_precis_preparation_of_names():
    assert prepare_username("Ann") == "Ann" and username_key("Ann") == "ann"
    assert prepare_username("ａｎｎ") == "ann"  # full-width, mapped to its ASCII width
    assert prepare_username(NFD_ANN) == unicodedata.normalize("NFC", "Ånn")
    assert username_key("ÅNN") == username_key(NFD_ANN)
    for bad in ("", "a b", "a@b", "x" * 65, "\x00", "tab\there", "a\ud800"):
        with pytest.raises(BadName):
            prepare_username(bad)
    assert looks_taken("аnn", ["bob", "ann"]) == "ann"  # a Cyrillic а
    assert looks_taken("ANN", ["ann"]) == "ann" and looks_taken("anne", ["ann"]) is None


def test_the_precis_preparation_of_passwords():
    assert prepare_password("pass\u00a0word") == "pass word"  # a non-ASCII space is a space
    assert prepare_password(unicodedata.normalize("NFD", "pässword")) == "pässword"
    for bad in ("", "pass\ud800word", "\x00secret", "x" * 1025):
        with pytest.raises(BadPassword):
            prepare_password(bad)


@pytest.mark.parametrize("look_alike", ["аnn", "ａｎｎ", "ANN", "Ann"])
def test_a_name_that_is_or_looks_like_an_existing_one_is_refused(new_game, look_alike):
    store, game = new_game()
    assert successResultOf(game.create_account("ann", "ann-password")) == 1
    problem = refused(game.create_account(look_alike, "other-password")).problem
    # the same name (case, width) exists; a look-alike is refused naming the name it looks like
    assert problem == ACCOUNT_EXISTS or (problem.code == ACCOUNT_EXISTS.code and "'ann'" in problem.message)
    assert len(store.games[game.id].accounts) == 1


def test_a_name_is_stored_as_prepared_and_found_in_any_of_its_forms(new_game):
    _, game = new_game()
    successResultOf(game.create_account(NFD_ANN, "ann-password"))
    (stored,) = game.accounts
    assert stored == unicodedata.normalize("NFC", "Ånn")
    assert logs_in(game, "åNN", "ann-password") == 1 and logs_in(game, NFD_ANN, "ann-password") == 1
    assert logs_in(game, "ａnn", "ann-password") is None  # another name (Å is not A)


def test_a_password_with_an_unpaired_surrogate_is_refused_not_crashed_on(new_game):
    _, game = new_game()
    assert refused(game.create_account("ann", "pass\ud800word")).problem == UNUSABLE_PASSWORD
    successResultOf(game.create_account("ann", "ann-password"))
    assert refused(game.authenticate("ann", "ann\udfffpassword")).problem == BAD_LOGIN
    assert refused(game.change_password("ann", "ann-password", "\ud800" * 8)).problem == UNUSABLE_PASSWORD
    assert refused(game.create_account("a\ud800", "password")).problem == BAD_NAME


def test_a_game_refuses_a_player_its_pool_cannot_deal_a_hand(new_game):
    _, game = new_game()
    # the standard pool deals 25 hands of 6 (153 colonists)
    for n in range(25):
        assert successResultOf(game.create_account(f"p{n}", "password")) == n + 1
    assert not ruleset.can_deal_hand(game.state) and sum(game.state.pool) == 3
    assert refused(game.create_account("late", "password")).problem == POOL_EXHAUSTED
    assert len(game.state.players) == 25


def test_over_tp_a_full_pool_and_a_look_alike_are_clear_fails():
    directory, game = make_directory()
    wire = Wire(directory)
    assert isinstance(wire.one(tp.Connect("t")), tp.Okay)
    assert isinstance(wire.one(tp.CreateAccount("ann", "ann-password", "", "")), tp.Okay)
    look_alike = wire.one(tp.CreateAccount("аnn", "other-password", "", ""))
    assert isinstance(look_alike, tp.Fail) and "looks like" in look_alike.message
    for n in range(24):
        assert isinstance(wire.one(tp.CreateAccount(f"p{n}", "password", "", "")), tp.Okay)
    full = wire.one(tp.CreateAccount("late", "password", "", ""))
    assert isinstance(full, tp.Fail) and full.message == POOL_EXHAUSTED.message
    assert isinstance(wire.one(tp.Login("ＡＮＮ", "ann-password")), tp.Okay)  # full-width: the same ann
