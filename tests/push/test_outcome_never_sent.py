"""A push whose database error arose while connecting was never sent: a plain failure, not an
unknown outcome (a2ui.push.keys.never_sent)."""

import socket

from django.db import OperationalError
from django.db.backends.postgresql.base import DatabaseWrapper

from a2ui.push import keys as outcomes


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unreachable():
    settings = {"ENGINE": "django.db.backends.postgresql", "NAME": "none", "USER": "none",
                "PASSWORD": "", "HOST": "127.0.0.1", "PORT": _closed_port(),
                "OPTIONS": {"connect_timeout": 2}, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False,
                "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False, "TIME_ZONE": None, "TEST": {}}
    return DatabaseWrapper(settings, alias="unreachable")


def test_an_unreachable_database_was_never_sent_to(django_db_blocker):
    wrapper = _unreachable()
    try:
        with django_db_blocker.unblock():
            wrapper.ensure_connection()
    except OperationalError as exc:
        assert outcomes.never_sent(exc)
    else:  # pragma: no cover
        raise AssertionError("connected to a closed port")
    finally:
        wrapper.close()


def test_a_connection_lost_in_a_statement_is_unknown():
    def execute():
        raise OperationalError("server closed the connection unexpectedly")

    try:
        execute()
    except OperationalError as exc:
        assert not outcomes.never_sent(exc)
