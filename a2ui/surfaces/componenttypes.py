"""``A2UI['COMPONENT_TYPES']``: the host project's own seed-000 component types, compiled and
installed into ``a2ui.core.content.customtypes`` when the app is ready and again whenever the
setting changes (tests). A bad definition is the system check error ``a2ui.E040``; until it is
fixed no custom type is installed (the nine built-in ones work as before)."""

import logging

from django.core.signals import setting_changed

from a2ui.conf import a2ui_settings
from a2ui.core.content import customtypes
from a2ui.core.content.components import COMPONENT_TYPES

log = logging.getLogger(__name__)


def compile_setting(value=None):
    """The compiled types of the setting (``value``, default the current one); raises
    ``customtypes.DefinitionError``."""
    value = a2ui_settings.COMPONENT_TYPES if value is None else value
    return customtypes.compile_types(value or {}, COMPONENT_TYPES)


def install():
    try:
        compiled = compile_setting()
    except customtypes.DefinitionError as exc:
        log.error("a2ui: A2UI['COMPONENT_TYPES'] %s; no custom component type installed", exc)
        compiled = {}
    customtypes.install(compiled)


def _changed(*, setting, **kwargs):
    if setting == "A2UI":
        install()


setting_changed.connect(_changed)
