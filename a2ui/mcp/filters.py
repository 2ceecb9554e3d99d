"""The filter of a ``subscriptions/listen`` request (2026-07-28, SEP-2575). Sans-I/O.

A request names the notifications it wants (``SubscriptionFilter``); the server acknowledges
the subset it will honour. /mcp honours ``resourcesListChanged`` and ``resourceSubscriptions``
(its tool and prompt lists never change, so ``toolsListChanged`` and ``promptsListChanged``
are left out of the acknowledgement and never sent). Each requested URI must name a resource
of the caller: :func:`plan` parses them and :func:`refused` builds the error for one that is
not (-32602 with ``data.path`` naming it), the same for a foreign, unknown or malformed URI.
"""

from dataclasses import dataclass

from a2ui.mcp import uris
from a2ui.rpc.errors import ErrorCode

#: At most this many URIs in one listen request.
MAX_URIS = 256
#: A stream whose client stops reading is ended once this many events wait for it.
MAX_BUFFERED = 1024

URIS_PATH = "notifications.resourceSubscriptions"


@dataclass(frozen=True)
class Plan:
    want_list: bool  # resourcesListChanged requested
    uris: tuple  # (index, uri text, Ref | None): each distinct requested URI, in order

    def honored(self):
        """The acknowledged filter, as the wire's camelCase keys."""
        out = {}
        if self.want_list:
            out["resourcesListChanged"] = True
        if self.uris:
            out["resourceSubscriptions"] = [uri for _, uri, _ in self.uris]
        return out

    def subscribed(self):
        return frozenset(uri for _, uri, _ in self.uris)

    def sessions(self):
        """The sessions whose events the requested URIs need."""
        return {ref.session_id for _, _, ref in self.uris if ref is not None}


class Invalid(Exception):
    """A -32602 for the listen request: ``code``, ``message``, ``data``."""

    def __init__(self, path, reason):
        super().__init__(f"Invalid params: {path} {reason}")
        self.code = int(ErrorCode.INVALID_PARAMS)
        self.message = str(self)
        self.data = {"path": path, "reason": reason}


def refused(index):
    return Invalid(f"{URIS_PATH}[{index}]", "is not a resource of yours")


def plan(resources_list_changed, resource_subscriptions):
    """The Plan of a request's filter fields, or :class:`Invalid` (too many URIs)."""
    requested = list(resource_subscriptions or ())
    if len(requested) > MAX_URIS:
        raise Invalid(URIS_PATH, f"lists more than {MAX_URIS} URIs")
    seen, out = set(), []
    for index, uri in enumerate(requested):
        if uri in seen:
            continue
        seen.add(uri)
        out.append((index, uri, uris.parse(uri)))
    return Plan(want_list=resources_list_changed is True, uris=tuple(out))
