"""A staticfiles finder that exposes the web client's npm dependencies, and nothing else.

Add ``"a2ui.staticfinders.NodeModulesFinder"`` to ``STATICFILES_FINDERS``. The files are served
under ``a2ui-vendor/<package>/...`` (``a2ui.web.importmap.VENDOR_PREFIX``). Only the modules the
import map can reach from its entry points (``@a2ui/lit`` v0.9, markdown-it), plus the packages' licence files,
are found or listed, so ``collectstatic`` copies a few hundred files instead of all of
``node_modules``.
"""

import os
from pathlib import Path

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder
from django.core import checks
from django.core.files.storage import FileSystemStorage

from a2ui.web import importmap


class _PrefixedStorage(FileSystemStorage):
    """A storage rooted at node_modules whose files collectstatic puts under the vendor prefix."""

    def __init__(self, location):
        super().__init__(location=location)
        self.prefix = importmap.VENDOR_PREFIX


class NodeModulesFinder(BaseFinder):
    def __init__(self, app_names=None, *args, **kwargs):
        super().__init__(*args, **kwargs)

    @property
    def root(self):
        return importmap.node_modules_dir()

    def _allowed(self):
        root = self.root
        files = set(importmap.reachable_files(root))
        for package in importmap.PACKAGES:
            for name in importmap.LICENSE_NAMES:
                if (root / package / name).is_file():
                    files.add(f"{package}/{name}")
        return files

    def check(self, **kwargs):
        root = self.root
        if not (root / "@a2ui" / "lit" / "package.json").is_file():
            return [
                checks.Warning(
                    f"@a2ui/lit is not installed in {root}: the web client cannot load v0.9 surfaces.",
                    hint="Run `npm ci` in the project root, or set A2UI['NODE_MODULES_DIR'].",
                    id="a2ui.W101",
                )
            ]
        absent = [
            spec
            for spec in importmap.ENTRY_POINTS
            if not (root / importmap.IMPORTS[spec]).is_file()
        ]
        if absent:
            return [
                checks.Warning(
                    f"{', '.join(absent)} not installed in {root}: the web client cannot load.",
                    hint="Run `npm ci` in the project root, or set A2UI['NODE_MODULES_DIR'].",
                    id="a2ui.W101",
                )
            ]
        missing = importmap.unresolved_specifiers(root)
        if missing:
            return [
                checks.Warning(
                    "The import map does not resolve: " + ", ".join(sorted(missing)),
                    hint="Update a2ui.web.importmap.IMPORTS for the installed @a2ui/lit.",
                    id="a2ui.W102",
                )
            ]
        return []

    def find(self, path, find_all=False, **kwargs):
        find_all = find_all or kwargs.get("all", False)
        prefix = importmap.VENDOR_PREFIX + "/"
        path = path.replace(os.sep, "/")
        if not path.startswith(prefix):
            return []
        rel = path[len(prefix) :]
        if rel in self._allowed():
            match = str(Path(self.root, *rel.split("/")))
            return [match] if find_all else match
        return []

    def list(self, ignore_patterns):
        root = self.root
        if not root.is_dir():
            return
        storage = _PrefixedStorage(str(root))
        for rel in sorted(self._allowed()):
            if ignore_patterns and utils.matches_patterns(rel, ignore_patterns):
                continue
            yield rel, storage
