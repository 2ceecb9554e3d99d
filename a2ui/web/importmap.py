"""The import map that loads the official ``@a2ui/lit`` v0.9 renderer and markdown-it from node_modules.

No bundler and no CDN: the browser resolves the renderer's bare imports (``lit``, ``zod``,
``@a2ui/web_core/v0_9``...) through an ``<script type="importmap">`` whose targets are files of
``node_modules`` served by Django staticfiles under ``VENDOR_PREFIX`` (see
``a2ui.staticfinders.NodeModulesFinder``).

``IMPORTS`` maps each bare specifier to a path relative to ``node_modules``; entries ending in
``/`` are prefix mappings. ``reachable_files`` walks the module graph from ``ENTRY_POINTS`` so the
static finder exposes only the files the browser can actually request.
"""

import json
import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings

VENDOR_PREFIX = "a2ui-vendor"

# bare specifier -> path inside node_modules (a trailing "/" maps a whole package folder).
IMPORTS = {
    "@a2ui/lit/v0_9": "@a2ui/lit/src/v0_9/index.js",
    "@a2ui/web_core/v0_9": "@a2ui/web_core/src/v0_9/index.js",
    "@a2ui/web_core/v0_9/basic_catalog": "@a2ui/web_core/src/v0_9/basic_catalog/index.js",
    "@lit/context": "@lit/context/index.js",
    "@lit/reactive-element": "@lit/reactive-element/reactive-element.js",
    "@lit/reactive-element/": "@lit/reactive-element/",
    "@preact/signals-core": "@preact/signals-core/dist/signals-core.module.js",
    "date-fns": "date-fns/index.js",
    "lit": "lit/index.js",
    "lit/": "lit/",
    "lit-element/": "lit-element/",
    "lit-html": "lit-html/lit-html.js",
    "lit-html/": "lit-html/",
    # The web client's Markdown parser: markdown-it's self-contained browser build.
    "markdown-it": "markdown-it/dist/browser/markdown-it.esm.min.mjs",
    "zod": "zod/index.js",
    "zod/v3": "zod/v3/index.js",
    "zod-to-json-schema": "zod-to-json-schema/dist/esm/index.js",
}

# What the client page imports; everything else is reached from these.
ENTRY_POINTS = ("@a2ui/lit/v0_9", "@a2ui/web_core/v0_9", "markdown-it")

# npm packages (folders of node_modules) the import map points into.
PACKAGES = tuple(
    sorted(
        {
            "/".join(t.split("/")[:2]) if t.startswith("@") else t.split("/")[0]
            for t in IMPORTS.values()
        }
    )
)

# Files every exposed package also ships, for licence compliance.
LICENSE_NAMES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "license", "license.md")

_COMMENT_BLOCK = re.compile(r"/\*.*?\*/", re.S)
_COMMENT_LINE = re.compile(r"^\s*//.*$", re.M)
_IMPORT = re.compile(
    r"""(?:\bimport|\bexport)\s*(?:[\w*{}\s,$]*?\s*from\s*)?["']([^"']+)["']"""
    r"""|\bimport\(\s*["']([^"']+)["']\s*\)"""
)


def node_modules_dir():
    """``A2UI["NODE_MODULES_DIR"]``, default ``BASE_DIR / "node_modules"``."""
    try:
        from a2ui.conf import a2ui_settings

        configured = a2ui_settings.NODE_MODULES_DIR
    except (ImportError, AttributeError):
        configured = getattr(settings, "A2UI", {}).get("NODE_MODULES_DIR")
    if not configured:
        configured = Path(settings.BASE_DIR) / "node_modules"
    return Path(configured)


def vendor_base_url():
    """URL of the vendor folder: STATIC_URL + VENDOR_PREFIX + "/" (unhashed on purpose).

    Module files import each other by relative URL, so they must be served under their plain
    names; ``ManifestStaticFilesStorage`` keeps the originals next to the hashed copies.
    """
    static_url = settings.STATIC_URL or "/static/"
    if not static_url.startswith(("/", "http://", "https://")):
        static_url = "/" + static_url
    if not static_url.endswith("/"):
        static_url += "/"
    return f"{static_url}{VENDOR_PREFIX}/"


def build_import_map(base_url=None):
    """The import map as a dict: ``{"imports": {specifier: url}}``."""
    base = base_url if base_url is not None else vendor_base_url()
    return {"imports": {spec: base + target for spec, target in IMPORTS.items()}}


def import_map_json(base_url=None):
    """Compact JSON of the import map, safe to put inside a ``<script>`` element."""
    text = json.dumps(build_import_map(base_url), separators=(",", ":"), sort_keys=True)
    # No "</script" or "<!--" can appear in URLs built from settings, but make it impossible.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _resolve_bare(spec, root):
    """The file a bare specifier maps to under the import map, or None."""
    if spec in IMPORTS and not spec.endswith("/"):
        return root / IMPORTS[spec]
    best = ""
    for key in IMPORTS:
        if key.endswith("/") and spec.startswith(key) and len(key) > len(best):
            best = key
    if best:
        return root / (IMPORTS[best] + spec[len(best) :])
    return None


def _specifiers(text):
    text = _COMMENT_LINE.sub("", _COMMENT_BLOCK.sub("", text))
    for match in _IMPORT.finditer(text):
        yield match.group(1) or match.group(2)


def unresolved_specifiers(root=None):
    """Bare specifiers imported by reachable modules that the import map does not resolve."""
    return _walk(Path(root) if root else node_modules_dir())[1]


def reachable_files(root=None):
    """Paths (relative to node_modules, "/"-separated) of every module the entry points reach."""
    return _walk(Path(root) if root else node_modules_dir())[0]


@lru_cache(maxsize=4)
def _walk_cached(root, mtime):
    root = Path(root)
    seen = set()
    missing = set()
    stack = [_resolve_bare(spec, root) for spec in ENTRY_POINTS]
    while stack:
        path = stack.pop()
        if path is None:
            continue
        try:
            resolved = path.resolve()
            rel = resolved.relative_to(root.resolve()).as_posix()
        except (OSError, ValueError):
            continue
        if rel in seen or not resolved.is_file():
            continue
        seen.add(rel)
        if resolved.suffix not in (".js", ".mjs"):
            continue
        text = resolved.read_text(encoding="utf-8", errors="replace")
        for spec in _specifiers(text):
            if spec.startswith(("./", "../", "/")):
                stack.append(resolved.parent / spec)
            elif ":" in spec:
                continue
            else:
                target = _resolve_bare(spec, root)
                if target is None:
                    missing.add(spec)
                stack.append(target)
    return frozenset(seen), frozenset(missing)


def _walk(root):
    try:
        mtime = (root / ".package-lock.json").stat().st_mtime
    except OSError:
        try:
            mtime = root.stat().st_mtime
        except OSError:
            return frozenset(), frozenset()
    return _walk_cached(str(root), mtime)
