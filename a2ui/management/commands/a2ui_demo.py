"""``manage.py a2ui_demo``: the README's main job.

Migrates, makes sure a demo user and a demo agent exist (the agent gets a fresh key each run,
kept in memory only), starts Daphne, and connects the demo agent over the agent WebSocket. It
prints the URL and the login; Ctrl-C stops Daphne and the agent cleanly.
"""

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from ... import tokens
from ...demo import run_agent
from ...models import Agent

DEMO_USER = "demo"
DEMO_PASSWORD = "demo-password"
DEMO_AGENT = "demo-agent"


def _wait_for_port(host, port, process, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CommandError("Daphne exited during start-up; see its output above.")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise CommandError(f"Daphne did not listen on {host}:{port} within {timeout} s.")


class Command(BaseCommand):
    help = "Run the server with a demo agent that shows every component type."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-migrate", action="store_true")

    def handle(self, *args, host, port, no_migrate, **options):
        if not no_migrate:
            call_command("migrate", interactive=False, verbosity=0)
        self._ensure_user()
        key = self._ensure_agent()
        env = dict(os.environ, A2UI_DEFAULT_AGENT=DEMO_AGENT)
        daphne = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
             "a2ui_project.asgi:application"],
            env=env,
        )
        try:
            _wait_for_port(host, port, daphne)
            base = f"http://{host}:{port}"
            self.stdout.write(self.style.SUCCESS("\na2ui demo is running."))
            self.stdout.write(f"  Open      {base}/a2ui/")
            self.stdout.write(f"  Log in    {DEMO_USER} / {DEMO_PASSWORD}")
            self.stdout.write(f"  Admin     {base}/admin/ (same login)")
            self.stdout.write(f"  API docs  {base}/api/docs/")
            self.stdout.write("  Ctrl-C stops everything.\n")
            asyncio.run(self._agent(f"ws://{host}:{port}/ws/v4/a2ui/agent", key))
        except KeyboardInterrupt:
            pass
        finally:
            if daphne.poll() is None:
                daphne.send_signal(signal.SIGINT)
                try:
                    daphne.wait(10)
                except subprocess.TimeoutExpired:
                    daphne.kill()
            self.stdout.write("Stopped.")

    async def _agent(self, url, key):
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_agent(url, key, stop)

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
