from django.apps import AppConfig
from django.conf import settings


def default_channel_layers(redis_url):
    """The layer a2ui uses when the project defines none: Redis PUBLISH/SUBSCRIBE when
    ``A2UI['REDIS_URL']`` is set (what several Daphne processes need), else in-memory."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # redis-py >= 8 reads with a 5 s socket_timeout by default, as long as channels-redis's
    # server-side block: an idle consumer would time out. Read longer.
    host = {"address": redis_url, "socket_timeout": 15}
    return {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                        "CONFIG": {"hosts": [host]}}}


class A2UIConfig(AppConfig):
    name = "a2ui"
    verbose_name = "Agent UI"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)

        if not hasattr(settings, "CHANNEL_LAYERS"):
            from .conf import a2ui_settings

            settings.CHANNEL_LAYERS = default_channel_layers(a2ui_settings.REDIS_URL)
