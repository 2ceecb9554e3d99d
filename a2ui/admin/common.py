"""What the admin pages share: sidebar filters, the operator actions, no hand deletion."""

import datetime
import uuid

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db import models
from django.http import HttpResponseBadRequest
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.html import format_html

from a2ui.push import revocation

# Filters ---------------------------------------------------------------------------------------


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("active", "Active"), ("expired", "Expired"), ("revoked", "Revoked")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True, expires_at__gt=now)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


class ConsentStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "consent_state"

    def lookups(self, request, model_admin):
        return [("active", "Granted, in force"), ("revoked", "Revoked"), ("refused", "Refused")]

    def queryset(self, request, queryset):
        if self.value() == "active":
            return queryset.filter(granted=True, revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "refused":
            return queryset.filter(granted=False)
        return queryset


class InputFilter(admin.ListFilter):
    """A free-text filter in the sidebar (actor, session id, dates)."""

    template = "admin/a2ui/input_filter.html"
    parameter_name = None
    placeholder = ""

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        if self.parameter_name in params:
            value = params.pop(self.parameter_name)
            value = value[-1] if isinstance(value, list) else value
            self.used_parameters[self.parameter_name] = value.strip()

    def value(self):
        return self.used_parameters.get(self.parameter_name) or None

    def has_output(self):
        return True

    def expected_parameters(self):
        return [self.parameter_name]

    def choices(self, changelist):
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "All",
            "hidden": [(k, v) for k, v in changelist.params.items()
                       if k != self.parameter_name],
        }

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        try:
            return self.filter(queryset, value)
        except ValueError as exc:
            messages.error(request, f"{self.title}: {exc}")
            return queryset.none()

    def filter(self, queryset, value):  # pragma: no cover - abstract
        raise NotImplementedError


class ActorFilter(InputFilter):
    title = "actor"
    parameter_name = "actor"
    placeholder = "user:NAME, agent:NAME, system"

    def filter(self, queryset, value):
        return queryset.filter(actor_label__icontains=value)


class SessionFilter(InputFilter):
    title = "session"
    parameter_name = "session"
    placeholder = "session id"

    def filter(self, queryset, value):
        try:
            sid = uuid.UUID(value)
        except ValueError:
            raise ValueError("not a session id (UUID)") from None
        return queryset.filter(session_id=sid)


def _parse_day(value, end=False):
    day = parse_date(value) if len(value) <= 10 else None
    if day is not None:
        moment = datetime.datetime.combine(day, datetime.time.min)
        if end:
            moment += datetime.timedelta(days=1)
    else:
        moment = parse_datetime(value)
        if moment is None:
            raise ValueError("use YYYY-MM-DD or an ISO date-time")
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment


class FromDateFilter(InputFilter):
    title = "from date"
    parameter_name = "from"
    placeholder = "YYYY-MM-DD"

    def filter(self, queryset, value):
        try:
            return queryset.filter(at__gte=_parse_day(value))
        except (ValueError, OverflowError) as exc:
            raise ValueError(str(exc) or "bad date") from None


class ToDateFilter(InputFilter):
    title = "to date (inclusive)"
    parameter_name = "to"
    placeholder = "YYYY-MM-DD"

    def filter(self, queryset, value):
        try:
            return queryset.filter(at__lt=_parse_day(value, end=True))
        except (ValueError, OverflowError) as exc:
            raise ValueError(str(exc) or "bad date") from None


# Actions -----------------------------------------------------------------------------------------


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


@admin.action(description="Terminate selected live sessions", permissions=["terminate"])
def terminate_sessions(modeladmin, request, queryset):
    closed = revocation.terminate_sessions(queryset.values_list("pk", flat=True), request.user)
    modeladmin.message_user(request, f"Terminated {_plural(closed, 'live session')}.",
                            messages.SUCCESS if closed else messages.WARNING)


@admin.action(description="Revoke selected stream tokens", permissions=["revoke"])
def revoke_tokens(modeladmin, request, queryset):
    revoked, closed = revocation.revoke_tokens(queryset.values_list("pk", flat=True),
                                               request.user)
    modeladmin.message_user(
        request,
        f"Revoked {_plural(revoked, 'token')}; closed {_plural(closed, 'live session')}.",
        messages.SUCCESS if revoked else messages.WARNING,
    )


