"""Validation errors in the standard A2UI v0.9 ``VALIDATION_FAILED`` form.

Checkers deep inside the validator raise the cheap internal :class:`Invalid` and
append their key on the way up; only when an error actually happens do we build
the JSON Pointer. That keeps the success path free of string building.
"""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = "v0.9"


def escape_token(token: Any) -> str:
    """Escape one JSON Pointer reference token (RFC 6901 section 3)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_from_parts(parts: list[Any] | tuple[Any, ...]) -> str:
    """Join reference tokens (root first) into a JSON Pointer string."""
    return "".join("/" + escape_token(p) for p in parts)


class Invalid(Exception):
    """Internal, cheap failure raised by the checks (schema layer, post-checks, envelope).

    ``parts`` holds the reference tokens from the failing value up to the
    checker that caught it, innermost first; callers append as it bubbles up.
    """

    __slots__ = ("message", "parts")

    def __init__(self, message: str, parts: list[Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.parts = parts if parts is not None else []

    def pointer(self, prefix: tuple[Any, ...] = ()) -> str:
        """The JSON Pointer of the failing value below ``prefix``."""
        return pointer_from_parts(list(prefix) + self.parts[::-1])


class ValidationFailed(Exception):
    """A message (or batch) was refused; carries what the producer needs to fix it.

    ``path`` is the JSON Pointer of the offending field inside the offending
    message; ``index`` is that message's position in the batch (0 for single
    messages) so the service can tell the agent which message failed.
    """

    def __init__(self, message: str, path: str = "", surface_id: str | None = None,
                 index: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.surface_id = surface_id
        self.index = index

    @property
    def surfaceId(self) -> str | None:  # noqa: N802 - protocol spelling
        return self.surface_id

    def to_error_message(self) -> dict[str, Any]:
        """The standard client/server error message for this failure."""
        return {
            "version": PROTOCOL_VERSION,
            "error": {
                "code": "VALIDATION_FAILED",
                "surfaceId": self.surface_id if self.surface_id is not None else "",
                "path": self.path,
                "message": self.message,
            },
        }

    to_dict = to_error_message

    def __repr__(self) -> str:
        return (f"ValidationFailed(surface_id={self.surface_id!r}, path={self.path!r}, "
                f"message={self.message!r}, index={self.index})")


class CatalogError(ValueError):
    """A catalog definition cannot be built (bad schema, unresolvable $ref, hidden common types)."""
