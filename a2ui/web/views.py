"""The web client page: the people's side of A2UI in a browser."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from a2ui.web.csp import csp_protected

PAGE_TITLE = "A2UI"


@never_cache
@login_required
@ensure_csrf_cookie
@csp_protected
def client_page(request):
    """Status bar, the three regions (main, sidebar, overlay) and toasts; main.js does the rest."""
    return render(request, "a2ui/client_page.html", {"page_title": PAGE_TITLE})
