"""A relayed request whose owner stops answering is given up after the answer's deadline
(issue: a session relayed to a frozen owner waited 29 s although its game had moved)."""

from __future__ import annotations

from twisted.internet import task
from twisted.internet.testing import StringTransport

import protocol as tp
from protocol import Frame, Version
from server.cluster.relay import Upstream, UpstreamLost
from server.config.cluster import ClusterSettings


class AbortableTransport(StringTransport):
    def abortConnection(self) -> None:
        self.loseConnection()
        self.aborted = True


def _upstream(clock: task.Clock, timeout: float | None = 5.0) -> tuple[Upstream, AbortableTransport, list]:
    lost: list[bool] = []
    upstream = Upstream(
        Version.TP04, lambda frame: None, lambda: lost.append(True), clock=clock, answer_timeout=timeout
    )
    transport = AbortableTransport()
    upstream.makeConnection(transport)
    return upstream, transport, lost


def _ping() -> Frame:
    return Frame(Version.TP04, 0, 1, tp.Ping.TYPE, tp.encode_body(tp.Ping(), Version.TP04))


def _okay_for(sequence: int) -> bytes:
    return tp.encode(tp.Okay("Pong"), Version.TP04, sequence)


def test_an_owner_that_stays_silent_is_given_up_at_the_deadline() -> None:
    clock = task.Clock()
    upstream, transport, lost = _upstream(clock)
    failures: list = []
    upstream.exchange(_ping()).addErrback(failures.append)
    clock.advance(4.9)
    assert not failures and not getattr(transport, "aborted", False)
    clock.advance(0.2)
    assert transport.aborted
    upstream.connectionLost()
    assert failures and failures[0].check(UpstreamLost)
    assert lost == [True]


def test_each_answer_restarts_the_deadline_of_the_next_request() -> None:
    clock = task.Clock()
    upstream, transport, _ = _upstream(clock)
    answers: list = []
    upstream.exchange(_ping()).addCallback(answers.append)
    clock.advance(4)
    upstream.exchange(_ping()).addCallback(answers.append)
    upstream.dataReceived(_okay_for(1))
    clock.advance(4)  # the second request has waited 4 s (8 s since the first was sent)
    assert len(answers) == 1 and not getattr(transport, "aborted", False)
    upstream.dataReceived(_okay_for(2))
    clock.advance(60)  # nothing waits: no deadline runs
    assert len(answers) == 2 and not getattr(transport, "aborted", False)
    assert not clock.getDelayedCalls()


def test_without_a_deadline_a_request_waits() -> None:
    clock = task.Clock()
    upstream, transport, _ = _upstream(clock, timeout=None)
    upstream.exchange(_ping())
    clock.advance(3600)
    assert not getattr(transport, "aborted", False)


def test_the_deadline_leaves_a_frozen_owner_before_its_game_moves() -> None:
    settings = ClusterSettings(node="a", advertise="127.0.0.1:6923")
    assert settings.relay_answer_timeout < settings.failover_timeout
    assert settings.relay_answer_timeout < 12  # libtpproto's request timeout
