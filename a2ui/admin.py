"""Admin: live sessions at a glance, tokens by state, consents by type, the audit trail.

Operators act through the service layer (see a2ui.admin_actions); AuditEvent is read-only for
everyone, superusers included.
"""

from django.contrib import admin
from django.utils import timezone

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


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("name", "display_name", "owner", "is_active", "max_concurrent_sessions",
                    "key_prefix", "created_at", "revoked_at")
    list_filter = ("is_active",)
    search_fields = ("name", "display_name", "owner__username", "key_prefix")
    readonly_fields = ("key_prefix", "created_at", "revoked_at")


@admin.register(StreamToken)
class StreamTokenAdmin(admin.ModelAdmin):
    list_display = ("jti", "user", "agent", "token_type", "state", "issued_at", "expires_at",
                    "revoked_at", "revoked_by")
    list_filter = (TokenStateFilter, "token_type", "agent")
    search_fields = ("jti", "user__username", "agent__name")
    readonly_fields = ("jti", "user", "agent", "token_type", "issued_at", "expires_at",
                       "revoked_at", "revoked_by")
    date_hierarchy = "issued_at"

    def has_add_permission(self, request):
        return False


class RenderedComponentInline(admin.TabularInline):
    model = RenderedComponent
    extra = 0
    fields = ("position", "component_id", "component_type", "expires_at", "updated_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


class PendingRequestInline(admin.TabularInline):
    model = PendingRequest
    extra = 0
    fields = ("request_id", "kind", "status", "deadline", "answer", "resolved_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class ConsentInline(admin.TabularInline):
    model = A2UIConsentRecord
    extra = 0
    fields = ("consent_type", "granted", "granted_at", "revoked_at", "revoked_by")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(A2UISessionLog)
class A2UISessionLogAdmin(admin.ModelAdmin):
    list_display = ("session_id", "state", "agent", "user", "last_activity", "message_count",
                    "components_rendered", "inputs_requested", "created_at", "closed_at")
    list_filter = ("state", "agent", "created_at")
    search_fields = ("session_id", "user__username", "agent__name", "close_reason")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in A2UISessionLog._meta.fields]
    inlines = [RenderedComponentInline, PendingRequestInline, ConsentInline]

    def has_add_permission(self, request):
        return False


@admin.register(A2UIConsentRecord)
class A2UIConsentRecordAdmin(admin.ModelAdmin):
    list_display = ("consent_type", "user", "granted", "granted_at", "revoked_at", "revoked_by",
                    "session")
    list_filter = ("consent_type", ConsentStateFilter, "granted")
    search_fields = ("user__username", "consent_type", "session__session_id")
    readonly_fields = ("session", "user", "consent_type", "granted", "granted_at", "revoked_at",
                       "revoked_by")
    date_hierarchy = "granted_at"

    def has_add_permission(self, request):
        return False


@admin.register(RenderedComponent)
class RenderedComponentAdmin(admin.ModelAdmin):
    list_display = ("component_id", "component_type", "session", "position", "expires_at",
                    "updated_at")
    list_filter = ("component_type",)
    search_fields = ("component_id", "session__session_id")
    readonly_fields = [f.name for f in RenderedComponent._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(PendingRequest)
class PendingRequestAdmin(admin.ModelAdmin):
    list_display = ("request_id", "kind", "status", "session", "deadline", "resolved_at")
    list_filter = ("kind", "status")
    search_fields = ("request_id", "session__session_id")
    readonly_fields = [f.name for f in PendingRequest._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(Surface)
class SurfaceAdmin(admin.ModelAdmin):
    list_display = ("surface_id", "catalog_id", "session", "updated_at")
    search_fields = ("surface_id", "session__session_id")
    readonly_fields = [f.name for f in Surface._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("at", "actor_label", "action", "target_type", "target_id", "session_id",
                    "agent")
    list_filter = ("action", "agent", "at")
    search_fields = ("actor_label", "action", "target_id", "session_id")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
