"""The default channel layer with Redis (``a2ui.apps.default_channel_layers``): channels-redis's
PUBLISH/SUBSCRIBE layer, each channel's queue a ``LeanQueue`` (``a2ui.leanqueue``: every idle
socket holds one).

It overrides private parts of channels-redis 4.x (``RedisPubSubLoopLayer._subscribe_to_channel``
and ``.channels``, ``RedisPubSubChannelLayer._get_layer`` and ``._layers``,
``channels_redis.utils._wrap_close``). Should an upgrade remove any of them, the stock loop
layer is used (plain ``asyncio.Queue`` per channel), with one WARNING; tests/core/test_leanqueue.py
names what is missing.
"""

import asyncio
import logging

from channels_redis import pubsub, utils
from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer

from a2ui.leanqueue import LeanQueue

log = logging.getLogger("a2ui.layer")


def missing_internals():
    """The channels-redis members this module relies on that are not there (names)."""
    wanted = [(pubsub.RedisPubSubLoopLayer, "_subscribe_to_channel"),
              (pubsub.RedisPubSubLoopLayer, "_get_shard"),
              (pubsub.RedisPubSubChannelLayer, "_get_layer"),
              (utils, "_wrap_close")]
    return [f"{getattr(owner, '__name__', owner)}.{name}" for owner, name in wanted
            if not hasattr(owner, name)]


class LeanLoopLayer(RedisPubSubLoopLayer):
    async def _subscribe_to_channel(self, channel):
        self.channels[channel] = LeanQueue()
        shard = self._get_shard(channel)
        await shard.subscribe(channel)


class PubSubChannelLayer(RedisPubSubChannelLayer):
    """``channels_redis.pubsub.RedisPubSubChannelLayer`` with a ``LeanLoopLayer`` per loop."""

    def _loop_layer_class(self):
        missing = missing_internals()
        if missing:
            if not getattr(PubSubChannelLayer, "_warned", False):
                PubSubChannelLayer._warned = True
                log.warning("a2ui: channels_redis lacks %s: the stock PubSub layer is used",
                            ", ".join(missing))
            return RedisPubSubLoopLayer
        return LeanLoopLayer

    def _get_layer(self):
        loop = asyncio.get_running_loop()
        try:
            return self._layers[loop]
        except KeyError:
            layer = self._loop_layer_class()(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            utils._wrap_close(self, loop)
            return layer
