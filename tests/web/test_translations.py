"""The person's language (docs/client.md, "Languages"): every string the client shows goes
through gettext and is in the app's djangojs catalog; the shipped French catalogs are complete
and their compiled .mo files match the .po files (they ship in the wheel: no msgfmt needed at
install); the page embeds the catalog of the request's language; a person's socket speaks the
language its handshake asked for."""

import gettext
import json
import re
from pathlib import Path

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import translation

from a2ui.web import i18n

APP = Path(__file__).resolve().parents[2] / "a2ui"
CLIENT = APP / "static" / "a2ui" / "client"
LOCALE = APP / "locale"
LANGUAGES = sorted(p.name for p in LOCALE.iterdir() if p.is_dir())


def read_po(path):
    """{msgid: msgstr} of a .po file (no plural forms: the app has none)."""
    entries, key, current, msgid = {}, None, None, None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if key == "msgstr" and not line.startswith('"'):  # the entry ends
            entries[msgid] = "".join(json.loads(part) for part in current)
            key, current = None, None
        if line.startswith("msgid "):
            key, current = "msgid", [line[6:]]
        elif line.startswith("msgstr "):
            msgid = "".join(json.loads(part) for part in current)
            key, current = "msgstr", [line[7:]]
        elif line.startswith('"') and current is not None:
            current.append(line)
    return entries


def client_strings():
    """Every literal passed to gettext (``_``) in the client's own modules."""
    found = set()
    for path in CLIENT.glob("*.js"):
        source = path.read_text(encoding="utf-8")
        found |= {m.group(2) for m in re.finditer(r"\b_\((['\"])((?:(?!\1).)*)\1\)", source)}
    return found


def test_french_is_shipped():
    assert "fr" in LANGUAGES


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_each_catalog_is_complete_and_compiled(language, domain):
    po = LOCALE / language / "LC_MESSAGES" / f"{domain}.po"
    entries = read_po(po)
    assert "" in entries  # the header
    untranslated = [k for k, v in entries.items() if k and not v]
    assert untranslated == []
    with open(po.with_suffix(".mo"), "rb") as fh:
        compiled = gettext.GNUTranslations(fh)
    for msgid, msgstr in entries.items():
        if msgid:
            assert compiled.gettext(msgid) == msgstr, msgid  # the .mo is the .po, compiled


def test_every_client_string_is_in_the_catalog():
    """A string the client shows through gettext but that makemessages has not collected
    would stay English in every language."""
    catalog = read_po(LOCALE / "fr" / "LC_MESSAGES" / "djangojs.po")
    missing = sorted(client_strings() - set(catalog))
    assert missing == [], "run makemessages -d djangojs (docs/client.md, 'Languages')"


def render_client(language):
    request = RequestFactory().get("/a2ui/")
    with translation.override(language):
        return Template("{% load a2ui %}{% a2ui_client %}").render(Context({"request": request}))


@pytest.mark.django_db
def test_the_page_embeds_the_catalog_of_its_language():
    html = render_client("fr")
    assert 'lang="fr"' in html and 'dir="ltr"' in html
    start = html.index('<script id="a2ui-i18n" type="application/json">')
    body = html[html.index(">", start) + 1: html.index("</script>", start)]
    data = json.loads(body)
    assert data["catalog"]["Send"] == "Envoyer"
    assert data["plural"] == "(n > 1)"
    assert "Votre consentement" in html  # the template's own strings
    english = render_client("en")
    assert "Your consent" in english and 'lang="en"' in english
    assert 'dir="rtl"' in render_client("ar")


def test_a_socket_speaks_the_language_of_its_handshake(settings):
    settings.LANGUAGES = [("en", "English"), ("fr", "Français")]

    def scope(**headers):
        return {"headers": [(k.replace("_", "-").encode(), v.encode())
                            for k, v in headers.items()]}

    assert i18n.scope_language(scope(accept_language="fr-CA,fr;q=0.9,en;q=0.5")) == "fr"
    assert i18n.scope_language(scope(accept_language="de, en;q=0.5")) == "en"
    assert i18n.scope_language(scope()) == settings.LANGUAGE_CODE
    # Django's language cookie wins over the header.
    assert i18n.scope_language(scope(cookie="a=b; django_language=fr",
                                     accept_language="en")) == "fr"


def test_server_texts_for_the_person_follow_the_language():
    from a2ui.consent import choices as consent

    with translation.override("fr"):
        (described,) = consent.describe(["data_collection"])
        assert described["description"].startswith("L’agent peut recueillir")
        (unknown,) = consent.describe(["newsletter"])
        assert unknown["description"] == "L’agent demande votre consentement : newsletter."
