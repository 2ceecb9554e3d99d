"""Sessions with their components, requests and consents; the read-only lists of those."""

from django.contrib import admin
from django.contrib.admin.utils import unquote

from a2ui.admin.common import NoDeleteMixin, QueryTextMixin, short_id, terminate_sessions
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    PendingRequest,
    RenderedComponent,
    Surface,
)
from a2ui.services import clients, timeline


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


@admin.register(A2UISessionLog)
class A2UISessionLogAdmin(QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen beside the admin's sidebars; the rest is on the session's page.
    list_display = ("short_session_id", "state", "agent", "user", "last_activity",
                    "message_count")
    list_filter = ("state", "agent", "created_at")
    search_fields = ("session_id", "user__username", "agent__name", "close_reason")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in A2UISessionLog._meta.fields] + ["can_show"]
    inlines = [RenderedComponentInline, PendingRequestInline, ConsentInline]
    actions = [terminate_sessions]

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    @admin.display(description="session", ordering="session_id")
    def short_session_id(self, obj):
        return short_id(obj.session_id)

    @admin.display(description="what it can show now")
    def can_show(self, obj):
        """The union of its attached and resumable clients' declarations (a2ui.services.clients)."""
        if obj is None or not obj.is_live:
            return "-"
        try:
            shown = clients.capabilities(obj.session_id)
        except Exception:  # Redis away: the page still shows
            return "unavailable"
        return (f"attached {shown['clients'] or 'none'}; resumable {shown['resumable'] or 'none'};"
                f" v0.9 catalogs {', '.join(shown['catalogs']) or 'none'}")

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


@admin.register(RenderedComponent)
class RenderedComponentAdmin(QueryTextMixin, admin.ModelAdmin):
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
class PendingRequestAdmin(QueryTextMixin, admin.ModelAdmin):
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
class SurfaceAdmin(QueryTextMixin, admin.ModelAdmin):
    list_display = ("surface_id", "catalog_id", "session", "updated_at")
    search_fields = ("surface_id", "session__session_id")
    readonly_fields = [f.name for f in Surface._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"
