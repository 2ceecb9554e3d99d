"""Each log record is written once, under Daphne (whose CLI configures the root logger before
the project's LOGGING is applied) and under manage.py (which does not)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("daphne_cli", [True, False], ids=["daphne", "manage.py"])
def test_an_error_is_written_once(daphne_cli):
    code = textwrap.dedent(f"""
        import logging
        import django
        if {daphne_cli}:
            # daphne.cli.CommandLineInterface.run, before it imports the application
            logging.basicConfig(level=logging.INFO, format="%(levelname)-8s %(message)s")
        django.setup()
        logging.getLogger("a2ui.consumers").error("a2ui-marker")
        logging.getLogger("a2ui.sessions.counters").info("a2ui-info-marker")
        logging.getLogger("django.request").error("django-marker")
        logging.getLogger("daphne.server").warning("daphne-marker")
    """)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "a2ui_project.settings",
           "DJANGO_SECRET_KEY": "x" * 50}
    env.pop("A2UI_LOG_LEVEL", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    logged = out.stderr + out.stdout
    for marker in ("a2ui-marker", "a2ui-info-marker", "django-marker", "daphne-marker"):
        assert logged.count(marker) == 1, (marker, logged)
