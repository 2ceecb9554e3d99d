"""Hostile query strings and object ids to every admin page of the app, in-process.

Each list is asked with every filter, search, ordering and page parameter set to values a
database may refuse (NUL, which PostgreSQL refuses in text; invalid UTF-8; lone surrogates;
huge and odd numbers), and each change page with hostile ids: never a 500, nothing logged at
ERROR; NUL in a filter or search value is a 400 that says so.
"""

import logging

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from tests.fuzz import harness
from tests.fuzz.grammar import Frame
from tests.fuzz.seed import SEED

pytestmark = pytest.mark.django_db

HOSTILE = ["%00", "a%00b", "%ED%A0%80", "%FF", "9" * 300, "-1", "1e400", "%27%22", "x" * 3000,
           "2026-13-45", "%E2%80%AE"]
EXTRA = ["q", "o", "p", "e", "_facets", "all", "session", "actor", "from", "to"]


def _params(model_admin):
    params = list(EXTRA)
    for spec in model_admin.list_filter:
        if isinstance(spec, str):
            params += [spec, f"{spec}__exact", f"{spec}__id__exact", f"{spec}__gte"]
        else:
            params.append(getattr(spec, "parameter_name", None) or "x")
    return params


def test_admin_lists_and_pages(error_log, superuser, agent, user):
    failures = harness.Failures(SEED)
    client = Client()
    client.force_login(superuser)
    ours = [(m, a) for m, a in admin.site._registry.items() if m._meta.app_label == "a2ui"]
    assert len(ours) >= 8
    for model, model_admin in ours:
        url = reverse(f"admin:a2ui_{model._meta.model_name}_changelist")
        for param in _params(model_admin):
            for value in HOSTILE:
                path = f"{url}?{param}={value}"
                mark = len(error_log.records)
                response = client.get(path)
                problems = []
                if response.status_code >= 500:
                    problems.append(f"HTTP {response.status_code}")
                elif "%00" in value and response.status_code != 400:
                    problems.append(f"NUL answered {response.status_code}, not 400")
                problems += _errors(error_log, mark)
                failures.add(Frame("admin", path), problems)
        names = [getattr(a, "__name__", str(a)) for a in model_admin.actions or []]
        for name in [*names, "delete_selected", "x\x00", ""]:
            for selected in (["\x00"], ["a\x00b"], ["-1"], ["9" * 300], ["1e400"], [],
                             ["00000000-0000-0000-0000-000000000000"]):
                for extra in ({}, {"select_across": "1"}, {"index": "x"}, {"post": "yes"}):
                    mark = len(error_log.records)
                    response = client.post(url, {"action": name, "_selected_action": selected,
                                                 **extra})
                    problems = ([f"HTTP {response.status_code}"]
                                if response.status_code >= 500 else [])
                    problems += _errors(error_log, mark)
                    failures.add(Frame("admin", f"POST {url} {name!r} {selected!r:.40} {extra}"),
                                 problems)
        for value in HOSTILE:
            for path in (f"{url}{value}/change/", f"{url}{value}/history/",
                         f"{url}{value}/delete/"):
                mark = len(error_log.records)
                response = client.get(path)
                problems = [f"HTTP {response.status_code}"] if response.status_code >= 500 else []
                problems += _errors(error_log, mark)
                failures.add(Frame("admin", path), problems)
    failures.check()


def _errors(error_log, mark):
    """ERROR records only: Django logs a refused page (403 for deleting, which no one may do
    here) as a WARNING with the PermissionDenied attached."""
    return [f"logged: {r.name}: {r.getMessage()[:200]}" for r in error_log.records[mark:]
            if r.levelno >= logging.ERROR]
