"""Every setting has a default (a2ui.conf.DEFAULTS, or its protocol's
Adapter.settings_defaults) and a line in docs/settings.md."""

import pathlib
import re

DOC = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()


def test_every_setting_is_documented():
    from a2ui.conf import DEFAULTS
    from a2ui.core import adapters

    names = set(DEFAULTS)
    for adapter in adapters.registered():
        names |= set(adapter.settings_defaults)
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", DOC))
    assert sorted(names - documented) == []
