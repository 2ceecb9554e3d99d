"""The web client's assets (tier 1): the vendored bundle (a2ui/static/a2ui/vendor/, built by
``make vendor`` and committed) is current with package-lock.json, complete, licensed, served by
the default static finders, and the template tag emits an import map pointing at it.

No node_modules and no esbuild needed: these tests read the committed files only.
"""

import hashlib
import json
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.checks import run_checks
from django.template import Context, Template
from django.test import RequestFactory, override_settings

from a2ui.web import importmap

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "a2ui" / "static" / "a2ui" / "vendor"
CLIENT = ROOT / "a2ui" / "static" / "a2ui" / "client"
LOCK = json.loads((ROOT / "package-lock.json").read_text())["packages"]
MANIFEST = json.loads((VENDOR / "manifest.json").read_text())
STALE = "the committed bundle is stale: run `make vendor` and commit a2ui/static/a2ui/vendor/"


def test_bundle_matches_package_lock_versions():
    # Every bundled package at the version package-lock.json pins...
    for name, version in MANIFEST["packages"].items():
        assert LOCK.get(f"node_modules/{name}", {}).get("version") == version, (name, STALE)
    # ... every runtime dependency of package.json bundled, and esbuild the pinned one.
    for name in LOCK[""]["dependencies"]:
        assert name in MANIFEST["packages"], (name, STALE)
    assert MANIFEST["esbuild"] == LOCK["node_modules/esbuild"]["version"], STALE
    assert "esbuild" in LOCK[""]["devDependencies"]


def test_bundle_files_are_the_built_ones_with_their_licences():
    on_disk = {p.name for p in VENDOR.glob("*.js")}
    assert on_disk == set(MANIFEST["files"]), STALE
    for name, digest in MANIFEST["files"].items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, (name, STALE)
    assert set(MANIFEST["licenses"]) == set(MANIFEST["packages"])
    for name, path in MANIFEST["licenses"].items():
        assert (VENDOR / path).stat().st_size > 0, name
    assert importmap.missing_files() == []


def test_bundle_is_a_handful_of_modules_without_eval():
    # The v0.9 renderer, markdown-it, Chart.js and highlight.js in a few files, not the ~370 modules of node_modules.
    assert len(MANIFEST["files"]) <= 12
    for name in MANIFEST["files"]:
        text = (VENDOR / name).read_text()
        # Nothing the strict CSP (no 'unsafe-eval') would refuse.
        assert not re.search(r"\beval\(|\bnew Function\b|\bFunction\(", text), name
        # Imports only the bundle's own files, by relative URL: no bare specifier, no CDN. (Not
        # preceded by a quote: highlight.js's keyword lists hold strings like "from","import".)
        for spec in re.findall(r"""(?<!["'\w$.])(?:from|import)\s*["']([^"']+)["']""", text):
            assert spec.startswith("./") and (VENDOR / spec[2:]).is_file(), (name, spec)


def test_every_bare_import_of_the_client_is_an_entry_of_the_bundle():
    bare = set()
    for path in CLIENT.glob("*.js"):
        source = path.read_text()
        for spec in re.findall(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"'./][^"']*)["']""",
                               source):
            bare.add(spec)
        # Loaded on demand through a constant (`import(CHART)`), which collectstatic's module
        # rewriting leaves alone: the constant's value is the specifier.
        for const in re.findall(r"\bimport\((\w+)\)", source):
            value = re.search(rf"""\bconst {const} = ["']([^"']+)["']""", source)
            assert value, (path.name, const)
            bare.add(value.group(1))
    assert bare == {"@a2ui/lit/v0_9", "@a2ui/web_core/v0_9", "@lit/context", "lit", "markdown-it",
                    "a2ui-vendor/chart", "a2ui-vendor/highlight"}
    assert bare == set(MANIFEST["entries"])


def test_import_map_points_at_vendored_static_files_found_by_default_finders(settings):
    settings.STATIC_URL = "/static/"
    imports = importmap.build_import_map()["imports"]
    assert imports["markdown-it"] == "/static/a2ui/vendor/markdown-it.js"
    # The bundle's entries, and the client's API for a host project's own components.
    assert set(imports) == set(MANIFEST["entries"]) | {"a2ui/client"}
    assert imports["a2ui/client"] == "/static/a2ui/client/api.js"
    # The default finders of a fresh project (no finder of ours) find every entry and chunk.
    with override_settings(STATICFILES_FINDERS=[
            "django.contrib.staticfiles.finders.FileSystemFinder",
            "django.contrib.staticfiles.finders.AppDirectoriesFinder"]):
        finders.get_finder.cache_clear()
        try:
            for name in [*MANIFEST["files"], *MANIFEST["licenses"].values()]:
                assert finders.find(f"a2ui/vendor/{name}"), name
        finally:
            finders.get_finder.cache_clear()


def test_import_map_uses_the_static_storage_urls(settings):
    """{% static %} URLs: ManifestStaticFilesStorage's hashed names once collectstatic ran."""
    settings.STATIC_URL = "/assets/"
    imports = importmap.build_import_map()["imports"]
    assert imports["lit"] == "/assets/a2ui/vendor/lit.js"
    assert imports["@a2ui/lit/v0_9"] == "/assets/a2ui/vendor/a2ui-lit-v0_9.js"


