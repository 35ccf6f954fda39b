"""The LISTEN thread hands cluster news to the reactor in batches: messages heard while the
reactor has not yet taken the last ones ride along, so a busy cluster wakes each node's reactor
once per batch rather than once per message (`server.cluster.notify.NotifyListener`)."""

from __future__ import annotations

import json

from server.cluster.notify import NotifyListener


class RecordingReactor:
    def __init__(self):
        self.calls: list = []

    def callFromThread(self, fn, *args):
        self.calls.append((fn, args))

    def run_calls(self) -> None:
        calls, self.calls = self.calls, []
        for fn, args in calls:
            fn(*args)


def listener(delivered: list) -> tuple[NotifyListener, RecordingReactor]:
    reactor = RecordingReactor()
    return NotifyListener("postgresql+psycopg://x@127.0.0.1/x", "c", reactor, delivered.append), reactor


def test_news_heard_before_the_reactor_takes_it_goes_in_one_wake_up():
    delivered: list = []
    news, reactor = listener(delivered)
    for turn in (1, 2, 3):
        news._hand_over(json.dumps({"k": "turn", "g": 7, "t": turn, "q": turn}))
    assert len(reactor.calls) == 1
    reactor.run_calls()
    assert [m["t"] for m in delivered] == [1, 2, 3]

    news._hand_over(json.dumps({"k": "claims"}))  # after the batch was taken: a new wake-up
    assert len(reactor.calls) == 1
    reactor.run_calls()
    assert delivered[-1] == {"k": "claims"}


def test_a_message_that_fails_does_not_lose_the_rest_of_its_batch():
    delivered: list = []

    def deliver(message: dict) -> None:
        if message.get("bad"):
            raise ValueError("cannot handle")
        delivered.append(message)

    reactor = RecordingReactor()
    news = NotifyListener("postgresql+psycopg://x@127.0.0.1/x", "c", reactor, deliver)
    for payload in ({"bad": 1}, {"k": "node"}, "not json", [1, 2]):
        news._hand_over(payload if isinstance(payload, str) else json.dumps(payload))
    reactor.run_calls()
    assert delivered == [{"k": "node"}]
