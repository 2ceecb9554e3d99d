"""A strict Content-Security-Policy for the pages that run the web client.

No middleware: a view opts in with ``@csp_protected``. The only inline script allowed is the
import map, through a per-response nonce (``request.a2ui_csp_nonce``, also available to templates
as ``{% a2ui_csp_nonce %}``). A site that embeds the client in its own page with
``{% a2ui_client %}`` can decorate its own view the same way, or copy ``build_policy`` into its
own CSP (see docs/client.md).
"""

import secrets
from functools import wraps

NONCE_ATTR = "a2ui_csp_nonce"


def get_nonce(request):
    """The request's CSP nonce, created on first use."""
    if request is None:
        return ""
    nonce = getattr(request, NONCE_ATTR, None)
    if not nonce:
        nonce = secrets.token_urlsafe(18)
        setattr(request, NONCE_ATTR, nonce)
    return nonce


def build_policy(nonce, *, host=None, frame_ancestors="'self'"):
    """The policy text for one response.

    ``connect-src`` is the page's own origin: 'self' (which CSP Level 3 browsers also match to
    ``ws:``/``wss:`` on the same host) plus explicit ``ws://host wss://host`` for ``host``, the
    request's validated Host, so the socket can reach only the host that served the page.
    """
    connect = "'self'"
    if host:
        connect += f" ws://{host} wss://{host}"
    directives = [
        ("default-src", "'self'"),
        ("script-src", f"'self' 'nonce-{nonce}'"),
        ("style-src", "'self'"),
        ("img-src", "'self' https: data:"),
        ("font-src", "'self'"),
        ("connect-src", connect),
        ("media-src", "'self' https:"),
        ("object-src", "'none'"),
        ("base-uri", "'none'"),
        ("frame-ancestors", frame_ancestors),
        ("form-action", "'self'"),
    ]
    return "; ".join(f"{name} {value}" for name, value in directives)


def apply_policy(request, response):
    """Set the CSP (and a few related) headers on ``response`` unless the view already did."""
    if "Content-Security-Policy" not in response:
        try:
            host = request.get_host()
        except Exception:  # DisallowedHost: fall back to 'self' only
            host = None
        response["Content-Security-Policy"] = build_policy(get_nonce(request), host=host)
    response.setdefault("X-Content-Type-Options", "nosniff")
    response.setdefault("Referrer-Policy", "same-origin")
    return response


def csp_protected(view):
    """Decorator: give the request a nonce before the view renders, and send the policy."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        get_nonce(request)
        response = view(request, *args, **kwargs)
        return apply_policy(request, response)

    return wrapper
