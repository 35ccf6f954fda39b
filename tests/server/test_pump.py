"""server.tp.pump.RequestPump on its own: a StringTransport, a Clock and a stand-in for the
connection that answers each Ping with its sequence number (or a Deferred the test fires)."""

from __future__ import annotations

import struct

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

import protocol as tp
from protocol import Deframer, FailCode, Version
from server.tp.pump import RequestPump


class CountingTransport(StringTransport):
    """A StringTransport that remembers each write on its own."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        super().write(data)


class Answers:
    """The connection's side: answers of bytes (`b"answer N"`) unless the test queued a Deferred
    or a failure for a sequence number; optionally throttled by a clock."""

    def __init__(self, clock: Clock | None = None, interval: float = 0.0) -> None:
        self.later: dict[int, defer.Deferred] = {}
        self.raising: set[int] = set()
        self.asked: list[int] = []
        self.answered_count = 0
        self.clock = clock
        self.interval = interval
        self.next_allowed = 0.0
        self.waiting = False
        self.pump: RequestPump | None = None
        self.on_answer = None

    def answer(self, frame: tp.Frame) -> bytes | defer.Deferred:
        self.asked.append(frame.sequence)
        if self.on_answer is not None:
            self.on_answer(frame)
        if frame.sequence in self.raising:
            raise RuntimeError("the handler broke")
        if frame.sequence in self.later:
            return self.later[frame.sequence]
        return b"answer %d;" % frame.sequence

    def internal_error(self, frame: tp.Frame) -> bytes:
        return b"internal error %d;" % frame.sequence

    def may_answer(self) -> bool:
        if self.clock is None:
            return True
        now = self.clock.seconds()
        if now >= self.next_allowed:
            self.next_allowed = now + self.interval
            return True
        if not self.waiting:
            self.waiting = True
            self.clock.callLater(self.next_allowed - now, self._again)
        return False

    def _again(self) -> None:
        self.waiting = False
        assert self.pump is not None
        self.pump.answer_waiting()

    def answered(self) -> None:
        self.answered_count += 1


def pings(*sequences: int, version: Version = Version.TP04) -> bytes:
    return b"".join(tp.encode(tp.Ping(), version, sequence) for sequence in sequences)


def pump_with(answers: Answers, max_pending: int = 256) -> tuple[RequestPump, CountingTransport]:
    transport = CountingTransport()
    pump = RequestPump(transport, answers, max_pending=max_pending)
    answers.pump = pump
    return pump, transport


def failures(data: bytes) -> list[tuple[int, tp.Fail]]:
    deframer = Deframer()
    deframer.feed(data)
    out = []
    while (frame := deframer.next_frame()) is not None:
        out.append((frame.sequence, tp.decode(frame)))
    return out


# -- order ------------------------------------------------------------------------------------


def test_requests_are_answered_in_arrival_order_one_write_each():
    answers = Answers()
    pump, transport = pump_with(answers)
    data = pings(1, 2, 3)
    pump.feed(data[:5])  # any chunking
    assert transport.writes == []
    pump.feed(data[5:])
    assert transport.writes == [b"answer 1;", b"answer 2;", b"answer 3;"]
    assert answers.answered_count == 3
    assert pump.version is Version.TP04


def test_a_deferred_answer_holds_the_requests_behind_it():
    answers = Answers()
    answers.later[1] = first = defer.Deferred()
    answers.later[2] = second = defer.Deferred()
    pump, transport = pump_with(answers)
    pump.feed(pings(1, 2, 3))
    assert answers.asked == [1] and transport.writes == [] and pump.busy
    pump.feed(pings(4))
    assert answers.asked == [1]
    first.callback(b"frame one of two;frame two of two;")
    assert transport.writes == [b"frame one of two;frame two of two;"]  # one write
    assert answers.asked == [1, 2]
    second.callback(b"late;")
    assert transport.writes[1:] == [b"late;", b"answer 3;", b"answer 4;"]
    assert not pump.busy and not pump.pending


def test_answers_that_are_already_there_do_not_nest_calls():
    """Thousands of pipelined requests answered with fired Deferreds are answered in a loop,
    not one call deeper each (which would end in a RecursionError)."""
    answers = Answers()
    count = 5000
    for sequence in range(1, count + 1):
        answers.later[sequence] = defer.succeed(b"%d;" % sequence)
    pump, transport = pump_with(answers, max_pending=10 * count)
    pump.feed(pings(*range(1, count + 1)))
    assert transport.writes == [b"%d;" % sequence for sequence in range(1, count + 1)]


# -- errors -----------------------------------------------------------------------------------


def test_an_error_in_the_stream_is_answered_in_its_turn_and_the_stream_goes_on():
    answers = Answers()
    answers.later[1] = held = defer.Deferred()
    pump, transport = pump_with(answers)
    # a TP03 frame on a TP04 connection: Fail, then the connection goes on
    pump.feed(pings(1) + pings(2, version=Version.TP03) + pings(3))
    assert transport.writes == []  # the error waits for the answer before it
    held.callback(b"first;")
    assert transport.writes[0] == b"first;"
    ((sequence, fail),) = failures(transport.writes[1])
    assert isinstance(fail, tp.Fail) and fail.code == FailCode.PROTOCOL and sequence == 2
    assert transport.writes[2:] == [b"answer 3;"]
    assert not transport.disconnecting


def test_an_error_that_breaks_the_stream_is_answered_in_its_turn_then_closes():
    answers = Answers()
    answers.later[1] = held = defer.Deferred()
    pump, transport = pump_with(answers)
    too_long = b"TP\x04\x00" + struct.pack("!III", 9, 1, 1 << 30)
    pump.feed(pings(1) + too_long)
    pump.feed(pings(3))  # after a broken stream nothing more is read
    assert transport.writes == [] and not transport.disconnecting
    held.callback(b"first;")
    assert transport.writes[0] == b"first;"
    ((_, fail),) = failures(transport.writes[1])
    assert isinstance(fail, tp.Fail)
    assert len(transport.writes) == 2 and transport.disconnecting
    assert answers.asked == [1]


def test_bytes_that_are_not_tp_are_told_so_and_closed():
    pump, transport = pump_with(Answers())
    pump.feed(b"GET / HTTP/1.0\r\n\r\n")
    assert transport.value() == b"You are not running the correct protocol\n"
    assert transport.disconnecting


def test_a_handler_that_raises_or_fails_is_answered_with_an_internal_error():
    answers = Answers()
    answers.raising.add(1)
    answers.later[2] = broken = defer.Deferred()
    pump, transport = pump_with(answers)
    pump.feed(pings(1, 2, 3))
    assert transport.writes == [b"internal error 1;"]
    broken.errback(RuntimeError("the store broke"))
    assert transport.writes[1:] == [b"internal error 2;", b"answer 3;"]
    assert not transport.disconnecting


# -- back-pressure ----------------------------------------------------------------------------


def test_reading_pauses_past_the_pending_maximum_and_resumes_below_half():
    answers = Answers()
    held = {sequence: defer.Deferred() for sequence in range(1, 12)}
    answers.later.update(held)
    pump, transport = pump_with(answers, max_pending=8)
    pump.feed(pings(*range(1, 9)))  # 8 came: not more than the maximum (1 is being answered)
    assert len(pump.pending) == 7 and transport.producerState == "producing"
    pump.feed(pings(9, 10))
    assert len(pump.pending) == 9 and transport.producerState == "paused"
    for sequence in range(1, 6):  # 9 → 4 waiting: not yet below half of 8
        held[sequence].callback(b"%d;" % sequence)
    assert len(pump.pending) == 4 and transport.producerState == "paused"
    held[6].callback(b"6;")
    assert len(pump.pending) == 3 and transport.producerState == "producing"


def test_a_connection_that_may_not_answer_yet_is_answered_later():
    clock = Clock()
    answers = Answers(clock, interval=1.0)
    pump, transport = pump_with(answers)
    pump.feed(pings(1, 2, 3))
    assert transport.writes == [b"answer 1;"]
    clock.advance(1.0)
    assert transport.writes[1:] == [b"answer 2;"]
    clock.advance(1.0)
    assert transport.writes[2:] == [b"answer 3;"]


# -- closing ----------------------------------------------------------------------------------


def test_close_after_answer_writes_the_answer_being_made_then_hangs_up():
    answers = Answers()
    answers.later[1] = held = defer.Deferred()
    pump, transport = pump_with(answers)
    pump.register_producer(object())
    answers.on_answer = lambda frame: pump.close_after_answer()
    pump.feed(pings(1, 2))
    assert not transport.disconnecting and not pump.pending  # the rest is not answered
    pump.feed(pings(3))
    held.callback(b"goodbye;")
    assert transport.writes == [b"goodbye;"]
    assert transport.disconnecting and transport.producer is None
    assert answers.asked == [1]


def test_close_after_an_answer_given_at_once():
    answers = Answers()
    pump, transport = pump_with(answers)
    answers.on_answer = lambda frame: pump.close_after_answer()
    pump.feed(pings(1, 2))
    assert transport.writes == [b"answer 1;"] and transport.disconnecting


def test_close_after_answer_with_no_answer_being_made_hangs_up_at_once():
    pump, transport = pump_with(Answers())
    pump.close_after_answer()
    assert transport.disconnecting
    pump.feed(pings(1))
    assert transport.writes == []


def test_an_answer_that_comes_after_the_connection_is_lost_is_not_written():
    answers = Answers()
    answers.later[1] = held = defer.Deferred()
    pump, transport = pump_with(answers)
    pump.feed(pings(1, 2))
    pump.connection_lost()
    held.callback(b"too late;")
    assert transport.writes == [] and answers.asked == [1]
    pump.close()
    assert not transport.disconnecting  # nothing to hang up


def test_abort_drops_the_connection_and_unregisters_the_producer():
    pump, transport = pump_with(Answers())
    pump.register_producer(object())
    pump.abort()
    assert transport.disconnected and transport.producer is None
    pump.write(b"nothing more")
    pump.feed(pings(1))
    assert transport.writes == []


@pytest.mark.parametrize("stop", ["stop", "connection_lost"])
def test_a_stopped_pump_answers_nothing_more(stop):
    answers = Answers()
    pump, transport = pump_with(answers)
    getattr(pump, stop)()
    pump.feed(pings(1))
    assert transport.writes == [] and answers.asked == []
