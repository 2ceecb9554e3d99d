"""How Daphne is built for the app (a2ui.serving, ``manage.py a2ui_serve``); the live tests in
tests/live/test_live_payload_limits.py show the limits on real sockets."""

import pytest
from django.core.management import CommandError, call_command

from a2ui import serving


def app(scope, receive, send):  # never called: the server is built, not run
    raise AssertionError


def test_hard_cap_is_twice_the_payload_limit(settings):
    server = serving.build_server(app, ["tcp:port=0:interface=127.0.0.1"])
    assert server.websocket_max_message_size == server.websocket_max_frame_size == 2 * 1048576
    settings.A2UI = {**settings.A2UI, "MAX_PAYLOAD_SIZE": 4096}
    assert serving.websocket_hard_cap() == 8192


@pytest.mark.parametrize("cap", [1048576, 1000, 0])
def test_a_cap_that_hides_the_payload_error_is_refused(cap):
    with pytest.raises(ValueError, match="must exceed"):
        serving.build_server(app, ["tcp:port=0"], max_message_size=cap)
    with pytest.raises(CommandError, match="must exceed"):
        call_command("a2ui_serve", "-p", "0", "--websocket-max-message-size", str(cap))


def test_websocket_failures_close_cleanly():
    """failByDrop off: past the cap the peer gets a close frame (1009), not a dropped TCP."""
    server = serving.build_server(app, ["tcp:port=0"])

    class Factory:
        def setProtocolOptions(self, **options):
            self.options = options

    server.ws_factory = Factory()
    server.ready_callable()
    assert server.ws_factory.options == {"failByDrop": False}


def test_shutdown_survives_connections_without_an_application():
    """Daphne's kill_all_applications raised KeyError on a connection whose application was
    already reaped (or never started), logged a traceback and cancelled nothing else."""
    import asyncio

    server = serving.build_server(app, ["tcp:port=0"])
    loop = asyncio.new_event_loop()
    try:
        pending = loop.create_future()
        server.connections = {"idle keep-alive": {"connected": 0.0},
                              "socket": {"connected": 0.0, "application_instance": pending}}
        server.cancel_applications()
        assert pending.cancelled()
    finally:
        loop.close()


def test_bad_settings_stop_the_server_before_it_listens(settings):
    from django.core.management.base import SystemCheckError

    settings.A2UI = {**settings.A2UI, "MAX_PAYLOAD_SIZE": "big"}
    with pytest.raises(SystemCheckError, match="MAX_PAYLOAD_SIZE"):
        call_command("a2ui_serve", "-p", "0", skip_checks=False)


def test_the_command_line_runs_again_under_malloc_unless_told_otherwise(monkeypatch):
    from a2ui.management.commands.a2ui_serve import Command, reexec_argv

    monkeypatch.setattr("sys.orig_argv", ["python3", "-X", "utf8", "manage.py", "a2ui_serve",
                                          "-p", "9000"])
    executable, args, env = reexec_argv("malloc", {"PATH": "/bin"})
    assert args[1:] == ["-X", "utf8", "manage.py", "a2ui_serve", "-p", "9000"]
    assert env == {"PATH": "/bin", "PYTHONMALLOC": "malloc"}
    # already under an allocator the operator chose (or the one we set): go on here
    assert reexec_argv("malloc", {"PYTHONMALLOC": "malloc"}) is None
    assert reexec_argv("malloc", {"PYTHONMALLOC": "pymalloc_debug"}) is None
    # CPython's own allocator asked for, or a command line that does not parse
    assert reexec_argv("pymalloc", {}) is None
    assert reexec_argv(None, {}) is None
    # the command's own parser reads the option, abbreviations included
    command, line = Command(), ["manage.py", "a2ui_serve", "-p", "9000"]
    assert command.allocator_in(line) == "malloc"
    assert command.allocator_in([*line, "--allocator", "pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--allocator=pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--alloc", "pymalloc"]) == "pymalloc"
    assert command.allocator_in([*line, "--allocator", "jemalloc"]) is None
    # where exec would start another process instead of replacing this one
    monkeypatch.setattr("os.name", "nt")
    assert reexec_argv("malloc", {}) is None


def test_a_bad_allocator_is_refused():
    with pytest.raises(CommandError, match="allocator"):
        call_command("a2ui_serve", "--allocator", "jemalloc")
