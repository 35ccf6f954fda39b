"""Faults that are not bugs are one informative log line, not a critical traceback (issue 23,
item 6): a session's carrying over that ends at once (the game is gone), and writes refused
because the game just moved to another node (an operator request, a password hash's upgrade)."""

from __future__ import annotations

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.logger import LogLevel, globalLogPublisher

from server.cluster.carry_over import CarryOver
from server.database.operator_requests import FAILED, OperatorRequest
from server.database.ownership import ClaimLost
from server.game.directory import GameDirectory
from server.game.records import log_failed_write
from server.model.timer_settings import TimerSettings
from server.operating.desk import OperatorDesk
from tests.support.games import new_game


class Recorded:
    """The log events published while in the `with` block."""

    def __enter__(self) -> list[dict]:
        self.events: list[dict] = []
        globalLogPublisher.addObserver(self.events.append)
        return self.events

    def __exit__(self, *exc_info) -> None:
        globalLogPublisher.removeObserver(self.events.append)


class SessionWhoseGameIsGone(CarryOver):
    """A cluster session as far as carrying over goes, whose search for the game's new owner
    ends at once: the game is gone from the cluster."""

    def __init__(self):
        self._recovery = None
        self._after_recovery = []
        self.closed = False
        self.close = self.closing
        self.game_name = "duel"
        self.closed_by_recovery = False

    def closing(self) -> None:
        self.closed_by_recovery = True
        self.closed = True

    async def _find_new_owner(self) -> bool:
        return False


def test_a_carrying_over_that_ends_at_once_answers_at_once():
    session = SessionWhoseGameIsGone()
    with Recorded() as events:
        answers = []
        session._recover().addBoth(answers.append)
    assert answers == [False] and session.closed_by_recovery and session._recovery is None
    assert not [e for e in events if e.get("log_level") in (LogLevel.critical, LogLevel.error)]


def test_a_write_refused_because_the_game_moved_is_one_warning_line():
    with Recorded() as events:
        log_failed_write_of(ClaimLost("game 3 is run by another node"))
    assert [(e["log_level"], "log_failure" in e) for e in events] == [(LogLevel.warn, False)]
    assert "run by another node" in events[0]["error"]
    with Recorded() as events:
        log_failed_write_of(KeyError("a bug"))
    assert [(e["log_level"], "log_failure" in e) for e in events] == [(LogLevel.critical, True)]


def log_failed_write_of(error: Exception) -> None:
    from twisted.logger import Logger
    from twisted.python.failure import Failure

    log_failed_write(Logger(), Failure(error), "game {game}: a write failed", game="duel")


def test_an_operator_request_refused_because_the_game_moved_is_one_warning_line():
    clock = Clock()
    store, game = new_game(clock=clock, timer=TimerSettings(turn_length=0))
    for name in ("ann", "bob"):
        game.create_account(name, "a-good-password")
    game.start()
    directory = GameDirectory()
    directory.add(game)
    desk = OperatorDesk(store, directory, clock)
    store.write = lambda game_id, game_write: defer.fail(ClaimLost(f"game {game_id} is run by another node"))
    with Recorded() as events:
        outcome: list = []
        defer.ensureDeferred(desk.apply(OperatorRequest(1, game.id, "pause", {}))).addBoth(outcome.append)
    assert outcome == [(FAILED, "not carried out: game 1 is run by another node")]
    assert [e["log_level"] for e in events if e.get("log_level") >= LogLevel.warn] == [LogLevel.warn]
