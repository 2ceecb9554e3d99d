"""The person's language: the web client's catalog, and the language of a person's socket.

The page follows Django's active language (``LocaleMiddleware``: the language cookie, then
``Accept-Language``, within ``LANGUAGES``). ``{% a2ui_client %}`` embeds the ``djangojs``
catalog of that language (the app's, plus those of ``A2UI['CLIENT_I18N_PACKAGES']``, a host
project's apps with strings of their own components) as JSON in the page, read by the client's
``i18n.js``: no extra request, no script for the CSP to allow. A person's WebSocket has no
middleware: :func:`scope_language` reads the same cookie and header from the handshake, so the
few texts the server sends a person (consent prompts, an operator's close) are in the page's
language too.
"""

from django.conf import settings
from django.utils import translation
from django.utils.translation import trans_real
from django.views.i18n import JavaScriptCatalog

from a2ui.conf import a2ui_settings

_catalogs = {}  # (language, packages) -> {"catalog", "plural"}


def packages():
    return ["a2ui", *[str(p) for p in (a2ui_settings.CLIENT_I18N_PACKAGES or [])]]


def client_catalog(language=None):
    """``{"catalog": {msgid: str or [plural forms]}, "plural": expression or None}`` for
    ``language`` (default: the active one); cached per language."""
    language = language or translation.get_language() or settings.LANGUAGE_CODE
    names = tuple(packages())
    key = (language, names)
    found = _catalogs.get(key)
    if found is None:
        view = JavaScriptCatalog()
        view.translation = trans_real.DjangoTranslation(
            language, domain="djangojs", localedirs=view.get_paths(list(names)))
        found = _catalogs[key] = {"catalog": view.get_catalog(), "plural": view.get_plural()}
    return found


def scope_language(scope):
    """The language a person's socket speaks: Django's language cookie, else the handshake's
    ``Accept-Language``, among ``LANGUAGES``; else ``LANGUAGE_CODE``."""
    headers = dict(scope.get("headers") or ())
    cookie_name = settings.LANGUAGE_COOKIE_NAME.encode()
    for part in headers.get(b"cookie", b"").split(b";"):
        name, _, value = part.strip().partition(b"=")
        if name == cookie_name:
            try:
                return trans_real.get_supported_language_variant(value.decode("latin-1"))
            except LookupError:
                break
    accept = headers.get(b"accept-language", b"").decode("latin-1")[:500]
    for code, _quality in trans_real.parse_accept_lang_header(accept):
        if code == "*":
            break
        try:
            return trans_real.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE
