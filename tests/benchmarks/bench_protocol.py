"""Protocol speed: the frames a server sends most (objects) encoded and decoded per second.

Run with ``python -m tests.benchmarks protocol``. Figures:

* one TP04 Fleet Object frame (TaE fleet: Positional, Ownership, Orders, Ships groups), through
  the public API (``encode`` / ``decode``) and, for comparison, through the construct
  declarations executed directly (what the hand-written fast path replaces);
* a GetObjectsByID reply: Sequence + 400 objects (star systems, planets, fleets), encoded with
  ``encode_reply`` and decoded with a ``Deframer`` plus ``decode`` per frame.

Each figure is measured for about a second; the whole run takes a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from protocol import Deframer, Frame, Version, decode, encode, encode_reply
from protocol.objects import decode_tp04_object_with_construct, encode_tp04_object_with_construct
from tests.protocol.tae import OBJECT_DESCS, fleet, mixed_objects

SECONDS_PER_FIGURE = 1.0


def rate(action: Callable[[], object]) -> float:
    """Calls per second of ``action``, measured for about ``SECONDS_PER_FIGURE``."""
    action()
    calls = 0
    batch = 1
    start = time.perf_counter()
    while True:
        for _ in range(batch):
            action()
        calls += batch
        elapsed = time.perf_counter() - start
        if elapsed >= SECONDS_PER_FIGURE:
            return calls / elapsed
        batch = min(batch * 2, 10_000)


def main() -> None:
    version = Version.TP04
    fleet_object = fleet(356)
    data = encode(fleet_object, version, 5)
    frame = Frame(version, 0, 5, fleet_object.TYPE, data[16:])
    assert decode(frame, object_descs=OBJECT_DESCS) == fleet_object

    encodes = rate(lambda: encode(fleet_object, version, 5))
    decodes = rate(lambda: decode(frame, object_descs=OBJECT_DESCS))
    print(f"TP04 Fleet Object frame ({len(data)} bytes):")
    print(f"  encode   {encodes:12,.0f} frames/s")
    print(f"  decode   {decodes:12,.0f} frames/s")
    body = frame.body
    reference_encodes = rate(lambda: encode_tp04_object_with_construct(fleet_object))
    reference_decodes = rate(lambda: decode_tp04_object_with_construct(body, OBJECT_DESCS))
    print("  construct declarations run directly (the reference the fast path is checked against):")
    print(f"  encode   {reference_encodes:12,.0f} bodies/s")
    print(f"  decode   {reference_decodes:12,.0f} bodies/s")

    objects = mixed_objects(400)
    reply = encode_reply(objects, version, 9)

    def decode_reply() -> None:
        decoded = [decode(each, object_descs=OBJECT_DESCS) for each in Deframer().frames(reply)]
        assert len(decoded) == 401

    decode_reply()
    reply_encodes = rate(lambda: encode_reply(objects, version, 9))
    reply_decodes = rate(decode_reply)
    print(f"GetObjectsByID reply: Sequence + 400 objects ({len(reply):,} bytes):")
    print(f"  encode   {reply_encodes:12,.1f} replies/s  ({reply_encodes * 400:,.0f} objects/s)")
    print(f"  decode   {reply_decodes:12,.1f} replies/s  ({reply_decodes * 400:,.0f} objects/s)")


if __name__ == "__main__":
    main()
