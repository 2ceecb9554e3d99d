"""Settings for the a2ui project.

Nothing configured gives the embedded defaults a newcomer needs (SQLite, the in-memory channel
layer, a generated development secret key). Production configures the real parts through the
environment: DATABASE_URL (PostgreSQL, with psycopg 3's connection pool) and REDIS_URL (the
channels-redis layer and the Django cache, shared by every Daphne process).
"""

import os
import secrets
import warnings
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _secret_key():
    """Use DJANGO_SECRET_KEY, else a development key kept in .secret_key, with a warning.

    The key is kept in a file so that several local Daphne processes (and restarts) verify each
    other's stream tokens; it is never used when DJANGO_SECRET_KEY is set.
    """
    key = os.environ.get("DJANGO_SECRET_KEY")
    if key:
        return key
    path = BASE_DIR / ".secret_key"
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if not key:
        key = secrets.token_urlsafe(50)
        try:
            path.write_text(key)
        except OSError:
            pass
    if not os.environ.get("A2UI_SECRET_KEY_WARNED"):
        # Once per command: the processes it starts (Daphne under a2ui_demo) inherit the mark.
        os.environ["A2UI_SECRET_KEY_WARNED"] = "1"
        warnings.warn(
            "DJANGO_SECRET_KEY is not set: using a generated development key. "
            "Set it in production.",
            RuntimeWarning,
            stacklevel=1,
        )
    return key


SECRET_KEY = _secret_key()
DEBUG = _env_flag("DJANGO_DEBUG")
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "a2ui",
]

MIDDLEWARE = [
    # First: a view failed by an unreachable database or Redis answers a JSON 503.
    "a2ui.middleware.ServiceUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # /static/ (when A2UI_SERVE_STATIC is off): hashed, compressed, cached for a year once
    # collected (DJANGO_STATIC_COLLECTED), from the finders with short-lived caching otherwise.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The person's language (the language cookie, then Accept-Language, among LANGUAGES).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "a2ui_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = None
ASGI_APPLICATION = "a2ui_project.asgi.application"

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Under ASGI, Django advises the backend's pool instead of CONN_MAX_AGE. With the pool,
        # CONN_HEALTH_CHECKS makes it check a connection as it hands it out (one empty
        # statement): one the server closed (a restart, pg_terminate_backend) is replaced
        # instead of failing a request (docs/operations.md, "Database connections").
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": int(os.environ.get("DB_POOL_MIN", "1")),
            "max_size": int(os.environ.get("DB_POOL_MAX", "10")),
            # How long a request waits for a connection (all in use, or PostgreSQL away).
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
            # How long the pool retries one lost connection, backing off (1 s, 2 s, 4 s...),
            # before it gives up on it; the next request that finds the pool empty then connects
            # at once. Short, so a database that is back is used within seconds, not after the
            # minute of backoff a long outage would have grown (psycopg_pool's default: 300).
            "reconnect_timeout": float(os.environ.get("DB_POOL_RECONNECT_TIMEOUT", "5")),
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if (REDIS_URL and os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw")
        and "+sentinel://" not in REDIS_URL
        and not os.environ.get("A2UI_TEST_WORKER_REDIS")):
    # The test suite under pytest-xdist (`make test`): each worker flushes and counts in a Redis
    # database of its own, the URL's plus the worker's number, as pytest-django gives it a
    # database of its own. Once: the processes a worker starts (live servers, which claim a
    # database of their own, tests/live/conftest.py; the demo) inherit the marker and keep the
    # URL they are given.
    from urllib.parse import urlsplit as _split

    _worker = int(os.environ["PYTEST_XDIST_WORKER"][2:])
    _url = _split(REDIS_URL)
    _db = int(_url.path.strip("/") or 0) + _worker
    REDIS_URL = os.environ["REDIS_URL"] = _url._replace(path=f"/{_db}").geturl()
    os.environ["A2UI_TEST_WORKER_REDIS"] = REDIS_URL
if REDIS_URL:
    # The default layer is a2ui's (a2ui.apps.default_channel_layers): Redis PUBLISH/SUBSCRIBE,
    # one round trip per group send, none per receive, 3-6x the core layer's push rate
    # (docs/performance.md), retrying once on a dead connection. A2UI_CHANNEL_LAYER=core for
    # the list-based layer.
    if os.environ.get("A2UI_CHANNEL_LAYER", "pubsub") != "pubsub":
        from a2ui.apps import redis_layer_host

        CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [redis_layer_host(REDIS_URL)], "capacity": 1000,
                           "expiry": 60},
            }
        }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            # A list: Django splits a string on commas (a Sentinel URL lists its sentinels).
            "LOCATION": [REDIS_URL],
            "KEY_PREFIX": "a2ui",
            # Sentinel URLs (redis+sentinel://) as well as one server's (a2ui.infra.redisurl)
            "OPTIONS": {"pool_class": "a2ui.infra.redisurl.CachePool"},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
