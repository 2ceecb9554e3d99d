"""Logging filters for a project's ``LOGGING`` (docs/operations.md, "Logs").

:class:`RefusedRequest` keeps Django's security events (``django.security.*``: a ``Host``
header not in ``ALLOWED_HOSTS``, too many form fields, ...) to one WARNING line. Django logs
each at ERROR with the exception's traceback, although the request was the client's mistake
and was answered 400: a hostile client could fill the server's log with tracebacks, and an
operator's alert on ERROR would fire for them.
"""

import logging


class RefusedRequest(logging.Filter):
    def filter(self, record):
        if record.name.startswith("django.security."):
            record.exc_info = record.exc_text = record.stack_info = None
            if record.levelno > logging.WARNING:
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
