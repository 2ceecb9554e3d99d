"""ASGI entry point: HTTP to Django, WebSocket through the a2ui auth middleware to its router."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2ui_project.settings")
django_asgi_app = get_asgi_application()  # set up Django before importing consumers

from channels.routing import ProtocolTypeRouter  # noqa: E402

from a2ui.asgi import websocket_application  # noqa: E402
from a2ui.conf import a2ui_settings  # noqa: E402

http_app = django_asgi_app
if a2ui_settings.SERVE_STATIC:
    # Daphne has no static server; this serves /static/ through the staticfiles finders
    # (the app's modules, the renderer in node_modules). Off behind a real web server.
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    http_app = ASGIStaticFilesHandler(django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": websocket_application(),
    }
)

# The cyclic garbage collector stops the whole process while it runs; with a thousand sockets a
# full collection takes 100-200 ms, which every socket sees as latency (docs/performance.md).
# Everything loaded so far lives as long as the process: freeze it out of the collector's view,
# and collect less often (young cycles still die young; a full collection comes about every
# 10^8 allocations instead of every 7*10^5). A2UI_GC_THRESHOLD="700,10,10" restores Python's.
gc.collect()
gc.freeze()
gc.set_threshold(
    *(int(n) for n in os.environ.get("A2UI_GC_THRESHOLD", "50000,20,100").split(","))
)
