"""URL schemes, trusted identity, text sanitization."""

from __future__ import annotations

import pytest
from v09_helpers import create, text, update

from a2ui.core.surfaces import (
    ServerPolicy,
    ValidationFailed,
    is_safe_url,
    validate_batch,
    validate_server_message,
    with_trusted_identity,
)


@pytest.mark.parametrize("url", ["https://x.org/a.png", "http://x", "/img/a.png", "a.png",
                                 "HTTPS://X"])
def test_safe_media_urls(url: str) -> None:
    assert is_safe_url(url)


@pytest.mark.parametrize("url", ["javascript:alert(1)", " JavaScript:alert(1)",
                                 "java\tscript:alert(1)", "data:image/png;base64,AAAA",
                                 "vbscript:x", "file:///etc/passwd", "\x01javascript:x",
                                 # one URL policy with seed-000's check_url (issue 10):
                                 "//cdn.example/x", "/\\evil.com/x", "https://user:pw@host/x"])
def test_unsafe_urls(url: str) -> None:
    assert not is_safe_url(url)


def test_relative_only_where_allowed() -> None:
    assert not is_safe_url("/x", allow_relative=False)


@pytest.mark.parametrize("kind", ["Image", "Video", "AudioPlayer"])
def test_media_url_policed(kind: str) -> None:
    comp = {"id": "root", "component": kind, "url": "data:text/html,<script>"}
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(update(comp))
    assert info.value.path == "/updateComponents/components/0/url"
    comp["url"] = "/media/x"
    validate_server_message(update(comp))
    comp["url"] = {"path": "/u"}  # bound URLs cannot be judged here
    validate_server_message(update(comp))


def test_open_url_policed() -> None:
    button = {"id": "root", "component": "Button", "child": "t", "action": {"functionCall": {
        "call": "openUrl", "args": {"url": "javascript:alert(1)"}, "returnType": "void"}}}
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(update(button, text("t")))
    assert info.value.path == "/updateComponents/components/0/action/functionCall/args/url"
    validate_server_message(update(button, text("t")), check_urls=False)


def test_icon_url_policed() -> None:
    msg = create(theme={"iconUrl": "javascript:alert(1)"})
    with pytest.raises(ValidationFailed) as info:
        validate_server_message(msg)
    assert info.value.path == "/createSurface/theme/iconUrl"
    with pytest.raises(ValidationFailed):
        validate_server_message(create(theme={"iconUrl": "/relative.png"}))  # format: uri
    validate_server_message(create(theme={"iconUrl": "https://x/y.png"}))


def test_with_trusted_identity() -> None:
    msg = create(theme={"agentDisplayName": "Bank", "iconUrl": "https://evil/x", "a": 1})
    out = with_trusted_identity(msg, "Weather bot", None)
    assert out["createSurface"]["theme"] == {"a": 1, "agentDisplayName": "Weather bot"}
    assert msg["createSurface"]["theme"]["agentDisplayName"] == "Bank"  # input untouched
    assert "theme" not in with_trusted_identity(create(), None, None)["createSurface"]


def test_policy_overrides_identity_in_batch() -> None:
    policy = ServerPolicy.trusted("Real agent", "https://srv/icon.png")
    changes = validate_batch({}, [create(theme={"agentDisplayName": "Bank"})], policy=policy)
    theme = {"agentDisplayName": "Real agent", "iconUrl": "https://srv/icon.png"}
    assert changes.states["s1"].theme == theme
    assert changes.messages[0]["createSurface"]["theme"] == theme


def test_sanitize_hook_applies_to_text_literals() -> None:
    policy = ServerPolicy(sanitize_text=lambda s: s.replace("<b>", ""))
    comps = [{"id": "root", "component": "Column", "children": ["t", "u"]},
             text("t", "<b>hi"), text("u", {"path": "/x"})]
    original = update(*comps)
    changes = validate_batch({}, [create(), original], policy=policy)
    assert changes.states["s1"].components["t"]["text"] == "hi"
    assert changes.messages[1]["updateComponents"]["components"][1]["text"] == "hi"
    assert original["updateComponents"]["components"][1]["text"] == "<b>hi"
