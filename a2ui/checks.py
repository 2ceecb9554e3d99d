"""System checks: bad A2UI settings stop start-up with a clear message, not a 500 later."""

from django.apps import apps
from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from a2ui.conf import DEFAULTS, defaults, positive_ints


def _check_positive_ints(user, known, names):
    errors = []
    for name in names:
        value = user.get(name, known[name])
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            errors.append(
                Error(
                    f"A2UI[{name!r}] must be a positive integer, got {value!r}.",
                    hint=f"Set A2UI[{name!r}] (default {known[name]!r}).",
                    id="a2ui.E002",
                )
            )
    return errors


def _check_consents(user):
    value = user.get("REQUIRED_CONSENTS", DEFAULTS["REQUIRED_CONSENTS"])
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, str) and v and len(v) <= 64 for v in value
    ):
        return [
            Error(
                "A2UI['REQUIRED_CONSENTS'] must be a list of consent type names.",
                hint='For example ["data_collection", "ui_interaction"].',
                id="a2ui.E003",
            )
        ]
    return []


#: Settings that must be positive numbers (seconds, fractions allowed).
POSITIVE_NUMBERS = ("METRICS_FLUSH_SECONDS", "HEALTH_CACHE_SECONDS",
                    "HEALTH_CHECK_TIMEOUT_SECONDS", "REPLAY_FLUSH_SECONDS",
                    "AGENT_PING_TIMEOUT_SECONDS")
#: Settings that must be numbers >= 0 (0: off).
NON_NEGATIVE_NUMBERS = ("AGENT_PING_SECONDS",)


def _check_flush(user):
    errors = []
    for name in POSITIVE_NUMBERS:
        value = user.get(name, DEFAULTS[name])
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            errors.append(Error(f"A2UI[{name!r}] must be a positive number.", id="a2ui.E004"))
    for name in NON_NEGATIVE_NUMBERS:
        value = user.get(name, DEFAULTS[name])
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            errors.append(Error(f"A2UI[{name!r}] must be a number, 0 or more (0: off).",
                                id="a2ui.E004"))
    return errors


def _check_catalogs(user):
    """Every A2UI['CATALOGS'] entry loads and compiles (a2ui.E005)."""
    value = user.get("CATALOGS", DEFAULTS["CATALOGS"])
    from django.core.exceptions import ImproperlyConfigured

    from a2ui.surfaces import build_registry

    try:
        build_registry(value)
    except ImproperlyConfigured as exc:
        return [Error(str(exc), hint="A2UI['CATALOGS'] lists dotted paths or JSON file paths of "
                      "catalogs shaped like the basic catalog.", id="a2ui.E005")]
    return []


def _check_component_types(user):
    """A2UI['COMPONENT_TYPES'] names and schemas compile (a2ui.E040)."""
    from a2ui.core.content.customtypes import DefinitionError
    from a2ui.surfaces.componenttypes import compile_setting

    try:
        compile_setting(user.get("COMPONENT_TYPES", DEFAULTS["COMPONENT_TYPES"]))
    except DefinitionError as exc:
        return [Error(f"A2UI['COMPONENT_TYPES'] {exc}.", hint="A dict {name: {\"schema\": "
                      "<JSON Schema of the data>}}; see docs/client.md, \"Your own components\".",
                      id="a2ui.E040")]
    return []


def _check_edge(user):
    """The edge's caps: a count (0: no per-address cap; None: the descriptor limit's) and a
    list of trusted proxy addresses or networks (a2ui.E007)."""
    from a2ui.edge import parse_networks

    errors = []
    for name, allowed in (("EDGE_MAX_CONNECTIONS_PER_ADDRESS", "a non-negative integer (0: no "
                           "cap)"), ("EDGE_MAX_CONNECTIONS", "a positive integer or None (the "
                                     "descriptor limit's)")):
        value = user.get(name, DEFAULTS[name])
        if value is None and name == "EDGE_MAX_CONNECTIONS":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < (
                0 if name == "EDGE_MAX_CONNECTIONS_PER_ADDRESS" else 1):
            errors.append(Error(f"A2UI[{name!r}] must be {allowed}, got {value!r}.",
                                hint="See docs/settings.md.", id="a2ui.E007"))
    try:
        parse_networks(user.get("EDGE_TRUSTED_PROXIES", DEFAULTS["EDGE_TRUSTED_PROXIES"]))
    except ValueError as exc:
        errors.append(Error(f"A2UI['EDGE_TRUSTED_PROXIES'] must be a list of IP addresses or "
                            f"networks: {exc}.", hint='For example ["10.0.0.5", "10.1.0.0/16"].',
                            id="a2ui.E007"))
    return errors


