"""Admin: live sessions at a glance, tokens by state, consents by type, the audit trail.

Thin: operators act through ``a2ui.services.revocation`` (terminate sessions, revoke stream
tokens, agents and consents), and every action is an AuditEvent naming the operator. The four
actions need their own permissions (``a2ui.terminate_a2uisessionlog``, ``a2ui.revoke_streamtoken``,
``a2ui.revoke_agent``, ``a2ui.revoke_a2uiconsentrecord``), which the "a2ui compliance" group
holds (``manage.py a2ui_compliance_group``). AuditEvent is read-only for everyone, superusers
included; sessions, tokens and consents are removed only by retention (``a2ui_purge``).
"""

import csv
import datetime
import json
import uuid

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import HttpResponseBadRequest, StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from . import tokens
from .models import (
    A2UIConsentRecord,
    A2UISessionLog,
    Agent,
    AuditEvent,
    PendingRequest,
    RenderedComponent,
    StreamToken,
    Surface,
)
from .services import audit, revocation, timeline

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


class NoDeleteMixin:
    """Removed only by retention (a2ui_purge), never by hand."""

    def has_delete_permission(self, request, obj=None):
        return False


# Model admins ------------------------------------------------------------------------------------


@admin.register(Agent)
class AgentAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "display_name", "owner", "is_active", "max_concurrent_sessions",
                    "key_prefix", "created_at", "revoked_at")
    list_filter = ("is_active",)
    search_fields = ("name", "display_name", "owner__username", "key_prefix")
    readonly_fields = ("is_active", "key_prefix", "created_at", "revoked_at")
    actions = [revoke_agents]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def has_revoke_permission(self, request):
        return request.user.has_perm("a2ui.revoke_agent")

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            audit.record("agent.change", actor=request.user, agent=obj, target=obj,
                         details={"fields": sorted(form.changed_data)})
            return
        key, obj.key_prefix, obj.key_hash = tokens.generate_agent_key()
        super().save_model(request, obj, form, change)
        audit.record("agent.create", actor=request.user, agent=obj, target=obj)
        messages.warning(request, f"The agent's API key, shown only now: {key}")


@admin.register(StreamToken)
class StreamTokenAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("jti", "user", "agent", "token_type", "state", "issued_at", "expires_at",
                    "revoked_at", "revoked_by")
    list_filter = (TokenStateFilter, "token_type", "agent")
    search_fields = ("jti", "user__username", "agent__name")
    readonly_fields = ("jti", "user", "agent", "token_type", "issued_at", "expires_at",
                       "revoked_at", "revoked_by")
    date_hierarchy = "issued_at"
    actions = [revoke_tokens]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_revoke_permission(self, request):
        return request.user.has_perm("a2ui.revoke_streamtoken")


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class RenderedComponentInline(ReadOnlyInline):
    model = RenderedComponent
    fields = ("position", "component_id", "component_type", "expires_at", "updated_at")
    readonly_fields = fields


class PendingRequestInline(ReadOnlyInline):
    model = PendingRequest
    fields = ("request_id", "kind", "status", "deadline", "answer", "resolved_at", "delivered_at")
    readonly_fields = fields


class ConsentInline(ReadOnlyInline):
    model = A2UIConsentRecord
    fields = ("consent_type", "granted", "granted_at", "revoked_at", "revoked_by")
    readonly_fields = fields


def short_id(value):
    """A UUID as its first 8 hex digits (as git shortens hashes) for change lists; else as is."""
    text = "" if value is None else str(value)
    try:
        return str(uuid.UUID(text))[:8] if len(text) == 36 else text
    except ValueError:
        return text


