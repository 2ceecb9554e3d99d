"""Page weight of the web client: what a cold ``/a2ui/`` (an empty session) costs a browser.

Starts the example project under ``manage.py a2ui_serve`` on a throw-away SQLite database and
the in-memory channel layer, signs a person in, and loads ``/a2ui/`` in Debian's Chromium
(Playwright) with an empty cache, counting through the DevTools protocol's network events
(``Network.responseReceived`` / ``Network.loadingFinished``): requests, bytes on the wire
(``encodedDataLength``: compressed bodies plus headers), bytes decoded, the content encodings,
the Cache-Control headers, and the time to the page's ``load`` event and to its first paint.

Two ways of serving ``/static/``, each measured ``--runs`` times (median printed):

* ``dev``: Daphne serving through the staticfiles finders (no ``collectstatic``; the default
  of ``A2UI['SERVE_STATIC']``);
* ``collected``: ``collectstatic`` into a temporary ``STATIC_ROOT`` and WhiteNoise serving its
  hashed, brotli/gzip-compressed files (``DJANGO_STATIC_COLLECTED=1``),
  as production runs it.

``--root DIR`` measures another checkout of the repository (e.g. the commit before a change) with
the same script; a checkout without WhiteNoise gets ``dev`` only. Usage::

    .venv/bin/python bench/bench_page_weight.py [--runs 3] [--root /path/to/checkout]
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server not listening")


def manage(root, env, *args):
    subprocess.run([sys.executable, str(root / "manage.py"), *args], cwd=root, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def session_cookie(root, env):
    """A person's session key, made in a child process on the server's database."""
    code = (
        "import django; django.setup()\n"
        "from django.contrib.auth import get_user_model\n"
        "from django.test import Client\n"
        "u, _ = get_user_model().objects.get_or_create(username='bench-person')\n"
        "from a2ui import tokens, models\n"
        "if not models.Agent.objects.exists(): tokens.create_agent('bench-agent')\n"
        "c = Client(); c.force_login(u); print(c.cookies['sessionid'].value)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def measure(browser, url, cookie):
    """One cold load of ``url``: the network totals and timings."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_cookies([{"name": "sessionid", "value": cookie, "url": url}])
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    responses, finished = {}, {}
    cdp.on("Network.responseReceived", lambda e: responses.__setitem__(e["requestId"], e))
    cdp.on("Network.loadingFinished", lambda e: finished.__setitem__(e["requestId"], e))
    start = time.perf_counter()
    page.goto(url + "/a2ui/", wait_until="load")
    load_ms = (time.perf_counter() - start) * 1000
    page.wait_for_selector("[data-a2ui-client][data-connection=connected]", state="attached",
                            timeout=15000)
    page.wait_for_load_state("networkidle")
    paint = page.evaluate(
        "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0")
    rows = []
    for rid, resp in responses.items():
        r = resp["response"]
        if not r["url"].startswith("http"):
            continue
        headers = {k.lower(): v for k, v in r.get("headers", {}).items()}
        done = finished.get(rid, {})
        rows.append({
            "url": r["url"].split("?")[0], "status": r["status"],
            "wire": int(done.get("encodedDataLength", r.get("encodedDataLength", 0))),
            "decoded": int(resp.get("dataLength", 0)) or int(headers.get("content-length", 0)),
            "encoding": headers.get("content-encoding", ""),
            "cache": headers.get("cache-control", ""),
        })
    ctx.close()
    return {"requests": len(rows), "wire": sum(r["wire"] for r in rows),
            "load_ms": load_ms, "fcp_ms": paint, "rows": rows}


def run_mode(root, mode, runs, browser):
    tmp = Path(tempfile.mkdtemp(prefix="a2ui-weight-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG")}
    env.update(DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}", DJANGO_SECRET_KEY="bench-weight",
               DJANGO_SETTINGS_MODULE="a2ui_project.settings", PYTHONPATH=str(root))
    if mode == "collected":
        env.update(DJANGO_STATIC_ROOT=str(tmp / "static"), DJANGO_STATIC_COLLECTED="1")
        manage(root, env, "collectstatic", "--noinput")
    manage(root, env, "migrate", "--noinput")
    cookie = session_cookie(root, env)
    port = free_port()
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, str(root / "manage.py"), "a2ui_serve", "-b",
                             "127.0.0.1", "-p", str(port)], cwd=root, env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        url = f"http://127.0.0.1:{port}"
        measure(browser, url, cookie)  # warm the server's own caches (templates, finders)
        results = [measure(browser, url, cookie) for _ in range(runs)]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    return results


def med(results, key):
    return statistics.median(r[key] for r in results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--modes", default="dev,collected")
    parser.add_argument("--json", action="store_true", help="print every response too")
    args = parser.parse_args()
    root = args.root.resolve()
    from playwright.sync_api import sync_playwright

    has_whitenoise = "whitenoise" in (root / "a2ui_project" / "settings.py").read_text()
    modes = [m for m in args.modes.split(",") if m == "dev" or has_whitenoise]
    print(f"page weight of /a2ui/ (empty session, cold cache), {root}, median of {args.runs}")
    print(f"{'mode':10} {'requests':>8} {'KB wire':>8} {'load ms':>8} {'FCP ms':>7}  encodings")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for mode in modes:
                results = run_mode(root, mode, args.runs, browser)
                encodings = sorted({row["encoding"] or "identity" for r in results
                                    for row in r["rows"]})
                print(f"{mode:10} {med(results, 'requests'):>8.0f} "
                      f"{med(results, 'wire') / 1024:>8.1f} {med(results, 'load_ms'):>8.0f} "
                      f"{med(results, 'fcp_ms'):>7.0f}  {','.join(encodings)}")
                if args.json:
                    print(json.dumps(results[-1]["rows"], indent=1))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
