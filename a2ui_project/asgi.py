"""ASGI entry point: HTTP to Django, WebSocket through the a2ui auth middleware to its router."""

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
