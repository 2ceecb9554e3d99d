"""Template tags to embed the a2ui web client in any Django page.

    {% load a2ui %}
    {% a2ui_client %}              container + import map + stylesheet + module script
    {% a2ui_client agent="name" %} the same, talking to the named agent
    {% a2ui_client chat=True %}    the same, with the chat box shown from the start
    {% a2ui_import_map %}          only the import map (when the page lays out the rest itself)
    {% a2ui_csp_nonce %}           the request's CSP nonce (for the page's own CSP header)

The page must send a CSP that allows the import map's nonce (``a2ui.web.csp.csp_protected``
does it for a view) and ``connect-src`` to the page's own host over ws/wss. See docs/client.md.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from a2ui import tokens
from a2ui.conf import a2ui_settings
from a2ui.models import Agent
from a2ui.web import csp, i18n, importmap

register = template.Library()

DEFAULT_TOKEN_URL = "/api/v4/stream-token"
DEFAULT_WS_PATH = "/ws/v4/a2ui"
CLIENT_VERSION = "0.1.0"


def _request(context: template.Context) -> HttpRequest | None:
    return context.get("request")


@register.simple_tag(takes_context=True)
def a2ui_csp_nonce(context: template.Context) -> str:
    """The per-request nonce that the import map (and module script) carry."""
    return csp.get_nonce(_request(context))


@register.simple_tag(takes_context=True)
def a2ui_import_map(context: template.Context) -> SafeString:
    """``<script type="importmap">`` for markdown-it and @a2ui/lit, with the request's CSP nonce."""
    nonce = csp.get_nonce(_request(context))
    return format_html(
        '<script type="importmap" nonce="{}">{}</script>',
        nonce,
        mark_safe(importmap.import_map_json()),  # JSON with <, >, & escaped as \\u00XX
    )


def _token_url() -> str:
    for name in ("a2ui-stream-token", "a2ui_api:a2ui-stream-token", "a2ui_api:stream-token"):
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return DEFAULT_TOKEN_URL


def _custom_catalogs() -> list[dict[str, Any]]:
    """The definitions of A2UI['CATALOGS'] (the client builds their components from them);
    an entry that does not load is left out (the system check a2ui.E005 says why)."""
    from django.core.exceptions import ImproperlyConfigured

    from a2ui.surfaces.catalogs import load_catalog

    out: list[dict[str, Any]] = []
    for entry in a2ui_settings.CATALOGS or []:
        try:
            definition = load_catalog(entry)
        except ImproperlyConfigured:
            continue
        if isinstance(definition.get("catalogId"), str):
            out.append(definition)
    return out


def _agent_name(agent: str | None) -> str:
    """The display name of the page's agent (chat labels), '' when none is known."""
    record = (Agent.objects.filter(name=agent, is_active=True).first() if agent
              else tokens.default_agent())
    if record is None:
        return ""
    return record.display_name or record.name


@register.inclusion_tag("a2ui/_client.html", takes_context=True)
def a2ui_client(context: template.Context, token_url: str | None = None,
                ws_path: str = DEFAULT_WS_PATH, title: str = "", v09: bool = True,
                import_map: bool = True, agent: str | None = None, chat: bool = False,
                logout_url: str = "") -> dict[str, Any]:
    """The whole client: import map, stylesheet, status bar, regions, toasts, module script.

    The client's modules need the import map (markdown-it, and @a2ui/lit for v0.9; both are
    vendored static files of the app, a2ui/static/a2ui/vendor/). A page
    with an import map of its own merges ``a2ui.web.importmap.build_import_map()`` into it and
    passes ``import_map=False``; ``v09=False`` only turns v0.9 surfaces off.

    ``agent`` names the agent this client talks to (default: ``A2UI['DEFAULT_AGENT']``, or the
    only active agent). A name that is not an active agent shows a message instead of a client.

    ``chat=True`` shows the conversation (the chat box) from the start, so the person can write
    first to an agent that has pushed no activity; by default it appears with the session's
    first activity.

    ``logout_url`` puts a "Log out" button (a POST form) in the client's bar.
    """
    request = _request(context)
    if agent is not None and not Agent.objects.filter(name=agent, is_active=True).exists():
        return {"unknown_agent": str(agent), "stylesheet": static("a2ui/client/a2ui.css")}
    return {
        "agent": agent or "",
        "nonce": csp.get_nonce(request),
        "import_map": a2ui_import_map(context) if import_map else "",
        "csrf_token": get_token(request) if request is not None else "",
        "token_url": token_url or _token_url(),
        "ws_path": ws_path,
        "title": title,
        "client_version": CLIENT_VERSION,
        "v09": bool(v09),
        "chat": bool(chat),
        "stylesheet": static("a2ui/client/a2ui.css"),
        "module": static("a2ui/client/main.js"),
        "modules": [static(path) for path in a2ui_settings.CLIENT_MODULES or []],
        "logout_url": logout_url,
        "agent_name": _agent_name(agent),
        "language": translation.get_language() or settings.LANGUAGE_CODE,
        "direction": "rtl" if translation.get_language_bidi() else "ltr",
        "i18n": i18n.client_catalog(),
        "catalogs": _custom_catalogs() if v09 else [],
    }
