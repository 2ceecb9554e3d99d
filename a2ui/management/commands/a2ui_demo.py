"""``manage.py a2ui_demo``: the README's main job.

Migrates, makes sure a demo user and a demo agent exist (the agent gets a fresh key each run,
kept in memory only), starts Daphne (``manage.py a2ui_serve``, the way production runs it), and
connects the demo agent over the agent WebSocket. It prints the URL and the login.

Ctrl-C (SIGINT), SIGTERM or SIGHUP stop it: Daphne gets SIGTERM and is waited for (killed and
waited for if it lingers), then the command exits with status 0. A signal the command was
started with ignored (SIGINT of a background job, SIGHUP under nohup) stays ignored; nothing is
read from stdin, so it runs the same in a terminal, in the background, under setsid or nohup.
"""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from a2ui import tokens
from a2ui.demo import DEMO_CONSENT, run_agent
from a2ui.models import Agent

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-password"
DEMO_AGENT = "demo-agent"
#: ``--agent pydantic-ai``: a pydantic-ai agent (a2ui.demo_agents) run as a remote agent in the
#: server's process; the page opens with the chat, the default agent is that one.
FRAMEWORK_AGENTS = {"pydantic-ai": ("pydantic-helper", "a2ui.demo_agents:app")}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
DAPHNE_STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL


def serve_command(*args):
    """``manage.py a2ui_serve ARGS`` for this project, whatever directory we were started from."""
    return [sys.executable, "-m", "django", "a2ui_serve", *args]


def serve_env(**extra):
    path = os.pathsep.join(p for p in (sys.path[0], os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, DJANGO_SETTINGS_MODULE=settings.SETTINGS_MODULE, PYTHONPATH=path,
                **extra)


def stop_process(process, timeout=DAPHNE_STOP_TIMEOUT):
    """SIGTERM, wait; SIGKILL and wait if it lingers. Always reaps: no zombie is left."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


class Command(BaseCommand):
    help = "Run the server with a demo agent that shows every component type."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-migrate", action="store_true")
        parser.add_argument("--agent", choices=sorted(FRAMEWORK_AGENTS), default=None,
                            help="Also serve an agent built with this framework (offline model "
                                 "unless its API key is set) and open the page with it.")

    def handle(self, *args, host, port, no_migrate, agent=None, **options):
        self._stopping = threading.Event()
        self._loop = self._agent_stop = None
        previous = self._install_signal_handlers()
        daphne = None
        try:
            if not no_migrate:
                call_command("migrate", interactive=False, verbosity=0)
            self._ensure_user()
            key = self._ensure_agent()
            default, page = DEMO_AGENT, "/a2ui/"
            if agent is not None:
                default, page = self._ensure_framework_agent(agent), "/a2ui/?chat=1"
            if self._stopping.is_set():
                return
            daphne = subprocess.Popen(
                serve_command("-b", host, "-p", str(port)),
                env=serve_env(A2UI_DEFAULT_AGENT=default,
                              A2UI_REQUIRED_CONSENTS=DEMO_CONSENT),
                stdin=subprocess.DEVNULL,
            )
            if not self._wait_for_port(host, port, daphne):
                return
            base = f"http://{host}:{port}"
            self.stdout.write(self.style.SUCCESS("\na2ui demo is running."))
            self.stdout.write(f"  Open      {base}{page}")
            if agent is not None:
                self.stdout.write(f"  Agent     {default}: {agent}, run in the server's "
                                  "process (docs/remote-agents.md); write to it in the chat")
            self.stdout.write(f"  Log in    {DEMO_USER} / {DEMO_PASSWORD}")
            self.stdout.write(f"  Admin     {base}/admin/ (same login)")
            self.stdout.write(f"  API docs  {base}/api/docs/")
            self.stdout.write(f"  Consent   {DEMO_CONSENT!r} is asked for; yours: "
                              f"{base}/api/v4/consents, revoke: POST "
                              f"{base}/api/v4/consents/revoke, or in the admin's consent list")
            self.stdout.write("  Ctrl-C (or SIGTERM) stops everything.\n")
            asyncio.run(self._agent(f"ws://{host}:{port}/ws/v4/a2ui/agent", key, daphne))
            if not self._stopping.is_set():
                raise CommandError(f"Daphne exited with status {daphne.returncode}.")
        finally:
            if daphne is not None:
                stop_process(daphne)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.stdout.write("Stopped.")

    # Stopping ---------------------------------------------------------------------------------

    def _install_signal_handlers(self):
        previous = {}
        for sig in STOP_SIGNALS:
            handler = signal.getsignal(sig)
            if handler is signal.SIG_IGN:
                continue  # ignored when we were started (background job, nohup): keep it so
            previous[sig] = handler
            signal.signal(sig, self._on_signal)
        return previous

    def _on_signal(self, signum, frame):
        """Never raises: every phase of the command checks the flag (or its event) and unwinds
        through the ``finally`` that stops Daphne."""
        self._stopping.set()
        loop, event = self._loop, self._agent_stop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is already closed
                pass

    def _wait_for_port(self, host, port, process, timeout=30):
        """True once Daphne listens; False when asked to stop first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._stopping.is_set():
            if process.poll() is not None:
                raise CommandError("Daphne exited during start-up; see its output above.")
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.2)
        if self._stopping.is_set():
            return False
        raise CommandError(f"Daphne did not listen on {host}:{port} within {timeout} s.")

    async def _agent(self, url, key, daphne):
        """The demo agent, until a stop signal or until Daphne exits on its own."""
        stop = asyncio.Event()
        self._agent_stop, self._loop = stop, asyncio.get_running_loop()
        if self._stopping.is_set():
            stop.set()

        async def watch_daphne():
            while daphne.poll() is None:
                await asyncio.sleep(0.5)
            stop.set()

        watcher = asyncio.ensure_future(watch_daphne())
        try:
            await run_agent(url, key, stop)
        finally:
            watcher.cancel()
            self._loop = None

    def _ensure_framework_agent(self, framework):
        """The framework's agent, registered as an in-process remote agent; its name."""
        import importlib.util

        name, target = FRAMEWORK_AGENTS[framework]
        if importlib.util.find_spec("pydantic_ai") is None:
            raise CommandError("--agent pydantic-ai needs pydantic-ai: pip install "
                               "'django-a2ui[agents]' (make install does).")
        from a2ui.remote import store

        found = Agent.objects.filter(name=name).first()
        if found is None:
            found, _ = tokens.create_agent(name, display_name="pydantic-ai helper")
        elif not found.is_active:
            found.is_active, found.revoked_at = True, None
            found.save(update_fields=["is_active", "revoked_at"])
        store.register(found, "agui", "", None, {"path": "/"}, target)
        return name

    def _ensure_user(self):
        User = get_user_model()
        user = User.objects.filter(username=DEMO_USER).first()
        if user is None:
            user = User.objects.create_superuser(DEMO_USER, "demo@example.com", DEMO_PASSWORD)
        return user

    def _ensure_agent(self):
        agent = Agent.objects.filter(name=DEMO_AGENT).first()
        if agent is None:
            agent, key = tokens.create_agent(
                DEMO_AGENT, display_name="Demo Agent",
                owner=get_user_model().objects.get(username=DEMO_USER),
            )
            return key
        if not agent.is_active:
            agent.is_active, agent.revoked_at = True, None
            agent.save(update_fields=["is_active", "revoked_at"])
        return tokens.rotate_agent_key(agent)