def test_missing_bundle_is_a_system_check_warning(monkeypatch, tmp_path):
    assert [m for m in run_checks() if m.id == "a2ui.W101"] == []
    (tmp_path / "manifest.json").write_text((VENDOR / "manifest.json").read_text())
    monkeypatch.setattr(importmap, "VENDOR_PATH", tmp_path)
    warnings = [m for m in run_checks() if m.id == "a2ui.W101"]
    assert len(warnings) == 1
    assert "markdown-it.js" in warnings[0].msg


def render_client(options=""):
    request = RequestFactory().get("/a2ui/")
    return Template("{% load a2ui %}{% a2ui_client " + options + " %}").render(
        Context({"request": request}))


@pytest.mark.django_db  # the tag names the page's agent (chat labels)
def test_the_client_tag_emits_the_import_map_unless_told_not_to():
    for options in ("", "v09=False"):
        html = render_client(options)
        start = html.index('<script type="importmap"')
        body = html[html.index(">", start) + 1: html.index("</script>", start)]
        imports = json.loads(body)["imports"]
        assert imports["markdown-it"].endswith("/a2ui/vendor/markdown-it.js"), options
        assert imports["@a2ui/lit/v0_9"].endswith("/a2ui/vendor/a2ui-lit-v0_9.js"), options
    assert 'data-v09="0"' in render_client("v09=False")
    assert '<script type="importmap"' not in render_client("import_map=False")


#: collectstatic of the app's files only: the other apps' (Swagger UI's 30 MB above all) would
#: take minutes to compress and test nothing of ours.
ONLY_THE_APPS = ("-i", "drf_spectacular_sidecar", "-i", "admin", "-i", "rest_framework",
                 "-i", "site")


def test_collectstatic_with_manifest_storage_serves_the_map_and_its_chunks(settings, tmp_path):
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}}
    call_command("collectstatic", "--noinput", *ONLY_THE_APPS, verbosity=0)
    imports = importmap.build_import_map()["imports"]
    assert re.fullmatch(r"/static/a2ui/client/api\.[0-9a-f]{12}\.js", imports.pop("a2ui/client"))
    for spec, url in imports.items():
        # Hashed names (cacheable forever), each file present in STATIC_ROOT...
        assert re.fullmatch(r"/static/a2ui/vendor/[\w-]+\.[0-9a-f]{12}\.js", url), (spec, url)
        entry = tmp_path / url.removeprefix("/static/")
        # ... and every chunk it imports by relative URL present beside it.
        for rel in re.findall(r"""(?:\bfrom|\bimport)\s*["']\./([^"']+)["']""",
                              entry.read_text()):
            assert (entry.parent / rel).is_file(), (spec, rel)


def test_collectstatic_with_the_apps_storage_hashes_every_module_of_the_first_page(
        settings, tmp_path):
    """a2ui.web.storage: the client's static imports point at hashed names (cacheable forever),
    bare specifiers loaded on demand are left to the import map, every file has .br and .gz."""
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "a2ui.web.storage.CompressedManifestStaticFilesStorage"}}
    call_command("collectstatic", "--noinput", *ONLY_THE_APPS, verbosity=0)
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    app = tmp_path / manifest["a2ui/client/app.js"]
    imported = re.findall(r"""\bfrom\s*["']\./([^"']+)["']""", app.read_text())
    assert imported and all(re.fullmatch(r"[\w-]+\.[0-9a-f]{12}\.js", name) for name in imported)
    for name in imported:
        assert (app.parent / name).is_file(), name
    for module in ("chart", "highlight", "markdown", "v09"):
        text = (tmp_path / manifest[f"a2ui/client/{module}.js"]).read_text()
        assert "import(" in text and "a2ui/client/a2ui-vendor" not in text, module
    for name in ("a2ui/client/app.js", "a2ui/vendor/markdown-it.js", "a2ui/client/a2ui.css"):
        for suffix in (".br", ".gz"):
            assert (tmp_path / (manifest[name] + suffix)).is_file(), (name, suffix)
