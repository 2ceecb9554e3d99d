"""XSS corpus: every payload, in every text and URL position, must come out inert.

"Inert" = the output has no ``<`` or ``>`` at all and no ``&`` that is not an entity,
so it is plain text under both client rules (insert as HTML; or decode entities and set
textContent); and every URL field holds only http(s) or relative URLs.
"""

import html
import json
import re

import pytest

from a2ui.core.content.methods import validate_params
from a2ui.core.content.sanitize import check_url, sanitize_markdown, sanitize_text, sanitize_tree
from a2ui.core.errors import DomainError
from a2ui.rpc.errors import ErrorCode, ProtocolError

TEXT_PAYLOADS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    '<img src="x" onerror="alert(document.cookie)">',
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<body onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    '<a href="javascript:alert(1)">click</a>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<<script>script>alert(1)<</script>/script>",
    "<scr<script>ipt>alert(1)</script>",
    "<style>*{background:url(javascript:alert(1))}</style>",
    "<div style=\"background:url('javascript:alert(1)')\">x</div>",
    "<object data=javascript:alert(1)>",
    "<embed src=javascript:alert(1)>",
    "<template><img src=x onerror=alert(1)></template>",
    "<textarea><img src=x onerror=alert(1)></textarea>",
    "<details open ontoggle=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<!--<img src=x onerror=alert(1)>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;img src=x onerror=alert(1)&#62;",
    "&#x3C;svg onload=alert(1)&#x3E;",
    "&amp;lt;script&amp;gt;alert(1)",
    '"><script>alert(1)</script>',
    "'><img src=x onerror=alert(1)>",
    "<img src=x onerror=alert(1)//",
    "<img\tsrc=x\nonerror=alert(1)>",
    "\x00<script>alert(1)</script>",
    "<scrip\x00t>alert(1)</script>",
    '<a href="jav&#x09;ascript:alert(1)">x</a>',
]

ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);")


def assert_inert(text):
    assert "<" not in text and ">" not in text, text
    assert "&" not in ENTITY.sub("", text), text
    decoded = html.unescape(text)  # what textContent would show: must not matter, but
    assert "\x00" not in decoded  # and the raw form never contains live markup


def walk_strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from walk_strings(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from walk_strings(item)


@pytest.mark.parametrize("payload", TEXT_PAYLOADS)
def test_sanitize_text_inert(payload):
    out = sanitize_text(payload)
    assert_inert(out)
    assert sanitize_text(out) == out  # idempotent: safe to re-sanitize stored data


@pytest.mark.parametrize("payload", TEXT_PAYLOADS)
def test_event_handlers_never_survive_as_markup(payload):
    out = sanitize_text(payload)
    # onerror=... may survive only as escaped text (e.g. from entity-encoded input)
    if "onerror" in out or "onload" in out:
        assert "&lt;" in out or "&amp;" in out


def test_plain_text_untouched():
    assert sanitize_text("Found 2 results.") == "Found 2 results."
    assert sanitize_text("$40.00 / $50.00 — 80%") == "$40.00 / $50.00 — 80%"
    assert sanitize_text("a < b & c") == "a &lt; b &amp; c"
    assert sanitize_text("<b>bold</b> text") == "bold text"


def _positions(payload):
    """(method, params) with the payload in every display-text position of the seed."""
    p = payload
    return [
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "card",
                "data": {
                    "title": p,
                    "description": p,
                    "sections": [{"label": p, "value": p}],
                    "actions": [{"label": p, "action": p, "url": "/ok"}],
                    "extra": {"deep": [p]},
                },
            },
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "table",
                "data": {
                    "headers": [{"key": "name", "label": p}],
                    "rows": [{"name": "ok"}, {"name": "ok"}, {"name": p, p: p}],
                },
            },
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "form",
                "data": {
                    "fields": [
                        {
                            "name": "f",
                            "type": "select",
                            "label": p,
                            "placeholder": p,
                            "options": [p],
                        }
                    ],
                    "submit_label": p,
                    "cancel_label": p,
                },
            },
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "chart",
                "data": {
                    "chart_type": "line",
                    "title": p,
                    "x_axis": {"label": p, "values": [p]},
                    "y_axis": {"label": p},
                    "series": [{"name": p, "data": [1]}],
                },
            },
        ),
        ("ui.render", {"component_id": "c", "component_type": "markdown", "data": {"content": p}}),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "code",
                "data": {"code": p, "language": "html", "title": p},
            },
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "image",
                "data": {"url": "/i.png", "alt": p, "caption": p},
            },
        ),
        (
            "ui.render",
            {"component_id": "c", "component_type": "alert", "data": {"title": p, "message": p}},
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "steps",
                "data": {"steps": [{"label": p, "status": "pending", "description": p}]},
                "metadata": {"note": p},
            },
        ),
        ("ui.update", {"component_id": "c", "operation": "merge", "data": {"title": p}}),
        (
            "ui.request_input",
            {
                "request_id": "r",
                "input_type": "select",
                "prompt": p,
                "options": [p],
                "validation": {"pattern": p},
            },
        ),
        ("ui.confirm", {"request_id": "r", "title": p, "description": p}),
        ("ui.progress", {"task_id": "t", "progress_type": "streaming", "message": p}),
        ("ui.notify", {"level": "error", "title": p, "message": p}),
        (
            "a2ui.init",
            {
                "client_info": {"name": p, "version": p},
                "capabilities": {"v0.9": {"x": p}, "other": p},
            },
        ),
        ("user.approve", {"request_id": "r", "approved": True, "reason": p}),
        ("user.cancel", {"task_id": "t", "reason": p}),
    ]


