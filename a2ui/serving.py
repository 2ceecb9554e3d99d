"""How the app is served: Daphne with transport limits that leave the app's own limits reachable.

Daphne's WebSocket limits default to exactly 1 MiB, the default ``A2UI['MAX_PAYLOAD_SIZE']``: a
frame one byte over it was dropped by the transport (TCP reset, the client sees 1006) and the
app never got to answer ``-32002 Payload too large``. :func:`build_server` builds Daphne's
``Server`` with

* a WebSocket **hard cap** of :func:`websocket_hard_cap` (twice ``MAX_PAYLOAD_SIZE``) per message
  and per frame: frames up to the cap reach the consumers, which answer the protocol's payload
  error and keep the socket; beyond the cap the transport refuses to buffer more;
* a **clean close** past the cap: autobahn's ``failByDrop`` is turned off, so the peer gets a
  close frame (1009 message too big; 1002/1007 for protocol violations) instead of a dropped
  connection.

``manage.py a2ui_serve`` (the one way this project runs Daphne) calls it. Importing this module
installs Twisted's asyncio reactor (``daphne.server`` does so on import), as Daphne's CLI does.
"""

import logging

from daphne.server import Server

from .conf import a2ui_settings

log = logging.getLogger("a2ui.serving")

#: The hard cap is this many times the payload limit.
HARD_CAP_FACTOR = 2


def websocket_hard_cap(limit=None):
    """Largest WebSocket message (and frame) the transport buffers, in bytes."""
    limit = a2ui_settings.MAX_PAYLOAD_SIZE if limit is None else limit
    return HARD_CAP_FACTOR * limit


class A2UIServer(Server):
    """Daphne's ``Server`` whose WebSocket failures end with a close frame, never a drop."""

    def __init__(self, *args, ready_callable=None, **kwargs):
        self._user_ready = ready_callable
        super().__init__(*args, ready_callable=self._ready, **kwargs)

    def _ready(self):
        # Daphne builds its factories inside run(), right before this hook; no connection has
        # been served yet (the reactor is not running).
        self.ws_factory.setProtocolOptions(failByDrop=False)
        if self._user_ready is not None:
            self._user_ready()


def build_server(application, endpoints, *, max_message_size=None, **options):
    """An :class:`A2UIServer` for ``endpoints`` (Daphne endpoint strings) with the A2UI limits.

    ``max_message_size`` defaults to :func:`websocket_hard_cap`; it must exceed
    ``MAX_PAYLOAD_SIZE``, or oversized frames never reach the app (ValueError). Other keyword
    arguments go to Daphne's ``Server`` unchanged.
    """
    limit = a2ui_settings.MAX_PAYLOAD_SIZE
    cap = websocket_hard_cap(limit) if max_message_size is None else max_message_size
    if cap <= limit:
        raise ValueError(
            f"the WebSocket message size cap ({cap} bytes) must exceed A2UI['MAX_PAYLOAD_SIZE'] "
            f"({limit} bytes): frames over the limit must reach the app to get -32002"
        )
    return A2UIServer(
        application=application,
        endpoints=endpoints,
        websocket_max_message_size=cap,
        websocket_max_frame_size=cap,
        **options,
    )