def _check_audit(user):
    """The audit chain's site name and checkpoint key (a2ui.E027)."""
    errors = []
    site = user.get("AUDIT_SITE", DEFAULTS["AUDIT_SITE"])
    if not isinstance(site, str) or not site or len(site) > 64 or "\x00" in site:
        errors.append(Error(f"A2UI['AUDIT_SITE'] must be a name of 1 to 64 characters, got "
                            f"{site!r}.", hint="See docs/settings.md.", id="a2ui.E027"))
    key = user.get("AUDIT_CHECKPOINT_KEY", DEFAULTS["AUDIT_CHECKPOINT_KEY"])
    if key is not None and (not isinstance(key, str | bytes) or len(key) < 16):
        errors.append(Error("A2UI['AUDIT_CHECKPOINT_KEY'] must be None (derived from "
                            "SECRET_KEY) or a str or bytes of at least 16 characters.",
                            hint="See docs/settings.md.", id="a2ui.E027"))
    return errors


def _check_redis_url():
    from a2ui.conf import a2ui_settings
    from a2ui.infra import redisurl

    url = a2ui_settings.REDIS_URL
    shards = a2ui_settings.REDIS_SHARDS
    if not url:
        return [Error("A2UI['REDIS_SHARDS'] is set but A2UI['REDIS_URL'] is not.",
                      hint="Set A2UI['REDIS_URL'] too (it keeps what is not a session's and "
                           "may be one of the shards; docs/settings.md).",
                      id="a2ui.E024")] if shards else []
    try:
        redisurl.check(url)
    except ValueError as exc:
        return [Error(f"A2UI['REDIS_URL'] is not usable: {exc}",
                      hint="See docs/settings.md, \"Redis URLs\".", id="a2ui.E009")]
    return _check_shards(shards)


def _check_shards(shards):
    from a2ui.infra import redisurl
    from a2ui.infra.redisstate.sharded import shard_list

    hint = "See docs/operations.md, \"Several Redis servers\"."
    if not shards:
        return []
    if not isinstance(shards, list | tuple | dict):
        return [Error("A2UI['REDIS_SHARDS'] must be a list of Redis URLs or a dict of name to "
                      "URL.", hint=hint, id="a2ui.E024")]
    for key, url in shards.items() if isinstance(shards, dict) else enumerate(shards):
        try:
            redisurl.check(url)
        except ValueError as exc:
            return [Error(f"A2UI['REDIS_SHARDS'][{key!r}] is not usable: {exc}", hint=hint,
                          id="a2ui.E024")]
    named = shard_list(shards)
    names, urls = [n for n, _ in named], [u for _, u in named]
    if len(set(names)) != len(names) or len(set(urls)) != len(urls):
        return [Error("A2UI['REDIS_SHARDS'] names a shard (or a URL) twice.", hint=hint,
                      id="a2ui.E024")]
    return []


@register(Tags.compatibility)
def check_a2ui_settings(app_configs, **kwargs):
    user = getattr(settings, "A2UI", {}) or {}
    if not isinstance(user, dict):
        return [Error("settings.A2UI must be a dict.", id="a2ui.E000")]
    try:  # the core's defaults and the registered adapters' (Adapter.settings_defaults)
        known, ints = defaults(), positive_ints()
    except Exception as exc:  # an adapter that does not load: said, not a traceback
        return [Error(f"A2UI['ADAPTERS'] does not load: {exc}", hint="See docs/settings.md.",
                      id="a2ui.E008")]
    unknown = sorted(set(user) - set(known))
    errors = [
        Error(f"Unknown A2UI setting {name!r}.", hint="See docs/settings.md.", id="a2ui.E001")
        for name in unknown
    ]
    errors += _check_positive_ints(user, known, ints)
    errors += _check_consents(user)
    errors += _check_flush(user)
    errors += _check_catalogs(user)
    errors += _check_component_types(user)
    errors += _check_edge(user)
    errors += _check_audit(user)
    errors += _check_redis_url()
    if user.get("MCP_CONFORMANCE_FIXTURES") and not settings.DEBUG:
        errors.append(Error(
            "A2UI['MCP_CONFORMANCE_FIXTURES'] is on with DEBUG off: the MCP conformance "
            "suite's fixture tools are for tests only.",
            hint="Remove it (tests/live/conformance_settings.py turns it on for the suite).",
            id="a2ui.E006"))
    return errors


#: Apps the host project must install beside "a2ui", and why.
REQUIRED_APPS = {
    "django.contrib.auth": "people sign in to the web client",
    "django.contrib.contenttypes": "django.contrib.auth needs it",
    "django.contrib.sessions": "the web client's session cookie",
    "rest_framework": "the REST API",
    "channels": "the WebSocket consumers",
}


