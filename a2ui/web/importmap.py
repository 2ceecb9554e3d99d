"""The import map that loads the official ``@a2ui/lit`` v0.9 renderer and markdown-it.

Both ship inside the package: ``scripts/build-vendor.mjs`` (``make vendor``, a development tool
of this repository) bundles them with esbuild into ``a2ui/static/a2ui/vendor/`` (committed), one
ES module per bare specifier the client imports plus a few shared chunks. A host project needs no
npm, no node_modules and no extra static finder: the app's own static files are found by
``AppDirectoriesFinder`` and the map's URLs come from ``{% static %}``, so
``ManifestStaticFilesStorage`` and ``collectstatic`` work as for any other static file.

``manifest.json``, written by the build, names the entry files (``entries``: specifier -> file)
and the bundled package versions (checked against package-lock.json by a tier-1 test).
"""

import json
from functools import lru_cache
from pathlib import Path

from django.templatetags.static import static

VENDOR_DIR = "a2ui/vendor"  # under the app's static/ folder
VENDOR_PATH = Path(__file__).resolve().parent.parent / "static" / "a2ui" / "vendor"


@lru_cache(maxsize=1)
def manifest():
    """The build's manifest.json as a dict (``{}`` if the bundle is missing)."""
    try:
        return json.loads((VENDOR_PATH / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def entries():
    """Bare specifier -> static path (``a2ui/vendor/<file>``) of each bundled entry point."""
    return {spec: f"{VENDOR_DIR}/{name}" for spec, name in manifest().get("entries", {}).items()}


#: The client's public API (docs/client.md, "Your own components"): a host project's modules
#: import it by this specifier, so they share the client's own module instance.
CLIENT_API = "a2ui/client"
CLIENT_API_PATH = "a2ui/client/api.js"


def build_import_map():
    """The import map as a dict: ``{"imports": {specifier: static URL}}``: the vendored
    bundle's entries and the client's API."""
    imports = {spec: static(path) for spec, path in entries().items()}
    imports[CLIENT_API] = static(CLIENT_API_PATH)
    return {"imports": imports}


def import_map_json():
    """Compact JSON of the import map, safe to put inside a ``<script>`` element."""
    text = json.dumps(build_import_map(), separators=(",", ":"), sort_keys=True)
    # No "</script" or "<!--" can appear in URLs built from settings, but make it impossible.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def missing_files():
    """Files the manifest lists that are not on disk (a broken install or checkout)."""
    data = manifest()
    if not data:
        return ["manifest.json"]
    names = set(data.get("files", {})) | set(data.get("entries", {}).values())
    return sorted(name for name in names if not (VENDOR_PATH / name).is_file())