# The languages the pages follow: the app ships French; Arabic shows the right-to-left layout
# (Django's own strings translated, the app's in English).
LANGUAGES = [("en", "English"), ("fr", "Français"), ("ar", "العربية")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT") or BASE_DIR / "staticfiles")
# Production: `manage.py collectstatic` writes hashed names (app.3f2a1c.js) and their .gz and .br
# next to them; WhiteNoise serves those with `Cache-Control: max-age=31536000, immutable` and the
# encoding the browser accepts. Without it (development) the files come from the finders,
# uncompressed, revalidated after WHITENOISE_MAX_AGE (60 s).
STATIC_COLLECTED = _env_flag("DJANGO_STATIC_COLLECTED")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "a2ui.web.storage.CompressedManifestStaticFilesStorage"
        if STATIC_COLLECTED else "django.contrib.staticfiles.storage.StaticFilesStorage",
    },
}
WHITENOISE_USE_FINDERS = not STATIC_COLLECTED
WHITENOISE_AUTOREFRESH = not STATIC_COLLECTED
# The example site's own files: templates/ (TEMPLATES DIRS: its base layout, the client page
# that extends it, the login page) and static/ (their stylesheet). The a2ui app needs neither.
STATICFILES_DIRS = [BASE_DIR / "static"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "a2ui_web:client"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "a2ui.authentication.RejectStreamTokenAuthentication",
        "a2ui.authentication.AgentKeyAuthentication",
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "a2ui.api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "a2ui",
    "DESCRIPTION": "Agent-to-UI server: stream tokens, session messages, surfaces, consents.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the installed sidecar package: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The endpoints drf-spectacular does not see (the AG-UI run, SSE streams, /mcp, probes),
    # for `manage.py spectacular` too (the app's /api/schema/ adds them itself).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "a2ui.api.schema.add_plain_views"],
}

A2UI = {
    "REDIS_URL": REDIS_URL or None,
    "SITE_TITLE": "A2UI example",
    # Daphne serves /static/ through the finders in development; once collected, WhiteNoise does.
    "SERVE_STATIC": _env_flag("A2UI_SERVE_STATIC", not STATIC_COLLECTED),
}

# One handler, on the root logger: every record is written once. (A handler on "a2ui" or
# "django" as well would write each of their records twice under Daphne, whose CLI gives the root
# logger a handler of its own before this config replaces it.)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Django's security events (a refused Host header...) as one WARNING line, no traceback.
    "filters": {"refused_request": {"()": "a2ui.logfilters.RefusedRequest"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["refused_request"]}},
    "root": {"handlers": ["console"], "level": "INFO"},
    "loggers": {
        "a2ui": {"level": os.environ.get("A2UI_LOG_LEVEL", "INFO")},
        "django": {"level": "WARNING"},
    },
}

# The example project's deploy checks (a development SECRET_KEY): manage.py check --deploy.
from a2ui_project import checks  # noqa: E402,F401
