"""An A2A agent card read and the protocol version chosen from it: sans-I/O.

Where the card is (:func:`card_url`): a URL ending in ``.json`` is the card itself; any other
URL is the agent's base and its card is ``<base>/.well-known/agent-card.json``.

Which endpoint and version (:func:`choose`): this client speaks the JSON-RPC binding of A2A 1.0
and of A2A 0.3 (what a2a-sdk 1.x serves and clients of both know). A 1.0 card lists
``supportedInterfaces`` (``url``, ``protocolBinding``, ``protocolVersion``); a 0.3 card has
``url``, ``preferredTransport`` (default JSONRPC), ``protocolVersion`` (default 0.3.0) and
``additionalInterfaces``. Among the JSON-RPC interfaces, 1.0 wins over any later 1.x, which wins
over 0.3 (the rule of a2a-sdk's ``ClientFactory``); a card with none is refused with a message
that says what it offers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from a2ui.remote.a2a.extension import EXTENSION_URI, agent_extension

WELL_KNOWN = "/.well-known/agent-card.json"
JSONRPC = "JSONRPC"
#: The largest card read (bytes); cards are small, a huge one is refused.
MAX_CARD_BYTES = 256 * 1024


class CardError(ValueError):
    """A card this client cannot use; the message says why, for an operator."""


@dataclass(frozen=True)
class CardInfo:
    """What the client needs from a card (and what the admin shows)."""

    name: str
    description: str
    rpc_url: str
    protocol_version: str  # "1.0" or "0.3"
    streaming: bool
    a2ui_uri: str  # the A2UI extension URI the card advertises ("" when none)
    a2ui_params: dict[str, Any]
    card: dict[str, Any]  # the card as read (stored with the agent, re-read by the client)

    @property
    def legacy(self) -> bool:
        """A2A 0.3 (``message/stream``, ``X-A2A-Extensions``, one message object per DataPart)."""
        return self.protocol_version == "0.3"

    @property
    def a2ui_current(self) -> bool:
        return self.a2ui_uri == EXTENSION_URI


def card_url(url: str) -> str:
    """The card's URL for a registered URL (the card itself, or the base's well-known path)."""
    parts = urlsplit(url)
    if parts.path.endswith(".json"):
        return url
    path = parts.path.rstrip("/") + WELL_KNOWN
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _major_minor(version: Any) -> tuple[int, int] | None:
    if not isinstance(version, str):
        return None
    bits = version.strip().lstrip("v").split(".")
    try:
        return int(bits[0]), int(bits[1]) if len(bits) > 1 else 0
    except ValueError:
        return None


def interfaces(card: dict[str, Any]) -> list[dict[str, str]]:
    """The card's interfaces as ``{url, binding, version}``, whichever form the card has."""
    found: list[dict[str, str]] = []
    listed = card.get("supportedInterfaces")
    if isinstance(listed, list):
        for i in listed:
            if isinstance(i, dict) and isinstance(i.get("url"), str):
                found.append({"url": i["url"], "binding": str(i.get("protocolBinding") or ""),
                              "version": str(i.get("protocolVersion") or "")})
        return found
    version = card.get("protocolVersion") if isinstance(card.get("protocolVersion"), str) else "0.3.0"
    if isinstance(card.get("url"), str):
        found.append({"url": card["url"], "version": version,
                      "binding": str(card.get("preferredTransport") or JSONRPC)})
    extra = card.get("additionalInterfaces")
    for i in extra if isinstance(extra, list) else []:
        if isinstance(i, dict) and isinstance(i.get("url"), str):
            found.append({"url": i["url"], "binding": str(i.get("transport") or ""),
                          "version": version})
    return found


def _rank(version: str) -> tuple[int, int, int] | None:
    mm = _major_minor(version) if version else (0, 3)  # no version: a 0.3-era interface
    if mm is None or mm < (0, 3) or mm >= (2, 0):
        return None
    if mm == (1, 0):
        return (0, 0, 0)
    if mm > (1, 0):
        return (1, -mm[0], -mm[1])
    return (2, -mm[0], -mm[1])


def choose(card: dict[str, Any]) -> tuple[str, str]:
    """(JSON-RPC URL, ``"1.0"`` or ``"0.3"``) for the card, or :class:`CardError`."""
    ifaces = interfaces(card)
    best: tuple[tuple[int, int, int], dict[str, str]] | None = None
    for i in ifaces:
        if i["binding"].upper() not in (JSONRPC, "JSON-RPC"):
            continue
        rank = _rank(i["version"])
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, i)
    if best is None:
        offered = ", ".join(sorted({f"{i['binding'] or '?'} {i['version'] or '?'}"
                                    for i in ifaces})[:6]) or "no interfaces"
        raise CardError("The agent card offers no JSON-RPC interface of A2A 0.3 or 1.x "
                        f"(it offers: {offered[:200]}).")
    scheme = urlsplit(best[1]["url"]).scheme
    if scheme not in ("http", "https"):
        raise CardError("The agent card's JSON-RPC URL is not an http(s) URL.")
    return best[1]["url"], "0.3" if best[0][0] == 2 else "1.0"


def read_card(card: Any) -> CardInfo:
    """The :class:`CardInfo` of a card (a parsed JSON object), or :class:`CardError`."""
    if not isinstance(card, dict):
        raise CardError("The agent card is not a JSON object.")
    rpc_url, version = choose(card)
    caps = card.get("capabilities") if isinstance(card.get("capabilities"), dict) else {}
    ext = agent_extension(card) or {}
    params = ext.get("params") if isinstance(ext.get("params"), dict) else {}
    return CardInfo(
        name=_text(card.get("name")), description=_text(card.get("description"), 500),
        rpc_url=rpc_url, protocol_version=version, streaming=caps.get("streaming") is not False,
        a2ui_uri=ext.get("uri", ""), a2ui_params=params, card=card)


def _text(value: Any, cap: int = 200) -> str:
    return value[:cap] if isinstance(value, str) else ""
