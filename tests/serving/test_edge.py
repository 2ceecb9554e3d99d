"""The edge's pure parts (a2ui.edge): the per-address and per-process connection counts, how
addresses are named, the descriptor budget and the log throttle. No sockets, no clock."""

import ipaddress

import pytest

from a2ui import edge


@pytest.mark.parametrize("host, key", [
    ("192.0.2.7", "192.0.2.7"),
    ("::ffff:192.0.2.7", "192.0.2.7"),  # IPv4-mapped: the IPv4 address
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),  # IPv6: its /64
    ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
    ("fe80::1%eth0", "fe80::/64"),
    ("", None), (None, None), ("/run/a2ui.sock", None), ("not an address", None),
])
def test_address_key(host, key):
    assert edge.address_key(host) == key


def test_trusted_networks_are_not_counted_per_address():
    exempt = edge.parse_networks(["10.0.0.5", "10.1.0.0/16", "::1"])
    assert edge.address_key("10.0.0.5", exempt) is None
    assert edge.address_key("10.1.200.3", exempt) is None
    assert edge.address_key("::ffff:10.1.0.1", exempt) is None
    assert edge.address_key("::1", exempt) is None
    assert edge.address_key("10.0.0.6", exempt) == "10.0.0.6"
    assert edge.address_key("10.2.0.1", exempt) == "10.2.0.1"


@pytest.mark.parametrize("bad", ["10.0.0.1", [None], ["10.0.0.300"], ["proxy.example"], {"a": 1}])
def test_parse_networks_refuses_what_is_not_a_list_of_networks(bad):
    with pytest.raises(ValueError):
        edge.parse_networks(bad)


def test_parse_networks():
    assert edge.parse_networks(("192.0.2.0/24", "2001:db8::1")) == (
        ipaddress.ip_network("192.0.2.0/24"), ipaddress.ip_network("2001:db8::1/128"))
    assert edge.parse_networks([]) == ()


def test_an_address_beyond_its_cap_is_refused_and_another_is_not():
    limiter = edge.ConnectionLimiter(per_address=3, total=100)
    slots = [limiter.slot("192.0.2.1") for _ in range(3)]
    assert all(isinstance(s, edge.Slot) for s in slots)
    assert limiter.slot("192.0.2.1") == limiter.ADDRESS
    assert limiter.count("192.0.2.1") == 3 and limiter.total == 3  # a refusal counts nothing
    assert isinstance(limiter.slot("192.0.2.2"), edge.Slot)
    slots[0].release()
    slots[0].release()  # once only
    assert limiter.count("192.0.2.1") == 2
    assert isinstance(limiter.slot("192.0.2.1"), edge.Slot)


def test_the_total_cap_counts_every_connection():
    limiter = edge.ConnectionLimiter(per_address=0, total=4)  # 0: no per-address cap
    slots = [limiter.slot(key) for key in ("192.0.2.1", "192.0.2.1", None, "192.0.2.9")]
    assert limiter.total == 4 and limiter.addresses == 2
    assert limiter.slot("192.0.2.3") == limiter.TOTAL
    assert limiter.slot(None) == limiter.TOTAL  # UNIX sockets and trusted proxies too
    for slot in slots:
        slot.release()
    assert limiter.total == 0 and limiter.addresses == 0  # nothing left over


def test_unkeyed_connections_have_no_per_address_cap():
    limiter = edge.ConnectionLimiter(per_address=1, total=10)
    assert all(isinstance(limiter.slot(None), edge.Slot) for _ in range(5))
    assert limiter.addresses == 0 and limiter.total == 5


