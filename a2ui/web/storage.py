"""The static files storage for production: WhiteNoise's compressed manifest storage, with the
web client's ES module imports rewritten to hashed names.

``collectstatic`` with it writes every file under a content-hashed name (``app.3f2a1c9b0e4d.js``)
plus its ``.gz`` and ``.br``; WhiteNoise serves hashed names with
``Cache-Control: max-age=315360000, public, immutable`` and the encoding the browser accepts.
The client's modules import each other by relative URL (``import { App } from './app.js'``);
Django rewrites those static ``import``/``export ... from`` statements to the hashed names
(``support_js_module_import_aggregation``) so that the whole first page is immutable. Modules
loaded on demand with ``import('./x.js')`` keep their plain names (revalidated by WhiteNoise
after ``WHITENOISE_MAX_AGE``); bare specifiers go through the page's import map, whose URLs come
from ``{% static %}`` and are hashed.

    STORAGES = {"default": {...},
                "staticfiles": {"BACKEND": "a2ui.web.storage.CompressedManifestStaticFilesStorage"}}
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage as _WhiteNoiseStorage


class CompressedManifestStaticFilesStorage(_WhiteNoiseStorage):
    support_js_module_import_aggregation = True
