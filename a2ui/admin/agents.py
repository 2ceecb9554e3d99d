"""Agents (created with a key shown once) and stream tokens."""

from django.contrib import admin, messages
from django.db import models

from a2ui import tokens
from a2ui.admin.common import (
    NoDeleteMixin,
    QueryTextMixin,
    TimesWithSecondsMixin,
    TokenStateFilter,
    revoke_agents,
    revoke_tokens,
)
from a2ui.compliance import audit
from a2ui.models import Agent, StreamToken


@admin.register(Agent)
class AgentAdmin(TimesWithSecondsMixin, QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen (owner, session cap and revocation time on the agent's page).
    list_display = ("name", "display_name", "is_active", "key_prefix", "created_at")
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
class StreamTokenAdmin(TimesWithSecondsMixin, QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
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
