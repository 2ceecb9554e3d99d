"""The static files the app serves itself (A2UI['SERVE_STATIC']): a path that climbs out of the
static roots is a 400 (one WARNING line), not a 500 with a traceback; real files are served."""

import logging

import pytest
from channels.testing import HttpCommunicator

from a2ui.asgi import http_application


@pytest.mark.parametrize("path", ["/static/../../etc/passwd", "/static/a2ui/../../../x",
                                  "/static/..%2f..%2fetc/passwd"])
async def test_a_path_out_of_the_static_roots_is_400(path, caplog):
    caplog.set_level(logging.WARNING)
    response = await HttpCommunicator(http_application(), "GET", path).get_response(timeout=5)
    assert response["status"] in (400, 404), response["status"]
    assert not [r for r in caplog.records if r.name == "django.request" and
                r.levelno >= logging.ERROR]


async def test_static_files_are_served():
    comm = HttpCommunicator(http_application(), "GET", "/static/a2ui/favicon.svg")
    await comm.send_input({"type": "http.request", "body": b""})
    start = await comm.receive_output(timeout=5)
    assert start["status"] == 200
    assert (b"Content-Type", b"image/svg+xml") in start["headers"]
    await comm.wait(timeout=5)
