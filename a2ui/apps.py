import logging

from django.apps import AppConfig
from django.conf import settings


def redis_layer_host(redis_url):
    """channels-redis host settings for ``redis_url``.

    redis-py >= 8 reads with a 5 s socket_timeout by default, as long as channels-redis's 5 s
    server-side block: an idle consumer's receive would time out, so read longer. Redis may
    restart or fail over: a command written to a connection that turns out dead is sent once
    more on a new one (the pool's connections have no retry otherwise), and the PubSub layer's
    subscription reconnects and subscribes again in place. A ``redis+sentinel://`` URL gives a
    Sentinel host (``a2ui.infra.redisurl``): each new connection asks the sentinels for
    the primary, so the retry after a failover reaches the promoted one.
    """
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff

    from a2ui.infra.redisurl import layer_host

    return layer_host(redis_url, socket_timeout=15,
                      retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 1))


def default_channel_layers(redis_url, shards=()):
    """The layer a2ui uses when the project defines none: Redis PUBLISH/SUBSCRIBE when
    ``A2UI['REDIS_URL']`` is set (what several Daphne processes need), else in-memory. At most
    once, like every channel layer: sequence numbers and resync cover a lost message. The Redis
    layer is channels-redis's with a lighter queue per channel (``a2ui.layer``). With
    ``shards`` (``A2UI['REDIS_SHARDS']``) it has a host per shard, and a session's group is on
    the server that holds the session's state (``a2ui.core.shardmap``)."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    if shards:
        from a2ui.infra.redisstate.sharded import shard_list

        named = shard_list(shards)
        return {"default": {"BACKEND": "a2ui.layer.PubSubChannelLayer",
                            "CONFIG": {"hosts": [redis_layer_host(url) for _, url in named],
                                       "prefix": pubsub_prefix(redis_url),
                                       "line_urls": [url for _, url in named],
                                       "shard_names": [name for name, _ in named]}}}
    return {"default": {"BACKEND": "a2ui.layer.PubSubChannelLayer",
                        "CONFIG": {"hosts": [redis_layer_host(redis_url)],
                                   "prefix": pubsub_prefix(redis_url),
                                   "line_urls": [redis_url]}}}


def pubsub_prefix(redis_url):
    """The PubSub layer's channel prefix for ``redis_url``: Redis PUBLISH channels are not
    scoped by database number, so two sites (or test runs) on one Redis server with different
    databases would otherwise hear each other's group sends. Database 0 keeps channels-redis's
    own prefix, ``asgi``; database N is ``asgi.dbN``."""
    from a2ui.infra.redisurl import database

    db = database(redis_url)
    return "asgi" if db == 0 else f"asgi.db{db}"


class A2UIConfig(AppConfig):
    name = "a2ui"
    verbose_name = "Agent UI"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from a2ui import checks  # noqa: F401  (registers the system checks)
        from a2ui.conf import a2ui_settings
        from a2ui.core import adapters
        from a2ui.infra import outages, prom

        adapters.use_source(lambda: a2ui_settings.ADAPTERS)  # A2UI['ADAPTERS'], read lazily

        prom.setup()  # the Prometheus metrics, when A2UI['PROMETHEUS'] is on
        from a2ui.surfaces import componenttypes

        componenttypes.install()  # the host project's component types (A2UI['COMPONENT_TYPES'])

        from a2ui.remote import inbound

        inbound.install()  # remote agents' events go to their runtime (a2ui.remote)

        if self.apps.is_installed("django.contrib.admin"):
            from a2ui.web import logins

            logins.guard_admin()  # the admin's sign-ins limited, their checks bounded

        # channels-redis logs a traceback for each reconnection attempt while Redis is away
        # (about one a second per shard): one line each instead (services.outages).
        layer_log = logging.getLogger("channels_redis.pubsub")
        if not any(isinstance(f, outages.LibraryTracebacks) for f in layer_log.filters):
            layer_log.addFilter(outages.LibraryTracebacks("channel layer receive"))

        if not hasattr(settings, "CHANNEL_LAYERS"):
            try:
                settings.CHANNEL_LAYERS = default_channel_layers(a2ui_settings.REDIS_URL,
                                                                 a2ui_settings.REDIS_SHARDS)
            except (ValueError, TypeError):  # an unusable Redis URL: the system checks say which
                pass
