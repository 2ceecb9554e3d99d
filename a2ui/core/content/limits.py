"""Frame sizes, measured as every socket measures them. Sans-I/O.

The limit (``A2UI['MAX_PAYLOAD_SIZE']``) is in UTF-8 bytes on every protocol: a text frame's
characters can be up to 4 bytes each, and a lone surrogate (JSON allows ``"\\ud800"``) counts
as the 3 bytes of its ``surrogatepass`` encoding, so what is measured never raises.
"""


def utf8_size(raw):
    """The size in bytes of a frame (``str`` as UTF-8, ``bytes`` as is)."""
    if isinstance(raw, str):
        return len(raw.encode("utf-8", "surrogatepass"))
    return len(raw)


def over_limit(raw, limit):
    """True when ``raw`` (a text or binary frame) is larger than ``limit`` bytes.

    Cheap first: a character is at least one byte, and at most four.
    """
    if len(raw) > limit:
        return True
    if not isinstance(raw, str) or len(raw) * 4 <= limit:
        return False
    return utf8_size(raw) > limit
