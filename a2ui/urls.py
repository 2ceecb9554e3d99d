"""HTTP routes of the app. A project includes them at the root:

    path("", include("a2ui.urls"))

which serves the REST API under /api/ (with its OpenAPI schema at /api/schema/ and Swagger UI
at /api/docs/ when drf_spectacular is installed), the web client under /a2ui/, and the health
probes at /a2ui/healthz and /a2ui/readyz (a2ui.probes).
"""

from django.apps import apps
from django.urls import include, path

from a2ui import probes
from a2ui.core import adapters

urlpatterns = [
    *adapters.http_urls(),  # each protocol's own HTTP routes (A2UI['ADAPTERS'])
    # Answered in front of Django by a2ui.asgi.http_application() (a2ui.probes.ProbeRoutes),
    # at the paths these give them; through Django otherwise.
    path("a2ui/healthz", probes.liveness_view, name=probes.LIVENESS),
    path("a2ui/readyz", probes.readiness_view, name=probes.READINESS),
    path("a2ui/metrics", probes.metrics_view, name=probes.METRICS),
    path("api/", include("a2ui.api.urls")),
    path("a2ui/", include("a2ui.web.urls")),
]

if apps.is_installed("drf_spectacular"):
    from django.conf import settings
    from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

    from a2ui.api import schema  # noqa: F401 (the agent-key scheme: registered on import)

    # The endpoints DRF does not see (a2ui.api.schema.add_plain_views), beside the project's
    # own hooks (drf-spectacular's default: the enum postprocessing).
    hooks = list((getattr(settings, "SPECTACULAR_SETTINGS", None) or {}).get(
        "POSTPROCESSING_HOOKS", ["drf_spectacular.hooks.postprocess_schema_enums"]))
    if "a2ui.api.schema.add_plain_views" not in hooks:
        hooks.append("a2ui.api.schema.add_plain_views")
    urlpatterns += [
        path("api/schema/", SpectacularAPIView.as_view(
            custom_settings={"POSTPROCESSING_HOOKS": hooks}), name="a2ui-schema"),
        path("api/docs/", SpectacularSwaggerView.as_view(url_name="a2ui-schema"),
             name="a2ui-api-docs"),
    ]
