"""Settings only one protocol reads have their defaults in its adapter
(``Adapter.settings_defaults``), found by ``a2ui_settings`` when they are not core defaults."""

import subprocess
import sys

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from a2ui import conf
from a2ui.conf import DEFAULTS, A2UISettings, defaults

SHIPPED = DEFAULTS["ADAPTERS"]


def test_protocol_settings_are_their_adapters_defaults():
    from a2ui.agui1.adapter import ADAPTER as agui1
    from a2ui.mcp.adapter import ADAPTER as mcp

    for adapter in (mcp, agui1):
        assert adapter.settings_defaults
        for name, value in adapter.settings_defaults.items():
            assert name not in DEFAULTS
            assert defaults()[name] == value == getattr(A2UISettings(), name)
    assert conf.a2ui_settings.MCP_SESSION_IDLE_SECONDS == 300
    assert conf.a2ui_settings.AGUI_MAX_NEW_MESSAGES == 50


def test_a_sites_override_wins_and_an_unserved_protocol_has_none(settings):
    settings.A2UI = {"MCP_SESSION_IDLE_SECONDS": 42}
    assert conf.a2ui_settings.MCP_SESSION_IDLE_SECONDS == 42
    settings.A2UI = {"ADAPTERS": [p for p in SHIPPED if p != "a2ui.mcp.adapter"]}
    with pytest.raises(AttributeError):
        conf.a2ui_settings.MCP_SESSION_IDLE_SECONDS  # noqa: B018
    assert conf.a2ui_settings.AGUI_MAX_NEW_MESSAGES == 50


def ids(errors):
    return [e.id for e in errors]


def test_checks_know_the_adapters_settings():
    with override_settings(A2UI={"MCP_SESSION_IDLE_SECONDS": 0}):
        errors = [e for e in run_checks() if e.id == "a2ui.E002"]
        assert len(errors) == 1 and "MCP_SESSION_IDLE_SECONDS" in errors[0].msg
        assert "default 300" in errors[0].hint
    with override_settings(A2UI={"AGUI_MAX_NEW_MESSAGES": 10}):
        assert not {"a2ui.E001", "a2ui.E002"} & set(ids(run_checks()))
    unserved = [p for p in SHIPPED if p != "a2ui.mcp.adapter"]
    with override_settings(A2UI={"ADAPTERS": unserved, "MCP_SESSION_IDLE_SECONDS": 10}):
        assert "a2ui.E001" in ids(run_checks())  # MCP is not served: unknown
    with override_settings(A2UI={"ADAPTERS": ["no.such.adapter"]}):
        assert "a2ui.E008" in ids(run_checks())


def test_conf_imports_no_adapter():
    code = ("import sys, a2ui.conf; "
            "assert not [m for m in sys.modules if m.startswith(('a2ui.core.adapters', "
            "'a2ui.mcp', 'a2ui.agui', 'a2ui.adapters'))]")
    subprocess.run([sys.executable, "-c", code], check=True)
