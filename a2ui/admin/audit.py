"""Consents and the audit trail (filters, CSV export)."""

import csv
import json

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBadRequest, StreamingHttpResponse
from django.urls import path
from django.utils import timezone

from a2ui.admin.common import (
    ActorFilter,
    ConsentStateFilter,
    FromDateFilter,
    NoDeleteMixin,
    QueryTextMixin,
    SessionFilter,
    TimesWithSecondsMixin,
    ToDateFilter,
    revoke_consents,
    revoked,
    short_id,
)
from a2ui.admin.compliance import ComplianceViewsMixin
from a2ui.models import A2UIConsentRecord, AuditEvent
from a2ui.push import revocation


@admin.register(A2UIConsentRecord)
class A2UIConsentRecordAdmin(TimesWithSecondsMixin, QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen beside the admin's sidebars: granted and in force as one state,
    # when and by whom revoked as one column, the session on the record's page.
    list_display = ("consent_type", "user", "state", "granted_at", revoked)
    list_select_related = ("user", "revoked_by")

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}
    list_filter = ("consent_type", ConsentStateFilter, "granted")
    search_fields = ("user__username", "consent_type", "session__session_id")
    readonly_fields = ("session", "user", "consent_type", "granted", "granted_at", "revoked_at",
                       "revoked_by")
    date_hierarchy = "granted_at"
    actions = [revoke_consents]

    @admin.display(boolean=True, description="in force")
    def in_force(self, obj):
        return obj.is_active

    @admin.display(description="state")
    def state(self, obj):
        if not obj.granted:
            return "refused"
        return "revoked" if obj.revoked_at is not None else "in force"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_revoke_permission(self, request):
        return request.user.has_perm("a2ui.revoke_a2uiconsentrecord")


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
class AuditEventAdmin(ComplianceViewsMixin, TimesWithSecondsMixin, QueryTextMixin,
                      admin.ModelAdmin):
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
            *self.compliance_urls(),
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