@register(Tags.compatibility)
def check_host_project(app_configs, **kwargs):
    """What a host project must have for the app to work: a2ui.E010-E013."""
    errors = [
        Error(f"a2ui needs {name!r} in INSTALLED_APPS ({why}).",
              hint=f"Add {name!r} to INSTALLED_APPS.", id="a2ui.E010")
        for name, why in REQUIRED_APPS.items() if not apps.is_installed(name)
    ]
    layers = getattr(settings, "CHANNEL_LAYERS", None)
    # (none when A2UI['REDIS_URL'] or its shards are unusable: a2ui.E009 and E024 say so)
    if (not isinstance(layers, dict) or "default" not in layers) and not _check_redis_url():
        errors.append(Error(
            "CHANNEL_LAYERS has no 'default' layer: every a2ui WebSocket would fail.",
            hint="Remove CHANNEL_LAYERS to get a2ui's default (in-memory, or Redis when "
                 "A2UI['REDIS_URL'] is set), or define a 'default' layer (docs/settings.md).",
            id="a2ui.E011"))
    from a2ui.conf import a2ui_settings

    if a2ui_settings.SERVE_STATIC and not apps.is_installed("django.contrib.staticfiles"):
        errors.append(Error(
            "A2UI['SERVE_STATIC'] is on but django.contrib.staticfiles is not installed: the "
            "web client's scripts would be 404.",
            hint="Add 'django.contrib.staticfiles' to INSTALLED_APPS, or set "
                 "A2UI['SERVE_STATIC'] = False and serve STATIC_ROOT from your web server.",
            id="a2ui.E012"))
    if not apps.is_installed("drf_spectacular"):
        errors.append(Warning(
            "'drf_spectacular' is not in INSTALLED_APPS: /api/schema/ and /api/docs/ (the "
            "API's OpenAPI schema and Swagger UI) answer 404, and manage.py spectacular is "
            "unknown.",
            hint="Add 'drf_spectacular' to INSTALLED_APPS and set REST_FRAMEWORK["
                 '"DEFAULT_SCHEMA_CLASS"] = "drf_spectacular.openapi.AutoSchema" (README, '
                 '"Add it to your Django project").', id="a2ui.W015"))
    else:
        from rest_framework.settings import api_settings

        name = f"{api_settings.DEFAULT_SCHEMA_CLASS.__module__}."
        name += api_settings.DEFAULT_SCHEMA_CLASS.__qualname__
        if name != "drf_spectacular.openapi.AutoSchema":
            errors.append(Warning(
                "/api/schema/ needs drf-spectacular's schema class; it is " + name + ".",
                hint='Set REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"] = '
                     '"drf_spectacular.openapi.AutoSchema".', id="a2ui.W014"))
    return errors


@register(Tags.urls)
def check_login_url(app_configs, **kwargs):
    """The web client sends signed-out people to LOGIN_URL: it must exist (a2ui.E013)."""
    from django.shortcuts import resolve_url
    from django.urls import NoReverseMatch, Resolver404, resolve

    try:
        url = resolve_url(settings.LOGIN_URL)
        if url.startswith("/"):
            resolve(url.split("?", 1)[0])
    except (NoReverseMatch, Resolver404):
        return [Error(
            f"LOGIN_URL ({settings.LOGIN_URL!r}) is not a URL of this project: the web client "
            "at /a2ui/ would redirect signed-out people to a 404.",
            hint='Set LOGIN_URL = "a2ui_web:login" (the app\'s login page for people), or '
                 'point it at your site\'s own login view.',
            id="a2ui.E013")]
    return []


@register(Tags.staticfiles)
def check_web_client_bundle(app_configs, **kwargs):
    """The vendored renderer and markdown-it (a2ui/static/a2ui/vendor/) are complete (a2ui.W101)."""
    from a2ui.web import importmap

    missing = importmap.missing_files()
    if missing:
        return [Warning(
            "The web client's vendored bundle is incomplete (" + ", ".join(missing) + "): the "
            "client cannot start.",
            hint="Reinstall django-a2ui; in a checkout, run `make vendor`.",
            id="a2ui.W101")]
    return []


@register(Tags.database)
def check_database_connections(app_configs, **kwargs):
    """A PostgreSQL connection kept between requests and never checked (a2ui.W020).

    With psycopg's pool (``OPTIONS["pool"]``) Django hands the pool its check only when
    ``CONN_HEALTH_CHECKS`` is on, and skips its own; with ``CONN_MAX_AGE`` above 0 Django checks
    a reused connection only then too. Off, every connection the server closed (a restart, a
    failover, ``pg_terminate_backend``) fails the next request that takes it, one request per
    connection, however long after (docs/operations.md, "Database connections").
    """
    warnings = database_warnings(settings.DATABASES)
    if "a2ui.middleware.ServiceUnavailableMiddleware" not in (settings.MIDDLEWARE or []):
        warnings.append(Warning(
            "a2ui.middleware.ServiceUnavailableMiddleware is not in MIDDLEWARE: while the "
            "database or Redis is unreachable, views outside the app's API answer Django's "
            "HTML 500 and log a traceback per request.",
            hint='Put "a2ui.middleware.ServiceUnavailableMiddleware" first in MIDDLEWARE.',
            id="a2ui.W021"))
    return warnings


