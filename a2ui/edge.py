"""The server's edge, sans I/O: how many TCP connections an address and a process may hold, and
how often a refusal or a timeout is logged.

:mod:`a2ui.serving` asks :class:`ConnectionLimiter` when Twisted accepts a connection (before a
byte of it is parsed) and tells it when the connection closes; :class:`LogThrottle` keeps a
flood of refusals to one WARNING line per address and interval. Nothing here reads a socket,
a clock or the settings: the callers pass the time and the limits in.

Behind reverse proxies, :func:`forwarded_client` reads the client's address from
``X-Forwarded-For`` as far as the trusted proxies go (from the right), and
:func:`believe_forwarded` rewrites a request's headers to it before Daphne reads them.

Addresses are counted as :func:`address_key` names them: an IPv4 address as itself (also when
it arrives IPv4-mapped, ``::ffff:192.0.2.1``), an IPv6 address by its /64 network (one client
holds a whole /64), anything else (a UNIX socket's peer) not at all.
"""

import ipaddress

#: IPv6 addresses are counted by this prefix length.
IPV6_PREFIX = 64
#: A request body over 100 KB (or chunked) is spooled by Twisted to a temporary file: one more
#: descriptor for that connection. The process cap counts on two per connection.
DESCRIPTORS_PER_CONNECTION = 2


def address_key(host, exempt=()):
    """The name a peer address is counted under: ``"192.0.2.1"``, ``"2001:db8:1:2::/64"``; None
    for an address in one of the ``exempt`` networks (:func:`parse_networks`) and for what is
    not an IP address (a UNIX socket's peer, an unparsable string)."""
    if not host:
        return None
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # fe80::1%eth0: scope dropped
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in exempt):
        return None
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False))
    return str(address)


def parse_networks(values):
    """``["10.0.0.1", "10.1.0.0/16", "::1"]`` as ip_network objects; ValueError names the first
    entry that is not an address or network."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise ValueError("a list of IP addresses or networks")
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not an IP address or network") from None
    return tuple(networks)


def _hop(value):
    """One ``X-Forwarded-For`` entry as an address: ``192.0.2.1``, ``192.0.2.1:4711``,
    ``2001:db8::1``, ``[2001:db8::1]:4711``; None for anything else."""
    value = value.strip()
    candidates = [value]
    if value.startswith("["):
        candidates = [value[1:].split("]", 1)[0]]
    elif value.count(":") == 1:
        candidates.append(value.split(":", 1)[0])
    for candidate in candidates:
        try:
            address = ipaddress.ip_address(candidate.split("%", 1)[0])
        except ValueError:
            continue
        if address.version == 6 and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address
    return None


def _trusted(peer, trusted):
    address = _hop(peer) if peer else None
    return address is not None and any(address in network for network in trusted)


def forwarded_client(peer, forwarded_for, trusted):
    """The client's address of a request that reached the server from ``peer`` (the TCP
    peer's address) with the ``X-Forwarded-For`` values ``forwarded_for`` (a list: one per
    header line), the proxies in ``trusted`` (:func:`parse_networks`) being believed.

    A peer that is not a trusted proxy is the client: what it wrote is ignored. From a trusted
    proxy, the entries are read from the right (the one the nearest proxy appended) past those
    that are trusted proxies themselves: the first that is not is the client. Entries to its
    left were written by the client and are never believed. When every entry is trusted, the
    leftmost is; an entry that is not an address stops the walk at the hop to its right."""
    if not _trusted(peer, trusted):
        return peer
    entries = [e for value in forwarded_for for e in str(value).split(",") if e.strip()]
    client = peer
    for entry in reversed(entries):
        address = _hop(entry)
        if address is None:
            break
        client = str(address)
        if not any(address in network for network in trusted):
            break
    return client


def believe_forwarded(headers, peer, trusted, server):
    """Rewrite a request's ``headers`` (Twisted's ``Headers``: ``getRawHeaders``,
    ``setRawHeaders``, ``removeHeader``) so that ``server`` (Daphne's: its
    ``proxy_forwarded_address_header``, ``..._port_header``, ``..._proto_header``, None when
    ``--proxy-headers`` is off), which takes the leftmost entry of the address header, takes the
    client's address as :func:`forwarded_client` reads it: the one entry of that address, or
    none of the proxy headers (address, port, scheme) from a peer that is not a trusted proxy.
    The client's address, or None when the server reads no proxy header."""
    address_header = server.proxy_forwarded_address_header
    if not address_header:
        return None
    other_headers = [h for h in (server.proxy_forwarded_port_header,
                                 server.proxy_forwarded_proto_header) if h]
    if not _trusted(peer, trusted):
        for name in (address_header, *other_headers):
            headers.removeHeader(name)
        return peer
    values = headers.getRawHeaders(address_header)
    if not values:
        return peer
    client = forwarded_client(
        peer, [v.decode("latin-1") if isinstance(v, bytes) else v for v in values], trusted)
    headers.setRawHeaders(address_header, [client])
    return client


