"""A product team's path, exactly as the README tells it.

A fresh ``django-admin startproject mysite`` in a temporary directory, the package built as a
wheel and installed into a venv of its own (nothing of this checkout on its path), the README's
"Add it to your Django project" blocks applied as written (python blocks appended to or
replacing the file their first line names; ``python manage.py`` lines run; the ``a2ui_serve``
line started), then a person in Chromium and an agent on the agent socket go through a card, an
input request and its answer, and a v0.9 surface: the web client's assets (the vendored renderer
and markdown-it) come from the wheel, with no npm, no node_modules and no finder of ours.
"""

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

from a2ui.demo import booking_surface
from tests.browser.conftest import AgentThread

# Building the wheel and installing it with its dependencies takes a minute or two.
pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-host-admin-1"


def _readme_person():
    """(username, password) of the person the README's steps create."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"create_user\('([^']+)', password='([^']+)'\)", text)
    assert found, "the README's steps create a person"
    return found.group(1), found.group(2)


PERSON = _readme_person()
STEP_TIMEOUT = 600  # pip may resolve the dependencies from the index on a cold cache


def readme_blocks():
    """(language, body) of each fenced block of the README's host-project section."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Add it to your Django project", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


def _run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, timeout=STEP_TIMEOUT,
                          stdin=subprocess.DEVNULL, **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clean_env():
    """The environment of a new machine: none of this checkout's test settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "PYTHONPATH",
                        "VIRTUAL_ENV", "A2UI_SECRET_KEY_WARNED")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("host")
    env = _clean_env()
    # Built from a copy: setuptools leaves build/ and *.egg-info beside the sources.
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "node_modules", "build", "*.egg-info", "screenshots", "__pycache__",
        "*.sqlite3", ".secret_key", "staticfiles"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"),
          str(source)], cwd=tmp, env=env)
    wheel = next((tmp / "dist").glob("django_a2ui-*.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())
    # The translations ship compiled: a pip-installed app needs no msgfmt (docs/client.md).
    assert {"a2ui/locale/fr/LC_MESSAGES/django.mo",
            "a2ui/locale/fr/LC_MESSAGES/djangojs.mo"} <= shipped
    _run([sys.executable, "-m", "venv", str(tmp / "venv")], env=env)
    bin_dir = tmp / "venv" / "bin"
    _run([str(bin_dir / "pip"), "install", "-q", str(wheel)], cwd=tmp, env=env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    _run(["django-admin", "startproject", "mysite"], cwd=tmp, env=env)
    project = tmp / "mysite"

    key, daphne_cmd = None, None
    for lang, body in readme_blocks():
        if lang == "python":
            first, _, code = body.partition("\n")
            match = re.fullmatch(r"# mysite/(\S+) \((append|replace)\)", first.strip())
            assert match, f"a python block of the README names no file: {first!r}"
            target = project / "mysite" / match.group(1)
            if match.group(2) == "append":
                code = target.read_text() + "\n" + code
            target.write_text(code)
            continue
        for line in body.splitlines():
            command = line.split("#", 1)[0].strip()
            if not command or command.startswith("pip install"):
                continue  # the wheel of this checkout is installed above
            args = shlex.split(command)
            if args[:3] == ["python", "manage.py", "a2ui_serve"]:
                daphne_cmd = args
            elif args[:3] == ["python", "manage.py", "createsuperuser"]:
                _run([*args, "--noinput", "--username", "admin", "--email", "a@example.com"],
                     cwd=project, env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD})
            else:
                out = _run(args, cwd=project, env=env)
                if args[2:4] == ["a2ui_agent", "create"]:
                    key = re.search(r"a2ui_ak_\S+", out).group(0)
    assert key and daphne_cmd, "the README's steps create an agent and start the server"
    # No module of this checkout can leak in: the project imports the installed package.
    where = _run(["python", "-c", "import a2ui; print(a2ui.__file__)"], cwd=project, env=env)
    assert str(tmp / "venv") in where
    assert "no issues" in _run(["python", "manage.py", "check"], cwd=project, env=env)
    # The README's endpoint table: the OpenAPI schema, written by drf-spectacular's command.
    _run(["python", "manage.py", "spectacular", "--file", "schema.yml"], cwd=project, env=env)
    assert "/api/v4/stream-token" in (project / "schema.yml").read_text()
    shell = _run(["python", "manage.py", "shell", "-c", "from django.contrib.auth.models import "
                  f"User; u = User.objects.get(username={PERSON[0]!r}); print(u.is_staff)"],
                 cwd=project, env=env)
    assert shell.strip().splitlines()[-1] == "False", shell  # the README's person: not staff

    port = _free_port()
    log = open(tmp / "daphne.log", "w+")  # noqa: SIM115 (closed below)
    daphne = subprocess.Popen([*daphne_cmd, "-b", "127.0.0.1", "-p", str(port)],
                              cwd=project, env=env, stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert daphne.poll() is None and time.monotonic() < deadline, log.read()
            time.sleep(0.2)
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}", ws_url=f"ws://127.0.0.1:{port}",
                          key=key, log=log)
    daphne.send_signal(signal.SIGTERM)
    try:
        daphne.wait(15)
    except subprocess.TimeoutExpired:
        daphne.kill()
        daphne.wait()
    log.close()


def test_readme_steps_give_a_working_site(host, browser):
    agent = None
    context = browser.new_context(base_url=host.url, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        failed, requested = [], []
        page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.on("request", lambda r: requested.append(r.url))
        # The README's endpoint table: the schema and its Swagger UI, served by the app.
        schema = page.request.get(f"{host.url}/api/schema/?format=json")
        assert schema.status == 200 and "/api/v4/stream-token" in schema.json()["paths"]
        assert page.request.get(f"{host.url}/api/docs/").status == 200
        page.goto("/a2ui/")  # signed out: LOGIN_URL is the app's login page for people
        assert "/a2ui/login/" in page.url, page.url
        person, password = PERSON
        page.get_by_label("Username").fill(person)  # not staff: the README's person
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        client = page.locator("[data-a2ui-client]")
        expect(client).to_have_attribute("data-connection", "connected", timeout=15_000)
        # The app's own page: its title (A2UI['SITE_TITLE'], else "Assistant") and log out.
        assert page.title() == "Assistant"
        expect(client.locator(".a2ui-bar").get_by_role("button", name="Log out")).to_be_visible()
        sid = page.evaluate("sessionStorage.getItem('a2ui.session_id')")
        # The agent starts after the page opened: it is told of the session all the same.
        agent = AgentThread(host, host.key)
        agent.wait_note("session.resumed", lambda p: p.get("session_id") == sid)
        assert agent.wait_note("session.resumed")["user"] == person

        agent.call("render", sid, "card", {"title": "Hello from the agent",
                                           "description": "Installed from a wheel."})
        expect(page.get_by_role("heading", name="Hello from the agent")).to_be_visible()

        answer = agent.start("request_input", sid, "text", "Your name?")
        dialog = page.get_by_role("dialog", name="Your name?")
        expect(dialog).to_be_visible()
        dialog.get_by_role("textbox", name="Your name?").fill("Ada")
        dialog.get_by_role("button", name="Send").click()
        assert answer.result(15) == "Ada"
        # The v0.9 renderer is fetched only when the first v0.9 surface arrives.
        assert not [url for url in requested if "/a2ui/vendor/a2ui-lit" in url], requested

        result = agent.call("surfaces", sid, booking_surface("booking"))
        assert result["delivered"] == 3
        surface = page.locator('[data-surface-id="booking"] a2ui-surface')
        expect(surface).to_contain_text("Book a table (A2UI v0.9)")
        expect(surface.get_by_role("button", name="Book")).to_be_visible()
        assert [url for url in requested if "/static/a2ui/vendor/a2ui-lit-v0_9" in url]
        # The vendored bundle is a handful of files, not node_modules' hundreds of modules.
        assert len([url for url in requested if "/a2ui/vendor/" in url]) <= 12, requested

        expect(page.locator("[data-a2ui-toasts]")).not_to_contain_text("could not be shown")
        assert not page.locator("[data-a2ui-toasts]").inner_text().strip()
        assert not failed, failed
        assert not errors, errors
    except Exception:
        host.log.seek(0)
        print("daphne log:\n" + host.log.read())
        raise
    finally:
        context.close()
        if agent is not None:
            agent.close()
