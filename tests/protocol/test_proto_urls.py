"""The one URL policy (a2ui.core.content.urls), its users, markdown links and bidi controls.

url_cases.json holds the shared vectors: url, allow_relative, safe. The web client's URL
check passes the same file (tests/browser), so both sides keep one policy.
"""

import json
from pathlib import Path

import pytest

from a2ui.core.content.methods import validate_params
from a2ui.core.content.sanitize import check_url, sanitize_markdown, sanitize_text
from a2ui.core.content.urls import url_problem
from a2ui.core.errors import DomainError
from a2ui.core.surfaces import is_safe_url
from a2ui.rpc.errors import ErrorCode, ProtocolError

CASES = json.loads((Path(__file__).parent / "url_cases.json").read_text(encoding="utf-8"))


def _id(case):
    return f"{case['note']}|{'rel' if case['allow_relative'] else 'abs'}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_url_policy_vectors(case):
    problem = url_problem(case["url"], allow_relative=case["allow_relative"])
    assert (problem is None) == case["safe"], problem


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_check_url_and_v09_share_the_policy(case):
    assert is_safe_url(case["url"], allow_relative=case["allow_relative"]) == case["safe"]
    if case["safe"]:
        assert check_url(case["url"], "p", allow_relative=case["allow_relative"]) == case["url"]
    else:
        with pytest.raises(DomainError) as info:
            check_url(case["url"], "p", allow_relative=case["allow_relative"])
        assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
        assert info.value.data["path"] == "p" and info.value.data["reason"]


@pytest.mark.parametrize("url", ["http://[x", "http://[::1", "https://[x]/a", "http://x]/"])
def test_bracketed_hosts_are_invalid_params_not_a_crash(url):
    for method, params in (
        ("ui.navigate", {"url": url}),
        ("ui.render", {"component_id": "c", "component_type": "image", "data": {"url": url}}),
        ("ui.render", {"component_id": "c", "component_type": "card", "data": {
            "title": "t", "actions": [{"label": "l", "action": "navigate", "url": url}]}}),
    ):
        with pytest.raises(DomainError) as info:
            validate_params(method, {"session_id": "00000000-0000-0000-0000-000000000000",
                                     **params})
        assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS, (method, info.value)
        assert info.value.data["path"].endswith("url")


def test_v09_media_and_icon_urls_use_the_policy():
    assert not is_safe_url("//evil.example/x.png")
    assert not is_safe_url("/\\evil.com/x")
    assert not is_safe_url("https://user:pw@host/x", allow_relative=False)
    assert not is_safe_url("http://[x")


@pytest.mark.parametrize("source", [
    "[x](javascript:alert(1))",
    "[x](javascript:alert((1)))",
    "[x](javascript:alert(1) \"title\")",
    "[x]( javascript:alert(1))",
    "[x](\njavascript:alert(1))",
    "![x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x]&#40;javascript:alert(1)&#41;",
    "[x](javascript\\:alert(1))",
    "[x](&lt; javascript:alert(1)&gt;)",
    "[x](<javascript:alert(1)>)",
    "[r]: javascript:alert(1)\n\n[x][r]",
    "   [r]:\n  javascript:alert(1)\n\n[x][r]",
    "> [r]: javascript:alert(1)\n\n[x][r]",
    "- [r]: <javascript:alert(1)>\n\n[x][r]",
    "&lt;javascript:alert(1)&gt;",
    "<javascript:alert(1)>",
    "[x](data:text/html,hi)",
    "[x](//evil.example)",
    "[x](http://[x)",
    "[x](http://[::1)",
])
def test_markdown_unsafe_link_targets_are_neutralized(source):
    out = sanitize_markdown(source)
    assert "javascript:" not in out.lower() and "data:" not in out
    assert "//evil" not in out and "http://[" not in out
    assert sanitize_markdown(out) == out  # idempotent


def test_markdown_keeps_safe_links():
    source = ("[a](https://example.com/a?b=1&c=2) [b](/x/y \"t\") ![c](pic.png) "
              "[d](https://en.wikipedia.org/wiki/A_(b)) [r]: https://example.com/r")
    assert sanitize_markdown(source) == source.replace("&c", "&amp;c")


def test_markdown_nested_parentheses_fully_replaced():
    assert sanitize_markdown("[x](javascript:alert((1)))") == "[x](#)"


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_bidi_controls_removed_from_display_text():
    assert sanitize_text("Invoice(1)\u202etrela:tpircsavaj exe.png") == \
        "Invoice(1)trela:tpircsavaj exe.png"
    assert sanitize_text(f"a{BIDI}b<b>c</b>") == "abc"
    assert sanitize_markdown("# T\u202eitle\n[x\u2067](/a)") == "# Title\n[x](/a)"


def test_bidi_controls_removed_from_every_rendered_string():
    params = validate_params("ui.render", {
        "session_id": "00000000-0000-0000-0000-000000000000", "component_id": "c",
        "component_type": "card", "data": {"title": "Invoice(1)\u202etrela.exe",
                                           "sections": [{"label": "\u2066x", "value": "y\u200f"}]},
    })
    assert json.dumps(params, ensure_ascii=False).isprintable()
    assert params["data"]["title"] == "Invoice(1)trela.exe"
    assert params["data"]["sections"] == [{"label": "x", "value": "y"}]


def test_user_answers_keep_bidi_controls():
    """Raw answers are the person's own data: made encodable, not rewritten."""
    value = validate_params("user.respond", {"request_id": "r", "value": "\u202eabc"})["value"]
    assert value == "\u202eabc"


@pytest.mark.parametrize(("url", "reason"), [
    ("//evil.example/x.png", "protocol-relative"),
    ("/\\evil.com/x", "'\\\\'"),
    ("https://user:pw@host/x", "credentials"),
    ("http://[x", "host"),
])
def test_v09_call_sites_report_the_policy_reason(url, reason):
    from a2ui.core.surfaces import BASIC_CATALOG_ID, ValidationFailed, validate_server_message

    def update(*components):
        return {"version": "v0.9", "updateComponents": {"surfaceId": "s",
                                                        "components": list(components)}}

    image = {"id": "root", "component": "Image", "url": url}
    button = {"id": "root", "component": "Button", "child": "t", "action": {"functionCall": {
        "call": "openUrl", "args": {"url": url}, "returnType": "void"}}}
    label = {"id": "t", "component": "Text", "text": "go"}
    icon = {"version": "v0.9", "createSurface": {
        "surfaceId": "s", "catalogId": BASIC_CATALOG_ID,
        "theme": {"iconUrl": url}}}
    for message, path, why in ((update(image), "/updateComponents/components/0/url", reason),
                               # openUrl and iconUrl: format "uri" may refuse them first
                               (update(button, label),
                                "/updateComponents/components/0/action/functionCall/args/url",
                                ""),
                               (icon, "/createSurface/theme/iconUrl", "")):
        with pytest.raises(ValidationFailed) as info:
            validate_server_message(message)
        assert info.value.path == path and why in info.value.message, info.value