@pytest.mark.parametrize("payload", TEXT_PAYLOADS)
def test_payloads_inert_in_every_position(payload):
    for method, params in _positions(payload):
        cleaned = validate_params(method, json.loads(json.dumps(params)))
        for text in walk_strings(cleaned):
            assert_inert(text)


BAD_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "\x01javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "java\rscript:alert(1)",
    "java\x00script:alert(1)",
    "javascript\t:alert(1)",
    "jav\u200bascript:alert(1)",
    "javascript&colon;alert(1)",
    "javascript&#58;alert(1)",
    "javascript&#x3A;alert(1)",
    "&#106;avascript:alert(1)",
    "javascript&amp;colon;alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.com/x",
    "blob:https://example.com/uuid",
    "//evil.example/x",
    "/\\evil.example/x",
    "\\\\evil.example\\x",
    "https:evil.example",
    "https:/evil.example",
    "https://",
    "https://user:pass@evil.example/",
    'https://ok.example/"onmouseover="alert(1)',
    "https://ok.example/'><script>",
    "https://ok.example/<x>",
    "https://ok.example/a b",
    "https://ok.example/\u2028",
    "x:y",
    "",
    "https://example.com/" + "a" * 2048,
]

GOOD_URLS = [
    "https://example.com/results",
    "http://localhost:8000/x?a=1&b=2#frag",
    "HTTPS://EXAMPLE.COM/",
    "/agents/abc",
    "relative/path.png",
    "?page=2",
    "#section",
    "./a:b",
    "/a:b/c",
    "https://example.com/%E2%9C%93",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_check_url_rejects(url):
    with pytest.raises(DomainError) as info:
        check_url(url, "params.url")
    assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == "params.url"


@pytest.mark.parametrize("url", GOOD_URLS)
def test_check_url_accepts(url):
    assert check_url(url, "p") == url


def _url_positions(url):
    return [
        ("ui.navigate", {"url": url}, "params.url"),
        (
            "ui.render",
            {"component_id": "c", "component_type": "image", "data": {"url": url}},
            "params.data.url",
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "card",
                "data": {
                    "title": "t",
                    "actions": [{"label": "l", "action": "navigate", "url": url}],
                },
            },
            "params.data.actions[0].url",
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "table",
                "data": {
                    "headers": [{"key": "k", "label": "K"}],
                    "rows": [{"k": 1}, {"k": 2}, {"k": 3, "href": url}],
                },
            },
            "params.data.rows[2].href",
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "alert",
                "data": {"message": "m", "link": {"href": url}},
            },
            "params.data.link.href",
        ),
        (
            "ui.render",
            {
                "component_id": "c",
                "component_type": "card",
                "data": {"title": "t", "thumbnail_url": url},
            },
            "params.data.thumbnail_url",
        ),
        (
            "ui.render",
            {"component_id": "c", "component_type": "code", "data": {"code": "x", "src": url}},
            "params.data.src",
        ),
        ("ui.notify", {"level": "info", "title": "t", "url": url}, "params.url"),
        (
            "ui.update",
            {"component_id": "c", "operation": "merge", "data": {"url": url}},
            "params.data.url",
        ),
    ]


