"""Where remote agents' requests may go (a2ui.remote.policy, a2ui.remote.net): only the hosts
of A2UI['REMOTE_AGENT_HOSTS']; loopback, private, link-local and metadata addresses refused
unless listed; resolved once, checked, then connected to the checked address; no redirect to
another host; no proxy from the environment."""

import asyncio

import pytest

from a2ui.remote import net, policy
from a2ui.remote.clients import UpstreamError

ENTRIES = policy.parse_hosts("agents.example.com, 127.0.0.1:8001, [::1]:9000")


@pytest.mark.parametrize("url", [
    "http://agents.example.com/run",
    "https://AGENTS.example.com/run?x=1",
    "http://127.0.0.1:8001/",
    "http://[::1]:9000/agent",
])
def test_listed_hosts_are_allowed(url):
    assert policy.check_url(url, ENTRIES)


@pytest.mark.parametrize("url, why", [
    ("ftp://agents.example.com/", "only http and https"),
    ("http://user:pw@agents.example.com/", "user info"),
    ("http://agents.example.com@127.0.0.1:8001/", "user info"),
    ("http://agents.example.com./run", "not in"),  # a trailing dot is another name
    ("http://localhost./", "not in"),
    ("http://localhost:8001/", "not in"),
    ("http://2130706433/", "not in"),  # 127.0.0.1 as one decimal number
    ("http://0x7f.1:8001/", "not in"),
    ("http://127.1:8001/", "not in"),
    ("http://[::ffff:127.0.0.1]:8001/", "not in"),  # IPv4-mapped: not the listed literal
    ("http://[::1]:9001/", "not in"),
    ("http://127.0.0.1:8002/", "not in"),
    ("http://169.254.169.254/latest/meta-data/", "not in"),
    ("http://evil.example.com/", "not in"),
    ("http://agents.example.com:99999/", "not a URL"),
    ("http://agents.example.com /", "not a URL"),
    ("http:///run", "no host"),
    ("javascript:alert(1)", "only http"),
])
def test_hostile_urls_are_refused(url, why):
    with pytest.raises(policy.Refused, match=why):
        policy.check_url(url, ENTRIES)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
    "64:ff9b::a00:1", "2002:7f00:1::", "224.0.0.1", "fd00:ec2::254",
])
def test_special_addresses_are_refused_for_a_listed_name(address):
    entry = ENTRIES[0]
    with pytest.raises(policy.Refused, match="resolves to"):
        policy.check_address(address, 80, entry, ENTRIES)


def test_a_public_address_passes_and_a_listed_one_too():
    entry = ENTRIES[0]
    assert policy.check_address("93.184.216.34", 80, entry, ENTRIES)
    local = policy.parse_hosts("localhost:7000")
    assert policy.check_address("127.0.0.1", 7000, local[0], local)  # localhost listed
    assert policy.check_address("::1", 7000, local[0], local)
    internal = policy.parse_hosts("agents.internal:8000, 10.0.0.5")
    assert policy.check_address("10.0.0.5", 8000, internal[0], internal)
    with pytest.raises(policy.Refused):
        policy.check_address("10.0.0.6", 8000, internal[0], internal)


@pytest.mark.parametrize("text", ["", "a/b", "http://x", "user@host", "[::1", "host:0",
                                  "host:x", "[1.2.3.4]:80"])
def test_bad_entries_are_refused(text):
    with pytest.raises(ValueError):
        policy.parse_entry(text)


# Against a server on loopback ------------------------------------------------------------------


class Server:
    """A tiny HTTP server on 127.0.0.1: answers each request with ``reply(path)``."""

    def __init__(self, reply):
        self.reply, self.paths = reply, []

    async def __aenter__(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()

    async def handle(self, reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        self.paths.append(head.split(b" ")[1].decode())
        writer.write(self.reply(self.paths[-1]))
        await writer.drain()
        writer.close()


def ok(path):
    return (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 2\r\n"
            b"connection: close\r\n\r\nok")


def client(hosts):
    return net.new_client(policy.parse_hosts(hosts), connect_seconds=2, idle_seconds=2)


async def open_and_read(http, url):
    response = await http.open_stream("GET", url)
    try:
        return response.status_code, await response.aread()
    finally:
        await response.aclose()


async def test_a_name_that_resolves_to_loopback_is_refused_at_connect(monkeypatch):
    async with Server(ok) as server:
        async def rebinding(host, port):
            return ["127.0.0.1"]  # the DNS answers a private address

        monkeypatch.setattr(net, "resolve", rebinding)
        http = client(f"agents.example.com:{server.port}")
        with pytest.raises(UpstreamError, match="resolves to a loopback address"):
            await open_and_read(http, f"http://agents.example.com:{server.port}/run")
        assert server.paths == []
        await http.aclose()


async def test_the_connection_goes_to_the_checked_address(monkeypatch):
    async with Server(ok) as server:
        asked = []

        async def resolver(host, port):
            asked.append(host)
            return ["127.0.0.1"]

        monkeypatch.setattr(net, "resolve", resolver)
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9/")  # never used
        monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9/")
        http = client(f"agents.example.test:{server.port}, 127.0.0.1")
        assert await open_and_read(http, f"http://agents.example.test:{server.port}/x") == (
            200, b"ok")
        assert asked == ["agents.example.test"] and server.paths == ["/x"]
        await http.aclose()


async def test_no_redirect_to_another_host_and_one_to_the_same_is_followed():
    async with Server(lambda path: (
            b"HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.2:%d/x\r\n"
            b"content-length: 0\r\n\r\n" % port) if path == "/away" else (
            b"HTTP/1.1 308 Permanent Redirect\r\nlocation: /here/\r\ncontent-length: 0\r\n\r\n"
            if path == "/here" else ok(path))) as server:
        port = server.port
        http = client(f"127.0.0.1:{port}, 127.0.0.2:{port}")
        with pytest.raises(UpstreamError, match="redirected to another host"):
            await open_and_read(http, f"http://127.0.0.1:{port}/away")
        assert await open_and_read(http, f"http://127.0.0.1:{port}/here") == (200, b"ok")
        assert server.paths == ["/away", "/here", "/here/"]
        await http.aclose()


async def test_an_unlisted_url_never_connects():
    async with Server(ok) as server:
        http = client("agents.example.com")
        for url in (f"http://127.0.0.1:{server.port}/", f"http://localhost:{server.port}/",
                    f"http://[::ffff:127.0.0.1]:{server.port}/"):
            with pytest.raises(UpstreamError, match="not allowed"):
                await open_and_read(http, url)
        # Even past the URL check (a library using the client as it is): refused at connect.
        with pytest.raises(Exception, match="not an allowed host"):
            await http.get(f"http://127.0.0.1:{server.port}/")
        assert server.paths == []
        await http.aclose()
