"""The web client page: the people's side of A2UI in a browser."""

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, LogoutView
from django.shortcuts import render
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from a2ui.conf import a2ui_settings
from a2ui.web.csp import csp_protected
from a2ui.web.logins import GuardedAuthenticationForm, guarded


def site_title():
    """``A2UI['SITE_TITLE']``, else "Assistant" in the person's language."""
    return a2ui_settings.SITE_TITLE or gettext_lazy("Assistant")


@never_cache
@login_required
@ensure_csrf_cookie
@csp_protected
def client_page(request):
    """Status bar, the three regions (main, sidebar, overlay) and toasts; main.js does the rest.
    ``?chat=1`` shows the chat box from the start (an agent that waits for the person's words:
    a remote agent)."""
    return render(request, "a2ui/client_page.html", {"page_title": site_title(),
                                                     "chat": request.GET.get("chat") == "1"})


class _LoginView(LoginView):
    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "site_title": site_title()}


#: The people's login page: Django's LoginView (any active user, not only staff), the app's
#: template, back to the page the person asked for (``next``) or the client; its sign-ins
#: limited and their password checks bounded (a2ui.web.logins).
login_view = guarded(never_cache(csp_protected(_LoginView.as_view(
    template_name="a2ui/login.html", redirect_authenticated_user=True,
    form_class=GuardedAuthenticationForm, next_page=reverse_lazy("a2ui_web:client")))))
#: Log out (POST), back to the login page.
logout_view = LogoutView.as_view(next_page=reverse_lazy("a2ui_web:login"))
