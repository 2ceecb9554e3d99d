"""HTTP probes: ``GET /a2ui/healthz`` (liveness) and ``GET /a2ui/readyz`` (readiness).

JSON from :mod:`a2ui.infra.health`: 200 with ``{"status": "ok", "checks": {...}}``, or 503
with ``"status": "fail"`` and the failed checks' error classes; never a 500. No credential is
asked for and nothing sensitive is shown (docs/operations.md, "Health and readiness probes").

Two ways in, one answer:

* :class:`ProbeRoutes`, the ASGI application ``a2ui.asgi.http_application()`` puts in front of
  Django: the probes are answered on the event loop, before Django's request handling and the
  project's middleware. Django would run each sync middleware on a thread (several thread hops
  per request), and a project's middleware may redirect (``SECURE_SSL_REDIRECT``,
  ``LoginRequiredMiddleware``) or read the database (a liveness probe failing while the
  database is down gets healthy processes restarted). The paths are those ``a2ui.urls`` gives
  the views below (their URL names), so a project that includes ``a2ui.urls`` under another
  prefix has its probes there. The Host header is checked as Django checks it
  (``ALLOWED_HOSTS``): 400 otherwise.
* :func:`liveness_view` and :func:`readiness_view`, the same answers through Django (exempt
  from ``LoginRequiredMiddleware``), for a project that builds its HTTP application without
  :func:`a2ui.asgi.http_application`.
"""

import json

from django.contrib.auth.decorators import login_not_required

from a2ui.infra import health

LIVENESS = "a2ui-healthz"
READINESS = "a2ui-readyz"
METRICS = "a2ui-metrics"
_HEADERS = (("content-type", "application/json"), ("cache-control", "no-store"))


async def answer(which):
    """``(status code, body dict)`` of a probe (``LIVENESS`` or ``READINESS``); a probe that
    fails unexpectedly answers 503 with the error's class, not a 500."""
    try:
        report = await (health.liveness() if which == LIVENESS else health.readiness())
    except Exception as exc:
        health.log.warning("a2ui: the %s probe failed", which, exc_info=True)
        return 503, {"status": health.FAIL, "error": type(exc).__name__}
    return (200 if report.ok else 503), report.as_dict()


# Through Django ---------------------------------------------------------------------------------


async def _view(request, which):
    from django.http import JsonResponse

    if request.method not in ("GET", "HEAD"):
        return JsonResponse({"detail": "Method not allowed."}, status=405,
                            headers={"Allow": "GET, HEAD"})
    status, body = await answer(which)
    return JsonResponse(body, status=status, headers={"Cache-Control": "no-store"})


@login_not_required
async def liveness_view(request):
    return await _view(request, LIVENESS)


@login_not_required
async def readiness_view(request):
    return await _view(request, READINESS)


# In front of Django -----------------------------------------------------------------------------


def probe_paths():
    """``{path: LIVENESS | READINESS}`` where the project's URLconf routes the probe views
    (without the script prefix); empty when it does not route them."""
    from django.urls import NoReverseMatch, get_resolver

    resolver = get_resolver()
    paths = {}
    for name in (LIVENESS, READINESS, METRICS):
        try:
            paths["/" + resolver.reverse(name).lstrip("/")] = name
        except NoReverseMatch:
            pass
    return paths


