from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from a2ui.web.csp import csp_protected
from a2ui.web.logins import GuardedAuthenticationForm, guarded

urlpatterns = [
    path("", RedirectView.as_view(url="/a2ui/", permanent=False)),
    path("favicon.ico", RedirectView.as_view(url="/static/a2ui/favicon.svg", permanent=True)),
    # The example site's own login page (templates/registration/login.html), under the same
    # strict CSP as the client page, its sign-ins limited (a2ui.web.logins); LOGIN_URL.
    path("accounts/login/", guarded(csp_protected(auth_views.LoginView.as_view(
        redirect_authenticated_user=True, form_class=GuardedAuthenticationForm))),
        name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("a2ui.urls")),
]
