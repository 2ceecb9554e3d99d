"""Redis URLs, parsed in one place: one server, or a Sentinel-monitored primary.

``A2UI['REDIS_URL']`` (and ``REDIS_URL`` in the environment) takes either

* ``redis://[[user]:password@]host[:port][/db]`` (``rediss://`` for TLS, ``unix://`` for a
  socket: every form redis-py's ``from_url`` takes), one server; or
* ``redis+sentinel://[[user]:password@]host1[:26379][,host2[:26379]...]/service[/db][?options]``
  (``rediss+sentinel://`` for TLS to the primary), the primary that the listed sentinels
  name ``service``. Every client asks the sentinels for the primary's address when it
  connects and again when a connection fails or the server answers READONLY (a demoted
  primary), so a failover is followed without a restart. ``user``/``password`` authenticate
  to the primary and its replicas; options: ``sentinel_username``, ``sentinel_password``
  (the sentinels' own ACL, when they have one), ``ssl_cert_reqs`` (``rediss+sentinel``).
  The convention is the ``redis-sentinel-url`` one (also used by Celery's and Sidekiq's
  users); the default sentinel port is 26379.

Everything that talks to Redis takes its connection from here: the hot-path line
(``redisline``), redis-py clients (``redisstate``), the channel layer
(:func:`layer_host`) and the Django cache (:class:`CachePool`).

Redis Cluster is not supported: channels-redis shards over independent servers, not a Cluster,
and the per-session Lua scripts and pipelines address keys that a Cluster would spread over
slots.
"""

import ssl
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379
SENTINEL_OPTIONS = {"sentinel_username", "sentinel_password", "ssl_cert_reqs"}
CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}

#: The RESP version of every redis-py connection made here (unless a caller names one): RESP2,
#: what the hot-path line speaks and what channels-redis's pub/sub reads. redis-py 8.2 made
#: RESP3 its default (a ``HELLO 3`` on every new connection, and pub/sub messages as pushes);
#: the version the app was built and measured on is kept, whichever redis-py is installed.
PROTOCOL = 2


@dataclass(frozen=True)
class SentinelTarget:
    """A ``redis+sentinel://`` URL, parsed."""

    sentinels: tuple  # ((host, port), ...)
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    tls: bool = False
    ssl_cert_reqs: str = "required"

    def connection_kwargs(self):
        """redis-py keyword arguments for connections to the primary."""
        kwargs = {"db": self.db}
        if self.username is not None:
            kwargs["username"] = self.username
        if self.password is not None:
            kwargs["password"] = self.password
        if self.tls:
            kwargs["ssl"] = True
            kwargs["ssl_cert_reqs"] = self.ssl_cert_reqs
        return kwargs

    def sentinel_kwargs(self):
        """redis-py keyword arguments for connections to the sentinels."""
        kwargs = {}
        if self.sentinel_username is not None:
            kwargs["username"] = self.sentinel_username
        if self.sentinel_password is not None:
            kwargs["password"] = self.sentinel_password
        return kwargs


def is_sentinel(url):
    return bool(url) and url.split("://", 1)[0].lower() in SENTINEL_SCHEMES


def _host_port(text, url):
    text = text.strip()
    if text.startswith("["):  # [IPv6]:port
        host, _, rest = text[1:].partition("]")
        port = rest.lstrip(":")
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not host:
        raise ValueError(f"a sentinel without a host in {redact(url)}")
    try:
        return host, int(port) if port else SENTINEL_PORT
    except ValueError:
        raise ValueError(f"a sentinel port that is not a number in {redact(url)}") from None


def parse_sentinel(url):
    """The :class:`SentinelTarget` of a ``redis+sentinel://`` URL (ValueError if malformed)."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in SENTINEL_SCHEMES:
        raise ValueError(f"not a Sentinel URL: {redact(url)}")
    netloc, _, tail = rest.partition("/")
    path, _, query_text = tail.partition("?")
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        userinfo, hosts = "", netloc
    username = password = None
    if userinfo:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    sentinels = tuple(_host_port(h, url) for h in hosts.split(",") if h.strip())
    if not sentinels:
        raise ValueError(f"no sentinel hosts in {redact(url)}")
    segments = [unquote(s) for s in path.split("/") if s]
    if not segments or len(segments) > 2:
        raise ValueError(f"a Sentinel URL names its service, then an optional database: "
                         f"{scheme}://host:26379/mymaster/0 (got {redact(url)})")
    query = {k: v[-1] for k, v in parse_qs(query_text).items()}
    unknown = set(query) - SENTINEL_OPTIONS
    if unknown:
        raise ValueError(f"unknown Sentinel URL options {sorted(unknown)}: "
                         f"known are {sorted(SENTINEL_OPTIONS)}")
    tls = scheme == "rediss+sentinel"
    reqs = query.get("ssl_cert_reqs", "required").lower()
    if reqs not in CERT_REQS or ("ssl_cert_reqs" in query and not tls):
        raise ValueError(f"ssl_cert_reqs={reqs!r}: one of none, optional, required, "
                         "with rediss+sentinel://")
    try:
        db = int(segments[1]) if len(segments) == 2 else 0
    except ValueError:
        raise ValueError(f"the database is not a number in {redact(url)}") from None
    return SentinelTarget(
        sentinels=sentinels, service=segments[0], db=db, username=username, password=password,
        sentinel_username=query.get("sentinel_username"),
        sentinel_password=query.get("sentinel_password"), tls=tls, ssl_cert_reqs=reqs)


def redact(url):
    """``url`` without its password (for error messages and logs)."""
    scheme, sep, rest = str(url).partition("://")
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = userinfo.split(":", 1)[0] + ":***@" + hosts
    return f"{scheme}{sep}{netloc}{slash}{tail}"


def database(url):
    """The database number ``url`` selects (0 when it names none)."""
    if is_sentinel(url):
        return parse_sentinel(url).db
    db = _database_text(urlsplit(url))
    return int(db) if db.isdigit() else 0


def _database_text(parts):
    """The database a split ``redis://`` URL names: ``?db=``, else its path, else "0"."""
    return parse_qs(parts.query).get("db", [""])[0] or parts.path.strip("/") or "0"


