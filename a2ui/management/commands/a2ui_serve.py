"""``manage.py a2ui_serve``: run Daphne the one way this project runs it.

Daphne's own CLI options for where to listen (``-b``/``-p``, ``-u``, ``--fd``, ``-e``) and how to
behave behind a proxy, with the WebSocket transport limits derived from
``A2UI['MAX_PAYLOAD_SIZE']`` (see :mod:`a2ui.serving`): frames up to twice the limit reach the
app and get ``-32002``; larger ones are closed with 1009. The edge's deadlines and connection
caps (``--header-timeout``, ``--max-connections-per-address``...; ``A2UI['EDGE_*']``) guard
the process against slow clients and connection floods. SIGTERM (and SIGINT unless ignored)
stops the server: open sockets are closed, applications cancelled, exit status 0.

Run from the command line, it serves with C ``malloc`` as Python's allocator (``--allocator``,
default ``malloc``; it runs itself once more with ``PYTHONMALLOC=malloc``, and glibc's
``MALLOC_ARENA_MAX=2`` unless set, unless ``PYTHONMALLOC`` is set already). CPython's own small-object allocator gives a 1 MB arena back only once every
object in it is freed, so after a burst of sockets the process kept what the burst used; with
``malloc`` the full collection after a mass close (``a2ui.infra.memory``) hands the freed
pages back. It costs CPU: docs/performance.md has both figures; ``--allocator pymalloc`` keeps
CPython's. ``--allocator jemalloc`` runs on C ``malloc`` with jemalloc preloaded in glibc's
place (``LD_PRELOAD``; ``MALLOC_CONF`` as :data:`JEMALLOC_CONF` unless set): less memory per
idle socket and more of it back after a mass close (docs/performance.md, "Memory after close").
"""

import logging
import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import import_string

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Connections the kernel queues for ``accept()`` on the sockets this command listens on.
#: Twisted's default is 50: under a connection flood the queue filled, and the kernel dropped
#: other clients' SYNs (each connect then waited a second or more for the retry).
DEFAULT_BACKLOG = 1024
ALLOCATORS = ("malloc", "pymalloc", "jemalloc")
#: glibc's malloc arenas under ``--allocator malloc`` (``MALLOC_ARENA_MAX``, unless set): the
#: database threads otherwise each get arenas of their own, which fragment and keep pages after
#: a mass close (RSS after 3,000 sockets closed: 1.11 of before with 2, 1.16 with glibc's
#: default; docs/performance.md, "Capacity").
MALLOC_ARENA_MAX = "2"
#: jemalloc's options under ``--allocator jemalloc`` (``MALLOC_CONF``, unless set): a thread of
#: its own hands pages freed a second ago back to the system (``dirty_decay_ms``), so an idle
#: process after a mass close shrinks without waiting for allocations to trigger the purge.
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"


def jemalloc_library():
    """The jemalloc shared library's name as the dynamic loader finds it (Debian's
    ``libjemalloc2``: ``libjemalloc.so.2``), or None."""
    import ctypes.util

    return ctypes.util.find_library("jemalloc")


def reexec_argv(allocator, environ):
    """``(executable, argv, env)`` to run this command again under ``allocator`` (the
    ``--allocator`` asked for), or None to go on in this process: the allocator is chosen when
    the interpreter starts."""
    if allocator not in ("malloc", "jemalloc") or "PYTHONMALLOC" in environ:
        return None  # CPython's allocator asked for, or the operator chose one already
    if os.name != "posix" or not sys.executable:
        return None  # exec would not keep the process (Windows), or no interpreter to run
    orig = getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv]
    env = {**environ, "PYTHONMALLOC": "malloc"}
    if allocator == "jemalloc":
        library = jemalloc_library()
        if library is None:
            raise CommandError("--allocator jemalloc: the jemalloc library is not installed "
                               "(Debian: apt-get install libjemalloc2)")
        env["LD_PRELOAD"] = " ".join(filter(None, [library, environ.get("LD_PRELOAD")]))
        env.setdefault("MALLOC_CONF", JEMALLOC_CONF)
    else:
        env.setdefault("MALLOC_ARENA_MAX", MALLOC_ARENA_MAX)
    return sys.executable, [sys.executable, *orig[1:]], env


def allocator_name(environ):
    """The allocator this process runs on, for the log."""
    if "jemalloc" in environ.get("LD_PRELOAD", "") and environ.get("PYTHONMALLOC") == "malloc":
        return "jemalloc"
    return environ.get("PYTHONMALLOC", "pymalloc")


