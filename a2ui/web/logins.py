"""Sign-ins that cannot be flooded: attempt limits per account and per client address, and a
cap on the password checks a process runs at once (docs/operations.md, "Sign-in limits").

* **Lockouts.** Each wrong password counts against the account it named (whether or not it
  exists) and the client address it came from (:func:`a2ui.infra.caps.address_of_request`;
  IPv6 by /64). ``A2UI['LOGIN_FAILURES_PER_ACCOUNT']`` failures of an account, or
  ``LOGIN_FAILURES_PER_ADDRESS`` from an address, within ``LOGIN_FAILURE_WINDOW_SECONDS`` lock
  it for ``LOGIN_LOCKOUT_SECONDS``: every sign-in of that account, or from that address, right
  password or not, is refused (HTTP 429, ``Retry-After``, the form saying until when) without
  checking the password; the lock ends by itself. Each lockout is an audit event
  (``login.lockout``). A successful sign-in forgets its account's failures. The counts live
  where the rate limits do (``a2ui.infra.shared``: Redis, shared by every process).
* **Password checks off the event loop, bounded.** A guarded view (:func:`guarded`) stays
  synchronous (Django runs it in the request's own thread, not on the event loop) and checks at
  most ``LOGIN_CONCURRENT_CHECKS`` passwords at once per process: a flood of sign-ins neither
  takes every core with hashes nor holds every pooled database connection while it waits. One
  that waits longer than ``LOGIN_CHECK_WAIT_SECONDS`` for its turn is answered 503 with
  ``Retry-After``.

The people's login page (``a2ui_web:login``) and the admin's (:func:`guard_admin`, called when
the app starts) are guarded; a host project guards its own login view with :func:`guarded` and
:class:`GuardedAuthenticationForm`.
"""

import functools
import hashlib
import logging
import math
import threading
from datetime import UTC, datetime, timedelta

from asgiref.sync import async_to_sync
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.utils.translation import gettext

from a2ui import edge
from a2ui.compliance import audit
from a2ui.conf import a2ui_settings
from a2ui.infra import caps, outages, shared

log = logging.getLogger("a2ui.logins")


def scopes(username, address):
    """``[(scope key, limit, per, who)]`` a sign-in counts against: its account (the name as
    typed, case-folded; hashed in the key) and its address (none for what is not an IP, nor for
    a trusted proxy's, ``EDGE_TRUSTED_PROXIES``: behind a proxy served without
    ``--proxy-headers`` every client has its address, and one lock would shut everyone out)."""
    s = a2ui_settings
    name = (username or "").strip().casefold()
    digest = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:32]
    out = [(f"login:account:{digest}", s.LOGIN_FAILURES_PER_ACCOUNT, "account", name)]
    key = edge.address_key(address, edge.parse_networks(list(s.EDGE_TRUSTED_PROXIES)))
    if key is not None:
        out.append((f"login:address:{key}", s.LOGIN_FAILURES_PER_ADDRESS, "address", key))
    return out


def locked_error(seconds):
    """The form's refusal of a locked sign-in: until when, in the person's words."""
    seconds = max(1, math.ceil(seconds))
    until = datetime.now(UTC) + timedelta(seconds=seconds)
    return ValidationError(
        gettext("Too many failed sign-ins for this account or from this address. Sign-in is "
                "locked until %(until)s UTC (in %(minutes)d min); try again then.")
        % {"until": until.strftime("%H:%M:%S"), "minutes": math.ceil(seconds / 60)},
        code="locked")


class Attempt:
    """One sign-in's standing: whether it is locked out, and what its failure counts."""

    def __init__(self, request, username):
        self.request = request
        self.address = caps.address_of_request(request) if request is not None else None
        self.scopes = scopes(username, self.address)

    @staticmethod
    def _shared(function, *args, default):
        """``function(*args)`` of ``a2ui.infra.shared``; ``default`` when Redis cannot be reached
        (logged as an outage): the limits must not stop every sign-in."""
        try:
            return async_to_sync(function)(*args)
        except Exception as exc:
            if not outages.report(exc, "sign-in limits"):
                raise
            return default

    def locked_for(self):
        return self._shared(shared.locked_for, [key for key, *_ in self.scopes], default=0)

    def failed(self):
        """Count the failure; the seconds of the lockout it started (0: none)."""
        s = a2ui_settings
        locked = False
        for key, limit, per, who in self.scopes:
            if self._shared(shared.strike, key, limit, s.LOGIN_FAILURE_WINDOW_SECONDS,
                            s.LOGIN_LOCKOUT_SECONDS, default=False):
                locked = True
                log.warning("a2ui: sign-in locked for %s s: %d failures for %s %r within %s s",
                            s.LOGIN_LOCKOUT_SECONDS, limit, per, who,
                            s.LOGIN_FAILURE_WINDOW_SECONDS)
                audit.record("login.lockout", target=(per, who), details={
                    "per": per, "failures": limit, "address": self.address or "",
                    "window_seconds": s.LOGIN_FAILURE_WINDOW_SECONDS,
                    "lockout_seconds": s.LOGIN_LOCKOUT_SECONDS})
        return s.LOGIN_LOCKOUT_SECONDS if locked else 0

    def succeeded(self):
        self._shared(shared.forgive, self.scopes[0][0], default=None)

    def refuse(self, seconds):
        if self.request is not None:
            self.request.a2ui_login_locked = seconds
        return locked_error(seconds)


