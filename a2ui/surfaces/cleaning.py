"""Errors and string cleaning shared by the surface modules (agent batches, client messages)."""

from a2ui.core.content import jsonvalue
from a2ui.core.content.sanitize import clean_display_string
from a2ui.core.errors import DomainError, Fault
from a2ui.core.surfaces import ValidationFailed

#: The cleaner's cut-off, from a message's root: the one free-form limit (jsonvalue.MAX_DEPTH,
#: 32) with room for the envelope and the data model's 48 path levels above a value.
MAX_JSON_DEPTH = 2 * jsonvalue.MAX_DEPTH


class SurfaceValidationError(DomainError):
    """A refused batch: a JSON-RPC -32602 whose data is the standard VALIDATION_FAILED message.

    ``failure`` is the :class:`a2ui.v09.ValidationFailed`; ``body`` is what REST answers (422)
    and the /ws/v09 socket sends: ``{"version": "v0.9", "error": {...}, "index": n}``.
    """

    def __init__(self, failure):
        self.failure = failure
        body = failure.to_error_message()
        body["index"] = failure.index
        self.body = body
        super().__init__(Fault.INVALID_INPUT, "A2UI v0.9 validation failed", data=body)


def _failed(message, path="", surface_id=None, index=0):
    return SurfaceValidationError(ValidationFailed(message, path, surface_id, index))


# Cleaning --------------------------------------------------------------------------------------


class TooDeep(jsonvalue.JSONValueError):
    """A value the cleaner refuses (too deep, or against the JSON value policy)."""


def clean_json(value, path=(), text=clean_display_string):
    """Strings (and keys) without control characters, bidi controls or lone surrogates;
    structure unchanged. ``text=clean_string`` keeps bidi controls (a person's own data).

    Raises TooDeep (with ``.pointer``) past MAX_JSON_DEPTH levels (before Python's recursion
    limit could), for NUL in a key, and for numbers the JSON value policy refuses.
    """
    if len(path) > MAX_JSON_DEPTH:
        raise TooDeep(f"Nested deeper than {MAX_JSON_DEPTH} levels.", path)
    kind = type(value)
    if kind is str:
        return text(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is str:
                if "\x00" in k:
                    raise TooDeep("NUL (\\u0000) is not accepted in object keys", (*path, k))
                k = text(k)
            out[k] = clean_json(v, (*path, k), text)
        return out
    if kind is list:
        return [clean_json(v, (*path, i), text) for i, v in enumerate(value)]
    problem = (jsonvalue.int_problem(value) if kind is int else
               jsonvalue.float_problem(value) if kind is float else None)
    if problem is not None:
        raise TooDeep(problem, path)
    return value
