"""HTTP routes of the app. A project includes them at the root:

    path("", include("a2ui.urls"))

which serves the REST API under /api/ and the web client under /a2ui/.
"""

from django.urls import include, path

urlpatterns = [
    path("api/", include("a2ui.api.urls")),
    path("a2ui/", include("a2ui.web.urls")),
]
