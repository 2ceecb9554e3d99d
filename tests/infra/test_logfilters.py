"""a2ui.logfilters.RefusedRequest: Django's security events as one WARNING line."""

import logging
import sys

from django.conf import settings

from a2ui.logfilters import RefusedRequest


def _record(name, level=logging.ERROR):
    try:
        raise ValueError("boom")
    except ValueError:
        info = sys.exc_info()
    return logging.LogRecord(name, level, __file__, 1, "Invalid HTTP_HOST header: %r", ("x",),
                             info)


def test_security_events_lose_their_traceback_and_become_warnings():
    record = _record("django.security.DisallowedHost")
    assert RefusedRequest().filter(record)
    assert record.exc_info is None and record.levelname == "WARNING"
    assert logging.Formatter().format(record) == "Invalid HTTP_HOST header: 'x'"


def test_other_records_are_left_alone():
    for name in ("django.request", "a2ui", "django.securityx"):
        record = _record(name)
        assert RefusedRequest().filter(record)
        assert record.exc_info is not None and record.levelname == "ERROR"


def test_the_example_project_uses_it():
    console = settings.LOGGING["handlers"]["console"]
    assert settings.LOGGING["filters"][console["filters"][0]]["()"] == \
        "a2ui.logfilters.RefusedRequest"