class ProbeRoutes:
    """ASGI: HTTP requests for the probes' paths are answered here, the rest go to ``app``."""

    def __init__(self, app):
        self.app = app
        self.paths = None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            if self.paths is None:
                try:
                    self.paths = probe_paths()
                except Exception:  # a URLconf that does not load: Django says why
                    health.log.warning("a2ui: the probes' paths could not be resolved",
                                       exc_info=True)
                    self.paths = {}
            path, root = scope.get("path", ""), scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root):]
            which = self.paths.get(path)
            if which == METRICS:
                return await self.metrics(scope, send)
            if which is not None:
                return await self.probe(which, scope, send)
        return await self.app(scope, receive, send)

    async def probe(self, which, scope, send):
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            status, body, extra = 405, {"detail": "Method not allowed."}, [("allow", "GET, HEAD")]
        elif not host_allowed(scope):
            status, body, extra = 400, {"detail": "Host not allowed (ALLOWED_HOSTS)."}, []
        else:
            (status, body), extra = await answer(which), []
        data = json.dumps(body, separators=(",", ":")).encode()
        headers = [(k.encode(), v.encode()) for k, v in (*_HEADERS, *extra)]
        headers.append((b"content-length", str(len(data)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else data})


    async def metrics(self, scope, send):
        method = scope.get("method", "GET")
        status, extra = 200, []
        if method not in ("GET", "HEAD"):
            status, body, extra = 405, b"Method not allowed.", [("allow", "GET, HEAD")]
        elif not host_allowed(scope):
            status, body = 400, b"Host not allowed (ALLOWED_HOSTS)."
        else:
            status, body = await ametrics_answer(scope)
        ctype = "text/plain; charset=utf-8"
        if status == 200:
            ctype, body = body
        headers = [(b"content-type", ctype.encode()), (b"cache-control", b"no-store"),
                   (b"content-length", str(len(body)).encode()),
                   *((k.encode(), v.encode()) for k, v in extra)]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


def metrics_allowed(headers, client_ip):
    """A scrape is let in with ``A2UI['METRICS_TOKEN']`` as its bearer token, or from an
    address in ``A2UI['METRICS_NETWORKS']`` (loopback by default)."""
    import hmac
    import ipaddress

    from a2ui.conf import a2ui_settings

    token = a2ui_settings.METRICS_TOKEN
    if token:
        given = headers.get("authorization", "")
        if given[:7].lower() == "bearer " and hmac.compare_digest(
                given[7:].strip().encode(), str(token).encode()):
            return True
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False)
               for net in a2ui_settings.METRICS_NETWORKS or ())


def metrics_refusal(scope):
    """``(status, message)`` for a scrape refused: 404 when the metrics are off, 403 for one
    not let in (:func:`metrics_allowed`); None for a scrape let in."""
    from a2ui.infra import prom

    if not prom.ON:
        return 404, b"Metrics are off (A2UI['PROMETHEUS'])."
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers", ())}
    client = (scope.get("client") or ("",))[0]
    if not metrics_allowed(headers, client):
        return 403, b"Scrape not allowed (A2UI['METRICS_TOKEN'], A2UI['METRICS_NETWORKS'])."
    return None


def metrics_answer(scope):
    """``(200, (content type, body))``, or ``(status, message)`` (:func:`metrics_refusal`)."""
    from a2ui.infra import prom

    return metrics_refusal(scope) or (200, prom.exposition())


async def ametrics_answer(scope):
    """:func:`metrics_answer`, with the values read from the shared store first
    (``prom.asample``: the pending requests, cached a few seconds) for a scrape let in."""
    from a2ui.infra import prom
    from a2ui.requests import pending

    refused = metrics_refusal(scope)
    if refused is not None:
        return refused
    await prom.asample(pending.open_counts)
    return 200, prom.exposition()


@login_not_required
async def metrics_view(request):
    """The scrape through Django (:func:`metrics_answer`)."""
    from django.http import HttpResponse

    if request.method not in ("GET", "HEAD"):
        return HttpResponse("Method not allowed.", status=405, headers={"Allow": "GET, HEAD"})
    scope = getattr(request, "scope", None) or {
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "headers": [(b"authorization", request.META.get("HTTP_AUTHORIZATION", "").encode())]}
    status, body = await ametrics_answer(scope)
    if status != 200:
        return HttpResponse(body, status=status, content_type="text/plain; charset=utf-8")
    ctype, data = body
    return HttpResponse(data, content_type=ctype, headers={"Cache-Control": "no-store"})


def host_allowed(scope):
    """The request's Host (or X-Forwarded-Host, as the project's settings say) passes
    ``ALLOWED_HOSTS``, exactly as ``HttpRequest.get_host`` decides."""
    import io

    from django.core.handlers.asgi import ASGIRequest

    try:
        ASGIRequest(scope, io.BytesIO()).get_host()
    except Exception:  # DisallowedHost; or an undecodable header, no host Django takes either
        return False
    return True