@pytest.mark.parametrize("soft, budget", [
    (20000, (20000 - 2000) // 2),  # a tenth kept for the database, Redis, files
    (1024, (1024 - 102) // 2),
    (256, (256 - 64) // 2),  # at least 64 kept
    (10, 1),
])
def test_connection_budget(soft, budget):
    assert edge.connection_budget(soft) == budget


def test_one_line_per_key_and_interval_with_the_count_held_back():
    throttle = edge.LogThrottle(interval=60)
    assert throttle.allow("192.0.2.1", 0) == (True, 0)
    assert throttle.allow("192.0.2.1", 1) == (False, 1)
    assert throttle.allow("192.0.2.1", 59) == (False, 2)
    assert throttle.allow("192.0.2.2", 59) == (True, 0)  # another address has its own line
    assert throttle.allow("192.0.2.1", 60) == (True, 2)
    assert throttle.allow("192.0.2.1", 61) == (False, 1)


def test_the_throttle_remembers_a_bounded_number_of_keys():
    throttle = edge.LogThrottle(interval=60, max_keys=3)
    for n in range(3):
        assert throttle.allow(f"192.0.2.{n}", 0) == (True, 0)
    # a flood from ever new addresses shares one line per interval past the table's size
    assert throttle.allow("192.0.2.100", 1) == (True, 0)  # the shared key's first line...
    assert throttle.allow("192.0.2.101", 2) == (False, 1)  # ...then held back
    assert len(throttle) == 3 + 1
    # once the interval is over, keys that held nothing back are forgotten
    assert throttle.allow("192.0.2.102", 70) == (True, 0)
    assert len(throttle) <= 3


TRUSTED = edge.parse_networks(["127.0.0.1", "::1", "10.0.0.0/8"])


@pytest.mark.parametrize("peer, values, client", [
    ("127.0.0.1", ["198.51.100.7"], "198.51.100.7"),
    # nginx's $proxy_add_x_forwarded_for after a client's own header: the right end is believed
    ("127.0.0.1", ["127.0.0.1, 198.51.100.7"], "198.51.100.7"),
    ("127.0.0.1", ["127.0.0.1", "198.51.100.7"], "198.51.100.7"),  # two header lines
    ("127.0.0.1", ["203.0.113.9, 198.51.100.7, 10.2.3.4"], "198.51.100.7"),  # a trusted hop
    ("127.0.0.1", ["10.2.3.4, ::1"], "10.2.3.4"),  # every hop trusted: the leftmost
    ("127.0.0.1", ["127.0.0.1"], "127.0.0.1"),
    ("127.0.0.1", ["forged, 10.2.3.4"], "10.2.3.4"),  # not an address: the hop to its right
    ("127.0.0.1", ["[2001:db8::1]:4711"], "2001:db8::1"),
    ("127.0.0.1", ["192.0.2.1:4711"], "192.0.2.1"),
    ("127.0.0.1", [], "127.0.0.1"),
    # a peer that is no trusted proxy is the client, whatever it wrote
    ("198.51.100.1", ["127.0.0.1"], "198.51.100.1"),
    ("/run/a2ui.sock", ["127.0.0.1"], "/run/a2ui.sock"),
])
def test_the_forwarded_client_is_read_from_the_right_past_trusted_proxies(peer, values, client):
    assert edge.forwarded_client(peer, values, TRUSTED) == client


class Headers(dict):
    """Twisted's Headers as far as believe_forwarded uses them."""

    def getRawHeaders(self, name):
        return self.get(name.lower())

    def setRawHeaders(self, name, values):
        self[name.lower()] = values

    def removeHeader(self, name):
        self.pop(name.lower(), None)


class Server:
    proxy_forwarded_address_header = "X-Forwarded-For"
    proxy_forwarded_port_header = None
    proxy_forwarded_proto_header = "X-Forwarded-Proto"


def test_believe_forwarded_leaves_daphne_one_entry_or_none():
    headers = Headers({"x-forwarded-for": [b"127.0.0.1, 198.51.100.7"],
                       "x-forwarded-proto": [b"https"]})
    assert edge.believe_forwarded(headers, "127.0.0.1", TRUSTED, Server) == "198.51.100.7"
    assert headers == {"x-forwarded-for": ["198.51.100.7"], "x-forwarded-proto": [b"https"]}
    direct = Headers({"x-forwarded-for": [b"127.0.0.1"], "x-forwarded-proto": [b"https"]})
    assert edge.believe_forwarded(direct, "198.51.100.1", TRUSTED, Server) == "198.51.100.1"
    assert direct == {}
    off = Headers({"x-forwarded-for": [b"203.0.113.1"]})

    class NoProxy(Server):
        proxy_forwarded_address_header = None

    assert edge.believe_forwarded(off, "127.0.0.1", TRUSTED, NoProxy) is None
    assert off == {"x-forwarded-for": [b"203.0.113.1"]}
