"""The Prometheus metrics (``a2ui.infra.prom``, docs/operations.md "Metrics"): the hooks
count in-process, the scrape at /a2ui/metrics is answered in front of Django and is closed to
anyone not on a loopback address or holding ``A2UI['METRICS_TOKEN']``; a real push over two
protocols shows in the scrape per protocol. tests/live/test_live_metrics.py shows two Daphne
processes sharing a multiprocess directory."""

import pytest

from a2ui import probes
from a2ui.asgi import socket_protocol
from a2ui.infra import dbthreads, outages, prom
from tests.promutil import samples
from tests.serving.test_probes import call


@pytest.fixture
def app():
    from a2ui.asgi import http_application

    return http_application()


def test_off_is_a_flag_and_the_scrape_404s(settings, app):
    settings.A2UI = {**getattr(settings, "A2UI", {}), "PROMETHEUS": False}
    try:
        assert prom.setup(force=True) is False and prom.ON is False
        status, _ = probes.metrics_answer({"client": ("127.0.0.1", 1), "headers": []})
        assert status == 404
    finally:
        settings.A2UI = {**settings.A2UI, "PROMETHEUS": True}
        prom.setup(force=True)


def test_hooks_count(metrics_on):
    prom.pushed(0.003, {"jsonrpc": 1, "v09": 2, "agui": 0})
    prom.pushed(0.2, None)
    prom.socket_opened("v4.a2ui")
    prom.socket_opened("v4.a2ui")
    prom.socket_closed("v4.a2ui")
    outages.report(ConnectionRefusedError(111, "refused"), "a test")
    _, body = prom.exposition()
    got = samples(body)
    assert got[("a2ui_pushes_total", (("protocol", "jsonrpc"),))] == 1
    assert got[("a2ui_pushes_total", (("protocol", "v09"),))] == 1
    assert ("a2ui_pushes_total", (("protocol", "agui"),)) not in got  # none attached
    assert got[("a2ui_pushes_total", (("protocol", "detached"),))] == 1
    assert got[("a2ui_push_latency_seconds_bucket", (("le", "0.005"), ("protocol", "v09")))] == 1
    assert got[("a2ui_push_latency_seconds_bucket", (("le", "0.1"), ("protocol", "detached")))] == 0
    assert got[("a2ui_sockets", (("protocol", "v4.a2ui"),))] == 1
    assert got[("a2ui_db_pool_queue_depth", ())] == dbthreads.queue_depth()
    kinds = {labels for (name, labels), v in got.items() if name == "a2ui_outage_errors_total"}
    assert kinds  # the outage (whatever kind outages.cause gave it) was counted
    outages.reset()


def test_labels_are_bounded():
    assert prom.label("Bad Label!") == "other"
    for i in range(prom.MAX_LABELS + 5):
        prom.label(f"x{i}", kind="bounded-test")
    assert prom.label("y-new", kind="bounded-test") == "other"
    assert socket_protocol("/ws/v4/a2ui/agent") == "v4.a2ui.agent"
    assert socket_protocol("/ws/agui") == "agui"


@pytest.mark.parametrize("client,auth,status", [
    ("127.0.0.1", None, 200), ("::1", None, 200), ("10.0.0.5", None, 403),
    ("10.0.0.5", "Bearer s3cret", 200), ("10.0.0.5", "Bearer wrong", 403),
    ("10.1.2.3", None, 200),  # in METRICS_NETWORKS
    ("garbage", None, 403)])
def test_who_may_scrape(metrics_on, settings, client, auth, status):
    settings.A2UI = {**settings.A2UI, "METRICS_TOKEN": "s3cret",
                     "METRICS_NETWORKS": ["127.0.0.0/8", "::1/128", "10.1.0.0/16"]}
    headers = [(b"authorization", auth.encode())] if auth else []
    got, _ = probes.metrics_answer({"client": (client, 1), "headers": headers})
    assert got == status


async def test_the_scrape_is_answered_in_front_of_django(metrics_on, app):
    status, headers, body = await call(app, "/a2ui/metrics")
    assert status == 200, body
    assert headers["content-type"].startswith("text/plain")
    assert b"a2ui_pushes_total" in body or b"# HELP a2ui_pushes" in body
    status, _, _ = await call(app, "/a2ui/metrics", method="POST")
    assert status == 405


def test_a_batch_counts_its_pushes_and_one_latency(metrics_on):
    """A batch of ``count`` pushes: that many pushes, one latency observation (its time);
    protocols beyond the label bound are ``other``, not new series."""
    prom.pushed(0.003, {"jsonrpc": 1}, count=5)
    prom.pushed(0.003, {"jsonrpc": 1})
    prom.pushed(0.01, {"Not A Label": 1})
    got = samples(prom.exposition()[1])
    assert got[("a2ui_pushes_total", (("protocol", "jsonrpc"),))] == 6
    assert got[("a2ui_push_latency_seconds_count", (("protocol", "jsonrpc"),))] == 2
    assert got[("a2ui_push_latency_seconds_bucket", (("le", "0.0025"), ("protocol", "jsonrpc")))] == 0
    assert got[("a2ui_push_latency_seconds_bucket", (("le", "0.005"), ("protocol", "jsonrpc")))] == 2
    assert abs(got[("a2ui_push_latency_seconds_sum", (("protocol", "jsonrpc"),))] - 0.006) < 1e-9
    assert got[("a2ui_pushes_total", (("protocol", "other"),))] == 1