def too_large_head(limit):
    """The whole HTTP answer to a request head over ``limit`` bytes: 431 with a JSON message."""
    body = (b'{"error": {"code": "headers_too_large", "message": "Request head too large: at '
            b'most %d bytes of request line and headers."}}' % limit)
    return (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json"
            b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def connection_budget(soft_limit, reserve=None):
    """Connections a process may hold under ``soft_limit`` file descriptors (RLIMIT_NOFILE):
    ``reserve`` descriptors (default a tenth of the limit, at least 64) are kept for the
    database, Redis, logs and the listening sockets, and each connection is counted as
    :data:`DESCRIPTORS_PER_CONNECTION`. At least 1."""
    if reserve is None:
        reserve = max(64, soft_limit // 10)
    return max(1, (soft_limit - reserve) // DESCRIPTORS_PER_CONNECTION)


class ConnectionLimiter:
    """Open connections per address and in total.

    ``per_address``: most connections one address (the key :func:`address_key` gives it) may
    hold; 0 or None: no per-address cap. ``total``: most connections in all. A connection whose
    key is None (a trusted proxy's, a UNIX socket's) counts in the total only.

    :meth:`admit` returns None and counts the connection, or the reason it is refused
    (``"address"``, ``"total"``) and counts nothing. Every admitted connection must be released
    once with the key :meth:`admit` gave it (:class:`Slot` does so).
    """

    ADDRESS = "address"
    TOTAL = "total"

    def __init__(self, per_address, total):
        self.per_address = per_address or 0
        self.total_cap = total
        self.total = 0
        self._counts = {}

    def count(self, key):
        return self._counts.get(key, 0)

    @property
    def addresses(self):
        """How many addresses hold a connection."""
        return len(self._counts)

    def admit(self, key):
        """None (admitted and counted) or the reason the connection is refused."""
        if self.total >= self.total_cap:
            return self.TOTAL
        if key is not None and self.per_address:
            if self._counts.get(key, 0) >= self.per_address:
                return self.ADDRESS
        self.total += 1
        if key is not None:
            self._counts[key] = self._counts.get(key, 0) + 1
        return None

    def release(self, key):
        """One connection admitted under ``key`` closed."""
        self.total = max(0, self.total - 1)
        if key is None:
            return
        left = self._counts.get(key, 0) - 1
        if left > 0:
            self._counts[key] = left
        else:
            self._counts.pop(key, None)

    def slot(self, key):
        """:meth:`admit`, as a :class:`Slot` to release, or the refusal reason (a string)."""
        refused = self.admit(key)
        return refused if refused is not None else Slot(self, key)


class Slot:
    """One admitted connection; :meth:`release` gives its place back, once."""

    __slots__ = ("_limiter", "key", "open")

    def __init__(self, limiter, key):
        self._limiter, self.key, self.open = limiter, key, True

    def release(self):
        if self.open:
            self.open = False
            self._limiter.release(self.key)


class LogThrottle:
    """At most one line per key and ``interval`` seconds; the lines held back are counted and
    reported with the key's next line. At most ``max_keys`` keys are remembered (a flood from
    many addresses is logged under one shared key past that), so memory stays bounded."""

    OTHERS = "(other addresses)"

    def __init__(self, interval, max_keys=1024):
        self.interval = interval
        self.max_keys = max_keys
        self._keys = {}  # key -> [time of the last line, lines held back since]
        self._swept = None

    def __len__(self):
        return len(self._keys)

    def allow(self, key, now):
        """``(log, held_back)``: whether to log a line for ``key`` at ``now``, and how many
        lines were held back since its last one."""
        entry = self._keys.get(key)
        if entry is None and len(self._keys) >= self.max_keys:
            if self._swept is None or now - self._swept >= self.interval:
                self._forget(now)
            if len(self._keys) >= self.max_keys:
                key = self.OTHERS
                entry = self._keys.get(key)
        if entry is None:
            self._keys[key] = [now, 0]
            return True, 0
        if now - entry[0] >= self.interval:
            held = entry[1]
            entry[0], entry[1] = now, 0
            return True, held
        entry[1] += 1
        return False, entry[1]

    def _forget(self, now):
        """Drop the keys whose interval is over and that held nothing back (once an interval
        at most: a flood from new addresses does not sweep the table on every line)."""
        self._swept = now
        for key, (last, held) in list(self._keys.items()):
            if now - last >= self.interval and not held:
                del self._keys[key]


#: The answer to a request (or WebSocket handshake) that arrives while the process shuts down
#: (SIGTERM, until it exits), readiness's own answer then: the client retries elsewhere.
DRAINING_BODY = (b'{"status": "fail", "checks": {"serving": {"status": "fail", '
                 b'"error": "draining"}}}')
DRAINING_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     b"Cache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(DRAINING_BODY), DRAINING_BODY))
#: A request head longer than this is answered without waiting for its end.
HEAD_LIMIT = 16384


def head_complete(received):
    """Whether ``received`` (the bytes of a connection so far) holds a whole request head."""
    return b"\r\n\r\n" in received or len(received) > HEAD_LIMIT


def request_path(head):
    """The path of the request whose head is ``head`` (bytes), without its query; "" if the
    request line is not one."""
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3:
        return ""
    return parts[1].split(b"?", 1)[0].decode("latin-1")
