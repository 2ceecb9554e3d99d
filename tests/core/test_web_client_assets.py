"""The web client's assets (tier 1): the import map serves markdown-it from node_modules, the
static finder exposes it, and the template tag emits the map whenever the client needs it.

Needs ``npm ci`` (``make install``) like the client itself; skipped without node_modules.
"""

import json

import pytest
from django.template import Context, Template
from django.test import RequestFactory

from a2ui.staticfinders import NodeModulesFinder
from a2ui.web import importmap

MARKDOWN_IT = "markdown-it/dist/browser/markdown-it.esm.min.mjs"

pytestmark = pytest.mark.skipif(
    not (importmap.node_modules_dir() / "markdown-it" / "package.json").is_file(),
    reason="node_modules not installed (npm ci)",
)


def test_markdown_it_is_in_the_import_map_and_served_from_node_modules():
    assert importmap.build_import_map("/s/")["imports"]["markdown-it"] == "/s/" + MARKDOWN_IT
    assert MARKDOWN_IT in importmap.reachable_files()
    assert importmap.unresolved_specifiers() == frozenset()
    finder = NodeModulesFinder()
    assert finder.check() == []
    found = finder.find(f"{importmap.VENDOR_PREFIX}/{MARKDOWN_IT}")
    assert found and found.endswith("markdown-it.esm.min.mjs")
    listed = {path for path, _ in finder.list([])}
    assert MARKDOWN_IT in listed and "markdown-it/LICENSE" in listed
    # Only what the map reaches: not markdown-it's Node build or its CLI.
    assert finder.find(f"{importmap.VENDOR_PREFIX}/markdown-it/bin/markdown-it.mjs") == []


def test_missing_markdown_it_is_a_system_check_warning(tmp_path, settings):
    (tmp_path / "@a2ui" / "lit").mkdir(parents=True)
    (tmp_path / "@a2ui" / "lit" / "package.json").write_text("{}")
    settings.A2UI = {**getattr(settings, "A2UI", {}), "NODE_MODULES_DIR": tmp_path}
    assert importmap.node_modules_dir() == tmp_path
    warnings = NodeModulesFinder().check()
    assert [w.id for w in warnings] == ["a2ui.W101"]
    assert "markdown-it" in warnings[0].msg


def render_client(options=""):
    request = RequestFactory().get("/a2ui/")
    return Template("{% load a2ui %}{% a2ui_client " + options + " %}").render(
        Context({"request": request}))


def test_the_client_tag_emits_the_import_map_unless_told_not_to():
    for options in ("", "v09=False"):
        html = render_client(options)
        start = html.index('<script type="importmap"')
        body = html[html.index(">", start) + 1: html.index("</script>", start)]
        assert "markdown-it" in json.loads(body)["imports"], options
    assert 'data-v09="0"' in render_client("v09=False")
    assert '<script type="importmap"' not in render_client("import_map=False")
