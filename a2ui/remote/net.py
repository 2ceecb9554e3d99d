"""The outbound HTTP client of remote agents: httpx, held to ``A2UI['REMOTE_AGENT_HOSTS']``.

* Every URL is checked first (``a2ui.remote.policy.check_url``: scheme, no user info, an
  allowed host and port).
* Every connection, whatever asked for it, goes through :class:`CheckedBackend` (httpcore's
  network backend): the host is resolved once, each address checked
  (``policy.check_address``: loopback, private, link-local, metadata... refused unless
  listed), and the connection made to the checked address itself. TLS still verifies the
  URL's host name (httpcore sends it as SNI and checks the certificate against it), so nothing
  resolves the name a second time: no DNS rebinding.
* No redirects are followed by httpx; :func:`send` follows a few to the same scheme, host and
  port (a trailing slash) and refuses one to anywhere else.
* No proxy from the environment (``trust_env`` off), no retries, connect and read time limits
  (``A2UI['REMOTE_AGENT_CONNECT_TIMEOUT_SECONDS']``; reading: the idle limit between events).
"""

import asyncio
import socket

import httpcore
import httpx

from a2ui.remote import policy
from a2ui.remote.clients import UpstreamError

MAX_REDIRECTS = 3


async def _getaddrinfo(host, port):
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


#: ``await resolve(host, port) -> [address text]`` (tests replace it to answer what they want).
resolve = _getaddrinfo


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to checked addresses of allowed hosts (see the module's docstring)."""

    def __init__(self, entries, inner=None):
        self.entries = entries
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None,
                          socket_options=None):
        entry = policy.match(host, port, self.entries)
        if entry is None:
            raise httpcore.ConnectError(f"{host}:{port} is not an allowed host")
        literal = policy._ip(host.strip("[]"))
        try:
            found = [literal.compressed] if literal is not None else await asyncio.wait_for(
                resolve(host, port), timeout)
        except (TimeoutError, OSError) as exc:
            raise httpcore.ConnectError(f"{host} could not be resolved") from exc
        checked = []
        for address in dict.fromkeys(found):
            try:
                checked.append(policy.check_address(address, port, entry, self.entries))
            except policy.Refused as exc:
                raise httpcore.ConnectError(str(exc)) from None
        if not checked:
            raise httpcore.ConnectError(f"{host} has no address")
        last = None
        for address in checked:
            try:
                return await self.inner.connect_tcp(
                    address.compressed, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("Unix sockets are not allowed")

    async def sleep(self, seconds):
        await self.inner.sleep(seconds)


class PolicyClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` whose every connection goes through :class:`CheckedBackend`
    (``entries``: the allowed hosts). Hand it to a library as its client (redirects are off);
    :meth:`open_stream` adds the URL check and same-host redirects."""

    entries = ()

    async def open_stream(self, method, url, **kwargs):
        """:func:`send`: the response, open (close it)."""
        return await send(self, method, url, self.entries, **kwargs)


def new_client(entries, *, connect_seconds, idle_seconds, max_connections=100):
    """A :class:`PolicyClient` for the allowed hosts ``entries``."""
    transport = httpx.AsyncHTTPTransport(retries=0, trust_env=False, http2=False,
                                         limits=httpx.Limits(max_connections=max_connections,
                                                             max_keepalive_connections=20))
    transport._pool._network_backend = CheckedBackend(entries)
    timeout = httpx.Timeout(connect=connect_seconds, read=idle_seconds, write=connect_seconds,
                            pool=connect_seconds)
    client = PolicyClient(transport=transport, timeout=timeout, follow_redirects=False,
                          trust_env=False)
    client.entries = tuple(entries)
    return client


def checked(url, entries):
    """``policy.check_url`` as an UpstreamError."""
    try:
        return policy.check_url(url, entries)
    except policy.Refused as exc:
        raise UpstreamError(f"The agent's URL is not allowed: {exc}.", "refused_host") from None


async def send(http, method, url, entries, **kwargs):
    """``http.send`` of a streamed request to ``url`` (checked), following at most
    :data:`MAX_REDIRECTS` redirects that stay on the same scheme, host and port. Returns the
    response, open (close it). Network failures are :class:`UpstreamError`."""
    target = checked(url, entries)
    for _ in range(MAX_REDIRECTS + 1):
        request = http.build_request(method, url, **kwargs)
        try:
            response = await http.send(request, stream=True)
        except httpx.TimeoutException:
            raise UpstreamError("The agent did not answer in time.", "timeout") from None
        except httpx.HTTPError as exc:
            raise UpstreamError(f"The agent could not be reached: {_reason(exc)}.",
                                "unreachable") from None
        if not response.is_redirect:
            return response
        location = response.headers.get("location", "")
        await response.aclose()
        try:
            url = str(response.url.join(location))
            moved = policy.check_url(url, entries)
        except (policy.Refused, httpx.InvalidURL, ValueError):
            moved = None
        if moved is None or (moved.scheme, moved.host, moved.port) != (
                target.scheme, target.host, target.port):
            raise UpstreamError("The agent redirected to another host, which is not followed.",
                                "redirect")
    raise UpstreamError("The agent redirected too many times.", "redirect")


def _reason(exc):
    text = str(exc) or type(exc).__name__
    return text[:200]
