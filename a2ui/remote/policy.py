"""Where this server may send a remote agent's requests. Sans-I/O: parsing and checking only
(``a2ui.remote.net`` resolves and connects).

``A2UI['REMOTE_AGENT_HOSTS']`` lists the hosts an operator allowed, each ``host`` (any port)
or ``host:port`` (``[v6]:port`` for an IPv6 literal). A URL is allowed when it is ``http`` or
``https``, has no user info, and its host and port match an entry exactly (names compared in
lower case; a name with a trailing dot is another name: ``localhost.`` is not ``localhost``).

Then, on every connection, each address the host resolves to is checked: an address that is
not globally routable (loopback, private, link-local, the cloud metadata address, multicast,
unspecified, reserved, shared, IPv4-mapped or NAT64 forms of those...) is refused unless that
address itself is listed as an entry (``127.0.0.1:8001``, ``[::1]``, ``10.0.0.5``) or the
entry that matched is ``localhost`` and the address is loopback. The connection goes to the
checked address (no second resolution: no DNS rebinding).
"""

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

SCHEMES = {"http": 80, "https": 443}
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Refused(Exception):
    """Not an allowed destination; ``str(exc)`` says why (no secret in it)."""


@dataclass(frozen=True)
class Entry:
    host: str  # lower case; an IP literal in its compressed form
    port: int | None
    address: object = None  # ipaddress object when the host is an IP literal


def _ip(text):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def parse_entry(text):
    """One ``REMOTE_AGENT_HOSTS`` entry; ValueError when it is not ``host[:port]``."""
    text = str(text).strip()
    if not text or any(c in text for c in "/@?#\\ \t"):
        raise ValueError(f"not a host[:port]: {text!r}")
    port = None
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"not a host[:port]: {text!r}")
        if rest:
            port = _port(rest[1:], text)
        if _ip(host) is None or _ip(host).version != 6:
            raise ValueError(f"not an IPv6 address: {text!r}")
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        port = _port(port_text, text)
    elif ":" in text:
        host = text  # a bare IPv6 address
        if _ip(host) is None:
            raise ValueError(f"not a host[:port]: {text!r}")
    else:
        host = text
    if not host:
        raise ValueError(f"not a host[:port]: {text!r}")
    address = _ip(host)
    host = address.compressed if address is not None else host.lower()
    return Entry(host, port, address)


def _port(text, whole):
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"not a port in {whole!r}")
    return int(text)


def parse_hosts(values):
    """The entries of the setting (a list of strings, or one comma-separated string)."""
    if isinstance(values, str):
        values = values.split(",")
    return tuple(parse_entry(v) for v in values or () if str(v).strip())


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as the URL has it (lower case; an IPv6 literal without brackets)
    port: int
    entry: Entry


def check_url(url, entries):
    """The :class:`Target` of ``url`` when the entries allow it, else :class:`Refused`."""
    if not isinstance(url, str) or len(url) > 2000 or any(ord(c) < 33 for c in url):
        raise Refused("not a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise Refused("not a URL") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise Refused("only http and https URLs are allowed")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise Refused("URLs with user info are not allowed (use a header)")
    host = parts.hostname
    if not host:
        raise Refused("the URL has no host")
    port = port or SCHEMES[scheme]
    entry = match(host, port, entries)
    if entry is None:
        raise Refused(f"{host}:{port} is not in A2UI['REMOTE_AGENT_HOSTS']")
    return Target(scheme, host.lower(), port, entry)


def match(host, port, entries):
    """The entry allowing ``host`` (as a URL or a connection names it) and ``port``, or None."""
    address = _ip(host.strip("[]"))
    name = address.compressed if address is not None else host.lower()
    for entry in entries:
        if entry.host == name and (entry.port is None or entry.port == port):
            return entry
    return None


def special(address):
    """Whether ``address`` (an ipaddress object) is not a plain global unicast address."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return True if address.sixtofour is not None else special(mapped)
        if address in NAT64:
            return True
        if address.teredo is not None:
            return True
    return not address.is_global or address.is_multicast


def check_address(address, port, entry, entries):
    """Refused unless ``address`` (text or ipaddress, one the host resolved to) may be
    connected to for ``entry``."""
    ip = address if not isinstance(address, str) else _ip(address.split("%", 1)[0])
    if ip is None:
        raise Refused("not an IP address")
    if not special(ip):
        return ip
    if entry.address is not None and entry.address == ip:
        return ip
    if entry.host == "localhost" and ip.is_loopback:
        return ip
    for other in entries:
        if other.address == ip and (other.port is None or other.port == port):
            return ip
    raise Refused(f"{entry.host} resolves to a {_describe(ip)} address ({ip.compressed}), "
                  "which is not in A2UI['REMOTE_AGENT_HOSTS']")


def _describe(ip):
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_private:
        return "private"
    return "non-public"
