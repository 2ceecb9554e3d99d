"""Agents (created with a key shown once) and stream tokens."""

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.db import models
from django.utils.html import format_html

from a2ui import tokens
from a2ui.admin.common import (
    NoDeleteMixin,
    QueryTextMixin,
    TimesWithSecondsMixin,
    TokenStateFilter,
    revoke_agents,
    revoke_tokens,
    revoked,
    short_id,
)
from a2ui.compliance import audit
from a2ui.models import Agent, StreamToken
from a2ui.remote.admin import RemoteAgentInline
from a2ui.sessions import presence


@admin.register(Agent)
class AgentAdmin(TimesWithSecondsMixin, QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen (owner, session cap and revocation time on the agent's page).
    list_display = ("name", "display_name", "is_active", "online", "key_prefix", "created_at")
    list_filter = ("is_active",)
    search_fields = ("name", "display_name", "owner__username", "key_prefix")
    readonly_fields = ("is_active", "key_prefix", "created_at", "revoked_at")
    actions = [revoke_agents]
    inlines = [RemoteAgentInline]  # a remote agent's transport (a2ui.remote)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    def has_revoke_permission(self, request):
        return request.user.has_perm("a2ui.revoke_agent")

    def get_changelist_instance(self, request):
        """The list's page, each agent marked online or not (a2ui.sessions.presence: a socket,
        listener or MCP listen stream of it open in any process), read once per page."""
        changelist = super().get_changelist_instance(request)
        page = list(changelist.result_list)  # evaluated once: the same objects are shown
        statuses = async_to_sync(presence.astatuses)([agent.pk for agent in page])
        for agent in page:
            agent.a2ui_online = statuses.get(str(agent.pk)) == presence.ONLINE
        return changelist

    @admin.display(description="online", boolean=True)
    def online(self, obj):
        """Whether the agent is there to take what its people do (None: not read)."""
        return getattr(obj, "a2ui_online", None)

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # the transport once the agent exists

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
    # Fits a 1280 px screen beside the admin's sidebars: the id shortened (whole on the token's
    # page), the state with when and by whom it was revoked, issued on the token's page.
    list_display = ("short_jti", "user", "agent", "token_type", "state_now", "expires_at")
    list_display_links = ("short_jti",)
    list_select_related = ("user", "agent", "revoked_by")

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    @admin.display(description="id", ordering="jti")
    def short_jti(self, obj):
        return short_id(obj.jti)

    @admin.display(description="state", ordering="revoked_at")
    def state_now(self, obj):
        """active, expired, or revoked with when and by whom."""
        if obj.revoked_at is None:
            return obj.state
        return format_html("revoked {}", revoked(obj))
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
