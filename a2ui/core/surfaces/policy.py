"""Server-side policy applied to accepted agent messages.

Agents are not trusted to say who they are or where links go:

* identity: ``theme.agentDisplayName`` / ``theme.iconUrl`` are overwritten with
  values the server trusts (or removed), so an agent cannot impersonate another;
* URLs: literal media ``url``\\ s, ``iconUrl`` and ``openUrl`` args must be http(s)
  (media may also be relative); enforced inside the validator (``check_urls``);
* text: a ``sanitize_text(str) -> str`` hook (e.g. nh3-based, supplied by the
  caller) runs over the literal ``text`` of Text components, the only field the
  renderer interprets as Markdown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerPolicy:
    """What :func:`~a2ui.core.surfaces.session.validate_batch` enforces beyond the protocol.

    ``enforce_identity`` turns on the theme override (use :meth:`trusted`).
    """

    agent_display_name: str | None = None
    icon_url: str | None = None
    enforce_identity: bool = False
    sanitize_text: Callable[[str], str] | None = None
    check_urls: bool = True

    @classmethod
    def trusted(cls, agent_display_name: str | None, icon_url: str | None = None,
                sanitize_text: Callable[[str], str] | None = None) -> ServerPolicy:
        return cls(agent_display_name, icon_url, True, sanitize_text, True)


DEFAULT_POLICY = ServerPolicy()


def with_trusted_identity(message: dict[str, Any], agent_display_name: str | None,
                          icon_url: str | None = None) -> dict[str, Any]:
    """Copy of a createSurface message whose theme identity comes from the server.

    Values given as None are removed rather than left to the agent.
    """
    body = dict(message["createSurface"])
    theme = dict(body.get("theme") or {})
    for key, trusted in (("agentDisplayName", agent_display_name), ("iconUrl", icon_url)):
        theme.pop(key, None)
        if trusted is not None:
            theme[key] = trusted
    if theme or "theme" in body:
        body["theme"] = theme
    return {**message, "createSurface": body}


def sanitize_components(message: dict[str, Any], sanitize: Callable[[str], str]
                        ) -> dict[str, Any]:
    """Copy of an updateComponents message with Text literals passed through ``sanitize``."""
    body = message["updateComponents"]
    changed = False
    components = []
    for comp in body["components"]:
        text = comp.get("text")
        if comp.get("component") == "Text" and type(text) is str:
            clean = sanitize(text)
            if clean != text:
                comp = {**comp, "text": clean}
                changed = True
        components.append(comp)
    if not changed:
        return message
    return {**message, "updateComponents": {**body, "components": components}}