def with_backlog(endpoints, backlog):
    """Daphne's endpoint strings for ``-b``/``-p`` and ``-u`` with Twisted's ``backlog`` option
    (the kernel caps it at ``net.core.somaxconn``); an inherited socket (``--fd``) keeps the
    backlog its owner gave it."""
    return [f"{e}:backlog={backlog}" if e.startswith(("tcp:", "unix:")) else e
            for e in endpoints]


def _daphne_logging(verbosity, log_fmt):
    """Daphne's own log lines on stderr, without a root handler (which would print every record
    of the project's loggers a second time)."""
    logger = logging.getLogger("daphne")
    logger.setLevel({0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG))
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(log_fmt))
        logger.addHandler(handler)
        logger.propagate = False


class Command(BaseCommand):
    help = ("Serve the project with Daphne, the WebSocket limits set from A2UI['MAX_PAYLOAD_SIZE'] "
            "(oversized frames get -32002 up to twice the limit, then close 1009).")

    def run_from_argv(self, argv):
        try:
            again = reexec_argv(self.allocator_in(argv), os.environ)
        except CommandError as exc:
            self.stderr.write(f"CommandError: {exc}")
            sys.exit(2)
        if again is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os.execve(*again)  # the same process (pid, signals, descriptors), a new interpreter
        super().run_from_argv(argv)

    def allocator_in(self, argv):
        """``--allocator`` of a command line, as this command's own parser reads it (None when
        the line does not parse: ``run_from_argv`` then reports why)."""
        try:
            options, _ = self.create_parser(argv[0], argv[1]).parse_known_args(argv[2:])
        except (CommandError, SystemExit):
            return None
        return options.allocator

    def add_arguments(self, parser):
        parser.add_argument("application", nargs="?", default=None,
                            help="ASGI application path (default: settings.ASGI_APPLICATION)")
        parser.add_argument("-b", "--bind", dest="host", default=None,
                            help=f"address to bind to (default {DEFAULT_HOST})")
        parser.add_argument("-p", "--port", type=int, default=None,
                            help=f"port to listen on (default {DEFAULT_PORT})")
        parser.add_argument("-u", "--unix-socket", dest="unix_socket", default=None,
                            help="bind to a UNIX socket instead of a TCP host/port")
        parser.add_argument("--fd", type=int, dest="file_descriptor", default=None,
                            help="serve an inherited, already listening socket (file descriptor)")
        parser.add_argument("-e", "--endpoint", dest="socket_strings", action="append",
                            default=[], help="raw Twisted endpoint string (repeatable)")
        parser.add_argument("--proxy-headers", action="store_true",
                            help="take the client address and scheme from X-Forwarded-For, "
                                 "X-Forwarded-Port and X-Forwarded-Proto of the trusted "
                                 "proxies (A2UI['EDGE_TRUSTED_PROXIES']), read from the right")
        parser.add_argument("--root-path", default=None,
                            help="ASGI root_path (default: settings.FORCE_SCRIPT_NAME)")
        parser.add_argument("--access-log", default=None,
                            help="access log file ('-' for stdout, the default at verbosity 1)")
        parser.add_argument("--log-fmt", default="%(asctime)-15s %(levelname)-8s %(message)s")
        parser.add_argument("-t", "--http-timeout", type=int, default=None,
                            help="seconds before an unanswered HTTP request times out")
        parser.add_argument("--websocket-timeout", type=int, default=86400,
                            help="seconds a WebSocket may stay open (-1: forever)")
        parser.add_argument("--websocket-connect-timeout", type=int, default=5,
                            help="seconds for the WebSocket handshake")
        parser.add_argument("--ping-interval", type=int, default=20)
        parser.add_argument("--ping-timeout", type=int, default=30)
        parser.add_argument("--application-close-timeout", type=int, default=10)
        parser.add_argument("--websocket-max-message-size", type=int, default=None,
                            help="transport cap per WebSocket message and frame, bytes; must "
                                 "exceed A2UI['MAX_PAYLOAD_SIZE'] (default: twice it)")
        parser.add_argument("--backlog", type=int, default=DEFAULT_BACKLOG,
                            help="connections the kernel queues before they are accepted, for "
                                 f"-b/-p and -u (default {DEFAULT_BACKLOG}; capped by "
                                 "net.core.somaxconn)")
        parser.add_argument("--header-timeout", type=int, default=None,
                            help="seconds for a request's head to arrive, from the connection's "
                                 "opening or the request's first byte (default: "
                                 "A2UI['EDGE_HEADER_TIMEOUT_SECONDS'])")
        parser.add_argument("--body-timeout", type=int, default=None,
                            help="seconds for a request's body to arrive after its head "
                                 "(default: A2UI['EDGE_BODY_TIMEOUT_SECONDS'])")
        parser.add_argument("--keepalive-timeout", type=int, default=None,
                            help="seconds an idle keep-alive connection stays open (default: "
                                 "A2UI['EDGE_KEEPALIVE_TIMEOUT_SECONDS'])")
        parser.add_argument("--max-connections-per-address", type=int, default=None,
                            help="TCP connections one peer address may hold, 0 for no cap "
                                 "(default: A2UI['EDGE_MAX_CONNECTIONS_PER_ADDRESS'])")
        parser.add_argument("--max-connections", type=int, default=None,
                            help="TCP connections the process may hold, never more than its "
                                 "descriptor limit allows (default: "
                                 "A2UI['EDGE_MAX_CONNECTIONS'], or that limit's)")
        parser.add_argument("--allocator", choices=ALLOCATORS, default=ALLOCATORS[0],
                            help="Python's memory allocator from the command line: 'malloc' "
                                 "(default; memory freed after a burst goes back to the system), "
                                 "'jemalloc' (C malloc replaced by jemalloc, which must be "
                                 "installed: less memory per socket, more of it back after a "
                                 "mass close) or 'pymalloc' (CPython's, less CPU; keeps the "
                                 "burst's high-water mark). PYTHONMALLOC, if set, wins")

    def handle(self, *args, **options):
        from daphne.endpoints import build_endpoint_description_strings

        from a2ui import serving
        from a2ui.conf import a2ui_settings

        verbosity = options["verbosity"]
        _daphne_logging(verbosity, options["log_fmt"])
        host, port = options["host"], options["port"]
        if not any([host, port is not None, options["unix_socket"],
                    options["file_descriptor"] is not None, options["socket_strings"]]):
            host, port = DEFAULT_HOST, DEFAULT_PORT
        elif host and port is None:
            port = DEFAULT_PORT
        elif port is not None and not host:
            host = DEFAULT_HOST
        if options["backlog"] <= 0:
            raise CommandError("--backlog must be a positive integer.")
        endpoints = sorted(options["socket_strings"] + with_backlog(
            build_endpoint_description_strings(
                host=host, port=port, unix_socket=options["unix_socket"],
                file_descriptor=options["file_descriptor"]),
            options["backlog"]))

        access_log = None
        if options["access_log"] == "-":
            access_log = sys.stdout
        elif options["access_log"]:
            access_log = open(options["access_log"], "a", 1)  # noqa: SIM115 (the server's life)
        elif verbosity >= 1:
            access_log = sys.stdout
        from daphne.access import AccessLogGenerator

        path = options["application"] or getattr(settings, "ASGI_APPLICATION", None)
        if not path:
            raise CommandError("Name the ASGI application or set settings.ASGI_APPLICATION.")
        application = import_string(path)
        proxy = options["proxy_headers"]
        root_path = options["root_path"]
        if root_path is None:
            root_path = getattr(settings, "FORCE_SCRIPT_NAME", "") or ""
        edge_options = {name: options[name] for name in (
            "header_timeout", "body_timeout", "keepalive_timeout", "max_connections")}
        for name, value in edge_options.items():
            if value is not None and value <= 0:
                raise CommandError(f"--{name.replace('_', '-')} must be a positive integer.")
        per_address = options["max_connections_per_address"]
        if per_address is not None and per_address < 0:
            raise CommandError("--max-connections-per-address must be 0 (no cap) or more.")
        edge = serving.Edge.from_settings(per_address=per_address, **edge_options)
        try:
            server = serving.build_server(
                application, endpoints,
                max_message_size=options["websocket_max_message_size"],
                edge=edge,
                http_timeout=options["http_timeout"],
                ping_interval=options["ping_interval"],
                ping_timeout=options["ping_timeout"],
                websocket_timeout=options["websocket_timeout"],
                websocket_connect_timeout=options["websocket_connect_timeout"],
                websocket_handshake_timeout=options["websocket_connect_timeout"],
                application_close_timeout=options["application_close_timeout"],
                action_logger=AccessLogGenerator(access_log) if access_log else None,
                root_path=root_path,
                verbosity=verbosity,
                proxy_forwarded_address_header="X-Forwarded-For" if proxy else None,
                proxy_forwarded_port_header="X-Forwarded-Port" if proxy else None,
                proxy_forwarded_proto_header="X-Forwarded-Proto" if proxy else None,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        logging.getLogger("daphne").info(
            "a2ui_serve: %s; payload limit %d bytes, WebSocket cap %d bytes; allocator %s; "
            "edge: %s (descriptor limit %s)",
            ", ".join(endpoints), a2ui_settings.MAX_PAYLOAD_SIZE,
            server.websocket_max_message_size, allocator_name(os.environ),
            edge.describe(), serving.descriptor_limit(),
        )
        server.run()
        if server.abort_start:
            raise CommandError("Daphne could not listen; see the log above.")
