"""Date and time formats for the hand-written client-message checks (:mod:`a2ui.core.surfaces.client`).

Catalog schemas get their ``format`` checks from jsonschema-rs (:mod:`a2ui.core.surfaces.schema`).
"""

from __future__ import annotations

import re
from datetime import date, datetime

_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?(Z|z|[+-]([01]\d|2[0-3]):[0-5]\d)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


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