@admin.register(A2UISessionLog)
class A2UISessionLogAdmin(NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen beside the admin's sidebars; the rest is on the session's page.
    list_display = ("short_session_id", "state", "agent", "user", "last_activity",
                    "message_count")
    list_filter = ("state", "agent", "created_at")
    search_fields = ("session_id", "user__username", "agent__name", "close_reason")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in A2UISessionLog._meta.fields]
    inlines = [RenderedComponentInline, PendingRequestInline, ConsentInline]
    actions = [terminate_sessions]

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    @admin.display(description="session", ordering="session_id")
    def short_session_id(self, obj):
        return short_id(obj.session_id)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_terminate_permission(self, request):
        return request.user.has_perm("a2ui.terminate_a2uisessionlog")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and self.has_view_permission(request, obj):
            entries, summary = timeline.build(obj)
            extra_context = {**(extra_context or {}), "timeline": entries,
                             "timeline_summary": summary}
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(A2UIConsentRecord)
class A2UIConsentRecordAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("consent_type", "user", "granted", "in_force", "granted_at", "revoked_at",
                    "revoked_by", "session")
    list_filter = ("consent_type", ConsentStateFilter, "granted")
    search_fields = ("user__username", "consent_type", "session__session_id")
    readonly_fields = ("session", "user", "consent_type", "granted", "granted_at", "revoked_at",
                       "revoked_by")
    date_hierarchy = "granted_at"
    actions = [revoke_consents]

    @admin.display(boolean=True, description="in force")
    def in_force(self, obj):
        return obj.is_active

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_revoke_permission(self, request):
        return request.user.has_perm("a2ui.revoke_a2uiconsentrecord")


@admin.register(RenderedComponent)
class RenderedComponentAdmin(admin.ModelAdmin):
    list_display = ("component_id", "component_type", "session", "position", "expires_at",
                    "updated_at")
    list_filter = ("component_type",)
    search_fields = ("component_id", "session__session_id")
    readonly_fields = [f.name for f in RenderedComponent._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"


@admin.register(PendingRequest)
class PendingRequestAdmin(admin.ModelAdmin):
    list_display = ("request_id", "kind", "status", "session", "deadline", "resolved_at",
                    "delivered_at")
    list_filter = ("kind", "status")
    search_fields = ("request_id", "session__session_id")
    readonly_fields = [f.name for f in PendingRequest._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"


@admin.register(Surface)
class SurfaceAdmin(admin.ModelAdmin):
    list_display = ("surface_id", "catalog_id", "session", "updated_at")
    search_fields = ("surface_id", "session__session_id")
    readonly_fields = [f.name for f in Surface._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"


class _Echo:
    def write(self, value):
        return value


def _cell(value):
    """A CSV cell a spreadsheet will not run as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


CSV_COLUMNS = ["at", "actor", "actor_id", "action", "target_type", "target_id", "session_id",
               "agent", "details"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("at", "actor_label", "action", "target", "short_session_id", "agent")
    list_filter = ("action", "agent", ActorFilter, SessionFilter, FromDateFilter, ToDateFilter,
                   "at")
    search_fields = ("actor_label", "action", "target_id")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEvent._meta.fields]
    list_select_related = ("agent",)

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    @admin.display(description="target", ordering="target_type")
    def target(self, obj):
        return f"{obj.target_type} {short_id(obj.target_id)}".strip()

    @admin.display(description="session", ordering="session_id")
    def short_session_id(self, obj):
        return short_id(obj.session_id)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        return [
            path("export.csv", self.admin_site.admin_view(self.export_csv),
                 name="a2ui_auditevent_export"),
            *super().get_urls(),
        ]

    def export_csv(self, request):
        """The changelist as it is filtered (filters, search, dates), as CSV."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseBadRequest("Bad filter parameters.", content_type="text/plain")
        queryset = changelist.get_queryset(request)
        event = revocation.record_export(request.user, queryset.count(),
                                         dict(request.GET.items()))
        queryset = queryset.exclude(pk=event.pk).select_related("agent")
        writer = csv.writer(_Echo())

        def rows():
            yield writer.writerow(CSV_COLUMNS)
            for e in queryset.iterator(chunk_size=2000):
                yield writer.writerow([_cell(v) for v in (
                    e.at.isoformat(), e.actor_label, e.actor_id, e.action, e.target_type,
                    e.target_id, e.session_id, e.agent.name if e.agent else "",
                    json.dumps(e.details, sort_keys=True, ensure_ascii=False),
                )])

        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="a2ui-audit-{stamp}.csv"'
        return response
