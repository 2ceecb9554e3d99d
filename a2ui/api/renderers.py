"""JSON answers that never fail to encode what they echo.

DRF's JSONRenderer writes non-ASCII as is and encodes to UTF-8 at the end: a lone surrogate
that came in as ``"\\ud800"`` (valid JSON) and is echoed in an error (an unknown method, a
session id) made that a UnicodeEncodeError, so a 500. Such a string is written escaped instead,
the same JSON value. A value JSON cannot hold (NaN, Infinity) is written as null.
"""

import json
import math

from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class SafeJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except (UnicodeEncodeError, ValueError):
            pass
        text = json.dumps(_finite(data), cls=JSONEncoder, ensure_ascii=True, allow_nan=False,
                          separators=(",", ":"))
        return text.encode("ascii")