def check(url):
    """Raise ValueError when ``url`` is not a Redis URL this project can use (its message names
    the URL without its password)."""
    if not isinstance(url, str):
        raise ValueError(f"a Redis URL is a string, not {type(url).__name__}")
    if is_sentinel(url):
        parse_sentinel(url)
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port out of range or not a number)
    except ValueError as exc:
        raise ValueError(f"{exc} in {redact(url)}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"unsupported Redis URL scheme {scheme!r}: redis://, rediss://, "
                         "unix://, redis+sentinel:// or rediss+sentinel://")
    if scheme == "unix":
        if not parts.path:
            raise ValueError(f"a unix:// URL names its socket's path: {redact(url)}")
        return
    if not _database_text(parts).isdigit():
        raise ValueError(f"the database is not a number in {redact(url)}")


# redis-py clients --------------------------------------------------------------------------------


def async_pool(url, *, blocking_max_connections=None, **kwargs):
    """A redis-py asyncio connection pool for ``url`` (a Sentinel pool for a Sentinel URL).

    ``blocking_max_connections``: a one-server pool that waits for a free connection instead
    of failing (Sentinel pools are not blocking; past their size a command fails).
    """
    import redis.asyncio as aioredis

    kwargs.setdefault("protocol", PROTOCOL)
    if is_sentinel(url):
        from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

        target = parse_sentinel(url)
        kwargs.pop("timeout", None)  # the blocking pool's wait, not a connection option
        sentinel = Sentinel(list(target.sentinels), sentinel_kwargs={
            **target.sentinel_kwargs(), **_sentinel_timeouts(kwargs), "protocol": PROTOCOL})
        if blocking_max_connections is not None:
            kwargs["max_connections"] = blocking_max_connections
        return SentinelConnectionPool(target.service, sentinel,
                                      **target.connection_kwargs(), **kwargs)
    if blocking_max_connections is not None:
        return aioredis.BlockingConnectionPool.from_url(
            url, max_connections=blocking_max_connections, **kwargs)
    return aioredis.ConnectionPool.from_url(url, **kwargs)


def _sentinel_timeouts(kwargs):
    return {k: kwargs[k] for k in ("socket_timeout", "socket_connect_timeout") if k in kwargs}


def layer_host(url, **kwargs):
    """channels-redis's ``hosts`` entry for ``url`` (``channels_redis.utils.create_pool`` reads
    ``address`` for one server, ``sentinels`` + ``master_name`` for Sentinel), with ``kwargs``
    for the connections."""
    kwargs.setdefault("protocol", PROTOCOL)
    if is_sentinel(url):
        target = parse_sentinel(url)
        return {"sentinels": [list(s) for s in target.sentinels], "master_name": target.service,
                "sentinel_kwargs": {**target.sentinel_kwargs(), **_sentinel_timeouts(kwargs),
                                    "protocol": PROTOCOL},
                **target.connection_kwargs(), **kwargs}
    return {"address": url, **kwargs}


class CachePool:
    """``OPTIONS["pool_class"]`` of Django's ``RedisCache`` for a Sentinel URL.

    Django makes each server's pool with ``pool_class.from_url(location, **options)``; this
    makes a (synchronous) redis-py Sentinel pool for ``redis+sentinel://`` and the ordinary
    pool otherwise. Give ``LOCATION`` as a one-item list: Django splits a string on commas.
    """

    @classmethod
    def from_url(cls, url, **kwargs):
        import redis

        kwargs.setdefault("protocol", PROTOCOL)
        if is_sentinel(url):
            from redis.sentinel import Sentinel, SentinelConnectionPool

            target = parse_sentinel(url)
            sentinel = Sentinel(list(target.sentinels), sentinel_kwargs={
                **target.sentinel_kwargs(), **_sentinel_timeouts(kwargs), "protocol": PROTOCOL})
            return SentinelConnectionPool(target.service, sentinel,
                                          **target.connection_kwargs(), **kwargs)
        return redis.ConnectionPool.from_url(url, **kwargs)


def sync_client(url, **kwargs):
    """A synchronous redis-py client for ``url`` (tests, benches, management commands)."""
    import redis

    return redis.Redis(connection_pool=CachePool.from_url(url, **kwargs))