@admin.action(description="Revoke selected agents (key and live sessions)",
              permissions=["revoke"])
def revoke_agents(modeladmin, request, queryset):
    revoked, closed = revocation.revoke_agents(queryset.values_list("pk", flat=True),
                                               request.user)
    modeladmin.message_user(
        request,
        f"Revoked {_plural(revoked, 'agent')}; closed {_plural(closed, 'live session')}.",
        messages.SUCCESS if revoked else messages.WARNING,
    )


@admin.action(description="Revoke selected consents on the user's behalf",
              permissions=["revoke"])
def revoke_consents(modeladmin, request, queryset):
    revoked = revocation.revoke_consents(queryset.values_list("pk", flat=True), request.user)
    modeladmin.message_user(request, f"Revoked {_plural(revoked, 'consent')} in force.",
                            messages.SUCCESS if revoked else messages.WARNING)


def short_id(value):
    """A UUID as its first 8 hex digits (as git shortens hashes) for change lists; else as is."""
    text = "" if value is None else str(value)
    try:
        return str(uuid.UUID(text))[:8] if len(text) == 36 else text
    except ValueError:
        return text


class NoDeleteMixin:
    """Removed only by retention (a2ui_purge), never by hand."""

    def has_delete_permission(self, request, obj=None):
        return False


#: How a2ui's admin lists show a time: events seconds apart must read apart ("8:48 a.m." x10).
TIME_FORMAT = "Y-m-d H:i:s"


def when_html(value):
    """A date-time with seconds for a change list: its date and its time each kept whole (a
    narrow column breaks between them, never inside "2026-12-06")."""
    text = date_format(timezone.localtime(value) if timezone.is_aware(value) else value,
                       TIME_FORMAT)
    day, _, clock = text.partition(" ")
    if not clock:
        return text
    return format_html('<span class="a2ui-nowrap">{}</span> <span class="a2ui-nowrap">{}</span>',
                       day, clock)


@admin.display(description="revoked", ordering="revoked_at")
def revoked(obj):
    """When and by whom a row was revoked, in one column (two did not fit a 1280 px list)."""
    if obj.revoked_at is None:
        return None
    who = obj.revoked_by.get_username() if obj.revoked_by_id else "system"
    return format_html('{} <span class="a2ui-nowrap">by {}</span>', when_html(obj.revoked_at),
                       who)


def _time_column(name, field):
    @admin.display(description=field.verbose_name, ordering=name)
    def column(obj):
        value = getattr(obj, name)
        if value is None:
            return None  # the list's empty value
        return when_html(value)

    column.__name__ = name  # keeps the column's CSS class (column-<name>, field-<name>)
    return column


class TimesWithSecondsMixin:
    """The model's date-time columns of ``list_display`` shown with seconds (TIME_FORMAT)
    instead of the locale's DATETIME_FORMAT, which has none."""

    def get_list_display(self, request):
        times = {f.name: f for f in self.model._meta.fields
                 if isinstance(f, models.DateTimeField)}
        return [_time_column(item, times[item]) if isinstance(item, str) and item in times
                else item for item in super().get_list_display(request)]


class QueryTextMixin:
    """What a list is asked with is refused with a 400 that says why, where Django's admin
    would pass it to the database and answer 500: NUL in a filter or search value (PostgreSQL
    refuses it in text), a selected row for an action that is not an id of the list, and an
    integer beyond 64 bits (SQLite's OverflowError)."""

    def changelist_view(self, request, extra_context=None):
        for key, values in request.GET.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return _bad_request("NUL (%00) is not accepted in a filter or search value.")
        if request.method == "POST" and helpers.ACTION_CHECKBOX_NAME in request.POST:
            pk = self.model._meta.pk
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                try:
                    if "\x00" in value:
                        raise ValidationError("NUL")
                    key = pk.to_python(value)
                    if isinstance(key, int) and not -(2**63) <= key < 2**63:
                        raise ValidationError("beyond 64 bits")  # SQLite: OverflowError
                except ValidationError:
                    return _bad_request("A selected row is not an id of this list.")
        try:
            return super().changelist_view(request, extra_context)
        except OverflowError:  # SQLite: a filter integer beyond 64 bits
            return _bad_request("A filter value is beyond what the database holds.")


def _bad_request(message):
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
