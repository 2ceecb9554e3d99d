"""The JSON Schema ``format`` values the A2UI schemas use, checked by hand.

Plain jsonschema ignores ``format`` unless asked; the official test vectors
expect ``uri`` to be enforced (``openUrl`` with "not a uri" is invalid), so we do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime

_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s\"<>\\^`{|}]*")
_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?(Z|z|[+-]([01]\d|2[0-3]):[0-5]\d)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_uri(value: str) -> bool:
    """Absolute URI (RFC 3986): a scheme, a colon, no spaces or forbidden characters."""
    return bool(_URI.fullmatch(value))


def is_date(value: str) -> bool:
    if not _DATE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def is_time(value: str) -> bool:
    return bool(_TIME.fullmatch(value))


def is_date_time(value: str) -> bool:
    """ISO 8601 / RFC 3339 date-time with a ``T`` (or space) separator."""
    if len(value) < 16 or value[10] not in "Tt ":
        return False
    if not is_date(value[:10]) or not is_time(value[11:]):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return False
    return True


FORMATS: dict[str, Callable[[str], bool]] = {
    "uri": is_uri,
    "date": is_date,
    "time": is_time,
    "date-time": is_date_time,
}
