"""The pieces under the web listener's limits: trusted proxies, the descriptor share, the body
limit of each route, and the connections refused beyond them (in memory; the same over real
sockets: tests/integration/test_web_limits.py)."""

from __future__ import annotations

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from server.config.limits import Limits
from server.guards.connections import ConnectionLimiter, DescriptorShare
from server.guards.proxies import TrustedProxies
from server.guards.rates import address_key
from server.web.routing import FORM_BODY, JSON_BODY, NO_BODY
from server.web.transport import GuardedChannel, RefusedConnection

from .helpers import world


def test_a_trusted_proxy_names_the_client_and_no_one_else_does():
    proxies = TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
    assert proxies.client("127.0.0.1", [b"203.0.113.5"]) == "203.0.113.5"
    # each proxy appends what it saw: the right-most untrusted entry is the client
    assert proxies.client("127.0.0.1", [b"198.51.100.1, 203.0.113.5, 10.1.2.3"]) == "203.0.113.5"
    assert proxies.client("127.0.0.1", [b"1.1.1.1", b"203.0.113.5"]) == "203.0.113.5"
    assert proxies.client("192.0.2.1", [b"203.0.113.5"]) == "192.0.2.1"  # not a trusted peer
    assert proxies.client("127.0.0.1", [b"garbage"]) == "127.0.0.1"
    assert proxies.client("127.0.0.1", [b"[2001:db8::1]:443"]) == "2001:db8::1"
    assert proxies.secure("127.0.0.1", [b"https"]) is True and proxies.secure("192.0.2.1", [b"https"]) is None
    assert not TrustedProxies() and TrustedProxies().client("127.0.0.1", [b"203.0.113.5"]) == "127.0.0.1"
    assert address_key("2001:db8:1:2:aa::1") == address_key("2001:db8:1:2:bb::9") == "2001:db8:1:2::/64"


def test_each_route_reads_at_most_its_body():
    _, _, site = world()
    limit = site.guards.body_limit
    assert limit(b"POST", b"/join") == FORM_BODY and limit(b"POST", b"/games/x/login") == FORM_BODY
    assert limit(b"POST", b"/api/games/x/orders") == JSON_BODY
    assert limit(b"PUT", b"/api/games/x/notifications") == JSON_BODY
    assert limit(b"GET", b"/games/x") == NO_BODY and limit(b"HEAD", b"/") == NO_BODY
    assert limit(b"POST", b"/nothing/here") == NO_BODY and limit(b"POST", b"/\xff") == NO_BODY


def test_the_listeners_other_than_tp_share_what_tp_does_not_keep():
    share = DescriptorShare(0.5, ceiling=3)
    limiter = ConnectionLimiter(per_address=2, share=share)
    assert limiter.open("a") is None and limiter.open("a") is None
    assert limiter.open("a") == ConnectionLimiter.ADDRESS
    assert limiter.open("b") is None and limiter.open("c") == ConnectionLimiter.SHARE
    assert limiter.open("proxy", exempt=True) == ConnectionLimiter.SHARE
    limiter.close("a")
    assert limiter.open("proxy", exempt=True) is None
    assert DescriptorShare(0.5).ceiling > 0  # from the process's own limit


def connection(site, host: str):
    protocol = site.buildProtocol(IPv4Address("TCP", host, 40000))
    transport = StringTransport(peerAddress=IPv4Address("TCP", host, 40000))
    protocol.makeConnection(transport)
    return protocol, transport


def test_a_connection_beyond_the_share_is_answered_then_closed(tmp_path):
    from server.web import make_site

    from .fake_game import FakeDirectory, FakeGame

    clock = Clock()
    game = FakeGame("Nebula", clock)
    limits = Limits(web_connections_per_address=2)
    site = make_site(FakeDirectory(game), None, clock, limits=limits, share=DescriptorShare(0.5, ceiling=3))
    held = [connection(site, "192.0.2.1") for _ in range(2)]
    assert all(isinstance(p, GuardedChannel) for p, _ in held)
    refused, transport = connection(site, "192.0.2.1")
    assert isinstance(refused, RefusedConnection)
    refused.dataReceived(b"GET /api/games HTTP/1.1\r\n")
    answer = transport.value()
    assert answer.startswith(b"HTTP/1.1 429 ") and b"application/json" in answer
    assert b"Too many connections from your address (at most 2)" in answer and transport.disconnecting
    other, _ = connection(site, "192.0.2.2")
    assert isinstance(other, GuardedChannel)
    full, transport = connection(site, "192.0.2.3")
    full.dataReceived(b"GET / HTTP/1.1\r\n")
    assert transport.value().startswith(b"HTTP/1.1 503 ") and b"text/html" in transport.value()
    # an idle connection goes after web_idle_seconds, and gives its place back
    clock.advance(limits.web_idle_seconds + 1)
    assert all(transport.disconnecting for _, transport in held)
    for protocol, _ in held:
        protocol.connectionLost(None)
    assert site.guards.connections.counts == {"192.0.2.2": 1}
