"""Turn summaries (public lines only) and the history book (snapshots first, the store after a restart)."""

from __future__ import annotations

from twisted.internet.task import Clock

from ruleset import Event, Phase
from server.views.web.history import HistoryBook, summarise

from .bot_games import play
from .fake_game import FakeGame


def played_game(seed=3, players=("ann", "bob", "cy")):
    game = FakeGame("G", Clock(), seed=seed)
    for name in players:
        game.create_account(name, "pw")
    play(game)
    return game


def test_private_events_never_make_a_line():
    game = played_game()
    state = game.state
    private = (
        Event("scored", 1, None, 3, "money"),
        Event("drawn", 1, 400),
        Event("reinforced", 2, 401),
        Event("order failed", 1, 402, detail="You're fleet tried"),
    )
    assert summarise(5, None, state, private).lines == ()


def test_every_public_event_of_a_whole_game_is_told():
    game = played_game()
    records = [game.archive.turns[(1, t)] for t in range(1, game.state.turn + 1)]
    before = None
    told = {"colonized": 0, "conflict resolved": 0, "moved": 0}
    for record in records:
        summary = summarise(record.turn, before, record.state, record.events)
        for kind in told:
            told[kind] += sum(1 for e in record.events if e.kind == kind)
        lines = " ".join(summary.lines)
        assert lines.count("colony on") == sum(1 for e in record.events if e.kind == "colonized")
        assert lines.count("won the") == sum(1 for e in record.events if e.kind == "conflict resolved")
        assert lines.count("moved to") == sum(1 for e in record.events if e.kind == "moved")
        if any(e.kind == "conflict resolved" for e in record.events):
            assert " against " in lines  # the loser is named from the turn before
        before = record.state
    assert all(told.values()), told
    last = " ".join(summarise(records[-1].turn, None, records[-1].state, records[-1].events).lines)
    assert last.endswith("The game ended because the colonist pool ran out.")  # ruleset.EndReason.POOL


def test_the_book_follows_snapshots_without_reading_the_store():
    game = FakeGame("G", Clock(), seed=3)
    for name in ("ann", "bob"):
        game.create_account(name, "pw")
    book = HistoryBook(game.archive, 1)
    loads_before = game.archive.loads

    def follow(game):
        book.ensure(game.snapshot)

    play(game, max_turns=8, every=follow)
    assert book.known == 8 and game.archive.loads == loads_before
    assert [s.turn for s in book.summaries] == list(range(8))  # TP numbers: the first turn is 0
    assert [t for t, _ in book.scores_of(1)] == list(range(8))
    assert book.scores_of(2)[-1][1] == game.state.player(2).scores


def test_after_a_restart_the_book_reads_the_played_turns_from_the_store():
    game = played_game(seed=4, players=("ann", "bob"))
    book = HistoryBook(game.archive, 1)
    results = []
    book.ensure(game.snapshot).addBoth(results.append)
    assert results == [None]
    assert book.known == game.state.turn and game.archive.loads == game.state.turn
    assert book.summaries[-1].phase_after is Phase.OVER


def test_a_turn_missing_from_the_store_fails_the_page_not_the_server():
    game = played_game(seed=4, players=("ann", "bob"))
    del game.archive.turns[(1, 2)]
    book = HistoryBook(game.archive, 1)
    failures = []
    book.ensure(game.snapshot).addErrback(failures.append)
    assert failures and failures[0].check(LookupError)
    assert book.known == 1