@pytest.mark.parametrize("url", [u for u in BAD_URLS if u])
def test_bad_urls_rejected_in_every_url_field(url):
    for method, params, path in _url_positions(url):
        with pytest.raises(DomainError) as info:
            validate_params(method, params)
        assert ProtocolError.of(info.value).code == ErrorCode.INVALID_PARAMS
        assert info.value.data["path"] == path, (method, info.value.data)


@pytest.mark.parametrize("url", GOOD_URLS)
def test_good_urls_pass_unchanged_in_every_url_field(url):
    for method, params, _path in _url_positions(url):
        validate_params(method, params)
    assert validate_params("ui.navigate", {"url": url})["url"] == url


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[x](javascript:alert(1))", "[x](#)"),
        ("[x]( JavaScript:alert(1))", "[x]( #)"),
        ("![i](data:image/svg+xml,abc)", "![i](#)"),
        ("[x](//evil.example)", "[x](#)"),
        ("[x](https://ok.example/a?b=1&c=2)", "[x](https://ok.example/a?b=1&amp;c=2)"),
        ("[x](/docs)", "[x](/docs)"),
        ("[ref]: javascript:alert(1)\n", "[ref]: #\n"),
        ("[ref]: https://ok.example\n", "[ref]: https://ok.example\n"),
        ("[x](javascript&colon;alert(1))", "[x](#)"),
    ],
)
def test_markdown_links(markdown, expected):
    assert sanitize_markdown(markdown) == expected
    cleaned = validate_params(
        "ui.render",
        {"component_id": "m", "component_type": "markdown", "data": {"content": markdown}},
    )
    assert cleaned["data"]["content"] == expected


def test_markdown_keeps_formatting():
    text = "## Report\n\n**3 findings**:\n\n1. `research` category\n2. a > b"
    assert sanitize_markdown(text) == text.replace(">", "&gt;")


def test_sanitize_tree_skips_url_keys_but_checks_them():
    tree = {"url": "https://x.example/?a=1&b=2", "label": "a&b", "items": [{"href": "/p"}]}
    assert sanitize_tree(tree) == {
        "url": "https://x.example/?a=1&b=2",
        "label": "a&amp;b",
        "items": [{"href": "/p"}],
    }
    with pytest.raises(DomainError):
        sanitize_tree({"nested": [{"url": "javascript:x"}]})


def test_sanitize_tree_rejects_non_json():
    with pytest.raises(DomainError):
        sanitize_tree({"x": object()})
    with pytest.raises(DomainError):
        sanitize_tree({"x": float("nan")})
    with pytest.raises(DomainError):
        sanitize_tree({1: "x"})


def test_lone_surrogates_repaired():
    assert sanitize_text("a\ud83d\ude00b") == "a\U0001f600b"
    assert sanitize_text("a\ud800<b>") == "a\ufffd"


@pytest.mark.parametrize("key", ["url\x7f", "url\x00", "image_url\x1f", "href\x7f"])
def test_a_key_that_becomes_a_url_key_is_checked_as_one(key):
    """Sanitizing takes control and format characters out of keys: the key as stored decides
    whether its value is a URL (``url\\x7f`` is stored as ``url``)."""
    with pytest.raises(DomainError):
        sanitize_tree({key: "javascript:alert(1)"})


def test_a_component_is_checked_as_stored():
    """A key that sanitizing turns into a known field ("x_axis\\x7f" -> "x_axis") is checked as
    that field: a string x_axis was stored and broke every reader of the chart."""
    from a2ui.core.content.components import validate_component

    with pytest.raises(DomainError) as caught:
        validate_component("chart", {"chart_type": "bar", "x_axis\x7f": "javascript:alert(1)",
                                     "series": [{"name": "a", "data": [1]}]})
    assert caught.value.data["reason"] == "must be an object"
    with pytest.raises(DomainError):
        validate_component("card", {"title": "t", "image_url\x7f": "javascript:alert(1)"})