def database_warnings(databases):
    warnings = []
    for alias, db in databases.items():
        if db.get("ENGINE") != "django.db.backends.postgresql" or db.get("CONN_HEALTH_CHECKS"):
            continue
        pooled = bool((db.get("OPTIONS") or {}).get("pool"))
        if pooled or db.get("CONN_MAX_AGE", 0) != 0:
            kept = "psycopg's pool" if pooled else f"CONN_MAX_AGE={db.get('CONN_MAX_AGE')!r}"
            warnings.append(Warning(
                f"DATABASES[{alias!r}] keeps connections ({kept}) without CONN_HEALTH_CHECKS: "
                "after a PostgreSQL restart or failover each kept connection fails a request.",
                hint=f'Set DATABASES[{alias!r}]["CONN_HEALTH_CHECKS"] = True (with the pool: '
                     "one empty statement each time a connection is taken).",
                id="a2ui.W020"))
    return warnings


@register(Tags.database)
def check_default_agent(app_configs, databases=None, **kwargs):
    """Which agent the web client talks to (a2ui.W030, W031): with several active agents and
    no ``A2UI['DEFAULT_AGENT']``, a page that names none cannot open a session. Reads the
    database: runs with ``migrate`` and ``check --database default``."""
    if not databases:
        return []
    from django.db import DatabaseError

    from a2ui.conf import a2ui_settings
    from a2ui.models import Agent

    try:
        active = list(Agent.objects.filter(is_active=True).values_list("name", flat=True)[:6])
    except DatabaseError:  # not migrated yet: migrate's own checks come first
        return []
    name = a2ui_settings.DEFAULT_AGENT
    if name and name not in active and not Agent.objects.filter(name=name,
                                                                 is_active=True).exists():
        return [Warning(
            f"A2UI['DEFAULT_AGENT'] is {name!r}, which is no active agent: the web client "
            "cannot open a session for a page that names no agent.",
            hint="Create the agent (manage.py a2ui_agent create NAME), activate it in the "
                 "admin, or change A2UI['DEFAULT_AGENT'].", id="a2ui.W031")]
    if not name and len(active) > 1:
        listed = ", ".join(repr(n) for n in active[:5]) + (", ..." if len(active) > 5 else "")
        return [Warning(
            f"There are several active agents ({listed}) and no A2UI['DEFAULT_AGENT']: the web "
            "client at /a2ui/ cannot tell which one a person talks to.",
            hint="Set A2UI['DEFAULT_AGENT'] (or the A2UI_DEFAULT_AGENT environment variable) to "
                 "one of them, or name the agent on the page: /a2ui/?agent=NAME.",
            id="a2ui.W030")]
    return []


@register(Tags.database, deploy=True)
def check_shared_state(app_configs, **kwargs):
    """What several server processes must share (a2ui.W040, W041; ``check --deploy``)."""
    warnings = []
    for alias, db in settings.DATABASES.items():
        if db.get("ENGINE") == "django.db.backends.sqlite3":
            warnings.append(Warning(
                f"DATABASES[{alias!r}] is SQLite: one writer at a time, on one machine. Under "
                "several Daphne processes or machines, writes wait on each other and fail with "
                "'database is locked'.",
                hint=f'Point DATABASES[{alias!r}] at PostgreSQL in your settings ("ENGINE": '
                     '"django.db.backends.postgresql"; docs/operations.md).', id="a2ui.W040"))
    layer = (getattr(settings, "CHANNEL_LAYERS", None) or {}).get("default") or {}
    if layer.get("BACKEND") == "channels.layers.InMemoryChannelLayer":
        warnings.append(Warning(
            "The channel layer is in-memory: each process has its own, so an agent on one "
            "process never reaches a person on another, and nothing survives a restart.",
            hint="Set A2UI['REDIS_URL'] in your settings and remove CHANNEL_LAYERS (a2ui then "
                 "builds a channels_redis layer on it), or set a channels_redis layer yourself "
                 "(docs/settings.md).", id="a2ui.W041"))
    from a2ui.conf import a2ui_settings

    if not a2ui_settings.REDIS_URL:
        warnings.append(Warning(
            "A2UI['REDIS_URL'] is not set: rate limits, caps on sessions and sockets, and what "
            "a process tells the others are kept in each process apart.",
            hint='Set A2UI = {"REDIS_URL": "redis://HOST:6379/0"} in your settings (or the '
                 "REDIS_URL environment variable; docs/settings.md, docs/operations.md).",
            id="a2ui.W042"))
    return warnings