class LockoutMixin:
    """An ``AuthenticationForm`` whose ``clean`` refuses a locked sign-in before checking the
    password, and counts a wrong one (:class:`Attempt`)."""

    def clean(self):
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if not username or not password:
            return super().clean()
        attempt = Attempt(self.request, username)
        seconds = attempt.locked_for()
        if seconds > 0:
            raise attempt.refuse(seconds)
        try:
            cleaned = super().clean()
        except ValidationError as exc:
            if exc.code == "invalid_login":
                seconds = attempt.failed()
                if seconds:
                    raise attempt.refuse(seconds) from None
            raise
        attempt.succeeded()
        return cleaned


class GuardedAuthenticationForm(LockoutMixin, AuthenticationForm):
    pass


class GuardedAdminAuthenticationForm(LockoutMixin, AdminAuthenticationForm):
    pass


_checks = []  # [(size, threading.BoundedSemaphore)]: the process's places for password checks


def _places():
    size = a2ui_settings.LOGIN_CONCURRENT_CHECKS
    if not _checks or _checks[0][0] != size:
        _checks[:] = [(size, threading.BoundedSemaphore(size))]
    return _checks[0][1]


def busy_response():
    wait = a2ui_settings.LOGIN_CHECK_WAIT_SECONDS
    response = HttpResponse(
        gettext("Too many sign-ins are being checked right now; try again in a moment."),
        status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(max(1, math.ceil(wait)))
    return response


def locked_status(request, response):
    """A locked sign-in's answer (the form saying until when) as 429 with ``Retry-After``."""
    seconds = getattr(request, "a2ui_login_locked", None)
    if seconds:
        response.status_code = 429
        response["Retry-After"] = str(max(1, math.ceil(seconds)))
    return response


def guarded(view):
    """``view`` (a synchronous login view) with its POSTs taking one of the process's
    ``LOGIN_CONCURRENT_CHECKS`` places before anything else (503 with ``Retry-After`` past
    ``LOGIN_CHECK_WAIT_SECONDS`` of waiting), and a locked sign-in answered 429 with
    ``Retry-After``. It stays synchronous: under ASGI Django runs it in the request's own
    thread, never on the event loop, and the password hash (hashlib's PBKDF2 lets the GIL go)
    leaves the loop free; a sign-in waiting for its place holds no database connection."""
    if getattr(view, "a2ui_guarded", False):
        return view

    @functools.wraps(view)
    def guarded_view(request, *args, **kwargs):
        if request.method != "POST" or Attempt(request, request.POST.get("username")).locked_for():
            # a locked sign-in is refused by its form before any password check: no place
            return locked_status(request, view(request, *args, **kwargs))
        places = _places()
        if not places.acquire(timeout=a2ui_settings.LOGIN_CHECK_WAIT_SECONDS):
            log.warning("a2ui: a sign-in waited over %s s for a password check "
                        "(LOGIN_CONCURRENT_CHECKS %s): refused, 503",
                        a2ui_settings.LOGIN_CHECK_WAIT_SECONDS,
                        a2ui_settings.LOGIN_CONCURRENT_CHECKS)
            return busy_response()
        try:
            response = view(request, *args, **kwargs)
        finally:
            places.release()
        return locked_status(request, response)

    guarded_view.a2ui_guarded = True
    return guarded_view


def guard_admin(site=None):
    """Guard the admin site's login (``django.contrib.admin.site`` by default): its POSTs as
    :func:`guarded` handles them, and its form with lockouts unless the site set its own."""
    if site is None:
        from django.contrib import admin

        site = admin.site
    if site.login_form is None:
        site.login_form = GuardedAdminAuthenticationForm
    site.login = guarded(site.login)
