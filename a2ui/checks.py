"""System checks: bad A2UI settings stop start-up with a clear message, not a 500 later."""

from django.conf import settings
from django.core.checks import Error, Tags, register

from .conf import DEFAULTS, POSITIVE_INTS


def _check_positive_ints(user):
    errors = []
    for name in POSITIVE_INTS:
        value = user.get(name, DEFAULTS[name])
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            errors.append(
                Error(
                    f"A2UI[{name!r}] must be a positive integer, got {value!r}.",
                    hint=f"Set A2UI[{name!r}] (default {DEFAULTS[name]!r}).",
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


def _check_flush(user):
    value = user.get("METRICS_FLUSH_SECONDS", DEFAULTS["METRICS_FLUSH_SECONDS"])
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return [Error("A2UI['METRICS_FLUSH_SECONDS'] must be a positive number.", id="a2ui.E004")]
    return []


def _check_catalogs(user):
    """Every A2UI['CATALOGS'] entry loads and compiles (a2ui.E005)."""
    value = user.get("CATALOGS", DEFAULTS["CATALOGS"])
    from django.core.exceptions import ImproperlyConfigured

    from .services.surfaces import build_registry

    try:
        build_registry(value)
    except ImproperlyConfigured as exc:
        return [Error(str(exc), hint="A2UI['CATALOGS'] lists dotted paths or JSON file paths of "
                      "catalogs shaped like the basic catalog.", id="a2ui.E005")]
    return []


@register(Tags.compatibility)
def check_a2ui_settings(app_configs, **kwargs):
    user = getattr(settings, "A2UI", {}) or {}
    if not isinstance(user, dict):
        return [Error("settings.A2UI must be a dict.", id="a2ui.E000")]
    unknown = sorted(set(user) - set(DEFAULTS))
    errors = [
        Error(f"Unknown A2UI setting {name!r}.", hint="See docs/settings.md.", id="a2ui.E001")
        for name in unknown
    ]
    errors += _check_positive_ints(user)
    errors += _check_consents(user)
    errors += _check_flush(user)
    errors += _check_catalogs(user)
    return errors
