from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(url="/a2ui/", permanent=False)),
    path("favicon.ico", RedirectView.as_view(url="/static/a2ui/favicon.svg", permanent=True)),
    path("admin/", admin.site.urls),
    path("", include("a2ui.urls")),
]
