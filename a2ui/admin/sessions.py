"""Sessions with their components, requests and consents; the read-only lists of those."""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.clickjacking import xframe_options_sameorigin

from a2ui.admin.common import (
    NoDeleteMixin,
    QueryTextMixin,
    TimesWithSecondsMixin,
    short_id,
    terminate_sessions,
)
from a2ui.compliance import audit, timeline
from a2ui.compliance import replay as replaylog
from a2ui.jsonrpc import replay as jsonrpc_replay
from a2ui.models import (
    A2UIConsentRecord,
    A2UISessionLog,
    PendingRequest,
    RenderedComponent,
    Surface,
)
from a2ui.sessions import clients
from a2ui.web import csp

#: The replay frame's policy: the client's own scripts (and its import map, by nonce), no
#: connection of any kind, no form, no plugin; images only from the site or data: URLs (a
#: remote image would tell its host who is replaying). The iframe is sandboxed as well
#: (``allow-scripts`` only: an opaque origin, no access to the admin page or its cookies).
REPLAY_POLICY = ("default-src 'none'; script-src 'self' 'nonce-{nonce}'; style-src 'self'; "
                 "img-src 'self' data:; font-src 'self'; media-src 'self'; connect-src 'none'; "
                 "object-src 'none'; base-uri 'none'; form-action 'none'; "
                 "frame-ancestors 'self'")


def replay_permission():
    """The permission that lets staff replay a session's screens."""
    from django.contrib.auth.models import Permission

    if Permission.objects.filter(content_type__app_label="a2ui", codename="view_replay").exists():
        return "a2ui.view_replay"
    return "a2ui.view_a2uisessionlog"


def _moment(request):
    value = request.GET.get("at")
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        return None


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


def _readable(value, depth=0):
    """A JSON value as nested definition lists (keys bold), lists comma-separated; escaped."""
    if isinstance(value, dict):
        if not value:
            return "-"
        return format_html("<dl class=\"a2ui-json\">{}</dl>", format_html_join(
            "", "<dt>{}</dt><dd>{}</dd>",
            ((key, _readable(item, depth + 1)) for key, item in value.items())))
    if isinstance(value, list):
        if not value:
            return "-"
        if all(not isinstance(item, dict | list) for item in value):
            return ", ".join(str(item) for item in value)
        return format_html("<ul>{}</ul>", format_html_join(
            "", "<li>{}</li>", ((_readable(item, depth + 1),) for item in value)))
    if value is True or value is False:
        return "yes" if value else "no"
    return "-" if value is None or value == "" else str(value)


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
class A2UISessionLogAdmin(TimesWithSecondsMixin, QueryTextMixin, NoDeleteMixin, admin.ModelAdmin):
    # Fits a 1280 px screen beside the admin's sidebars; the rest is on the session's page.
    list_display = ("short_session_id", "status", "agent", "user", "last_activity",
                    "message_count")
    list_filter = ("state", "agent", "created_at")
    search_fields = ("session_id", "user__username", "agent__name", "close_reason")
    date_hierarchy = "created_at"
    # client_info and capabilities as readable lists instead of raw JSON (the *_shown fields).
    exclude = ("client_info", "capabilities")
    readonly_fields = [f.name for f in A2UISessionLog._meta.fields
                       if f.name not in ("client_info", "capabilities")] + [
        "status", "client_info_shown", "capabilities_shown", "can_show"]
    inlines = [RenderedComponentInline, PendingRequestInline, ConsentInline]
    actions = [terminate_sessions]

    class Media:
        css = {"all": ["a2ui/admin/lists.css"]}

    @admin.display(description="session", ordering="session_id")
    def short_session_id(self, obj):
        return short_id(obj.session_id)

    @admin.display(description="status", ordering="state")
    def status(self, obj):
        """Its state, and for a live session whose socket went away, that it is detached."""
        if obj.is_live and obj.detached_at is not None:
            return "Detached (resumable)"  # since detached_at, on the session's page
        return obj.get_state_display()

    @admin.display(description="client")
    def client_info_shown(self, obj):
        return _readable(obj.client_info)

    @admin.display(description="capabilities")
    def capabilities_shown(self, obj):
        return _readable(obj.capabilities)

    @admin.display(description="what it can show now")
    def can_show(self, obj):
        """The union of its attached and resumable clients' declarations (a2ui.sessions.clients)."""
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

    def has_replay_permission(self, request):
        return request.user.is_active and request.user.is_staff and request.user.has_perm(
            replay_permission())

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and self.has_view_permission(request, obj):
            entries, summary = timeline.build(obj)
            can_replay = self.has_replay_permission(request)
            if can_replay:
                replaylog.moment_links(obj, entries)
            extra_context = {**(extra_context or {}), "timeline": entries,
                             "timeline_summary": summary, "can_replay": can_replay}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<path:object_id>/replay/", wrap(self.replay_view),
                 name="a2ui_a2uisessionlog_replay"),
            path("<path:object_id>/replay/frame/", wrap(self.replay_frame_view),
                 name="a2ui_a2uisessionlog_replay_frame"),
        ] + super().get_urls()

    def _replay_session(self, request, object_id):
        if not self.has_replay_permission(request):
            raise PermissionDenied
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404("No such session.")
        return obj

    def replay_view(self, request, object_id):
        """The session's screens, moment by moment, each drawn in a sandboxed frame."""
        obj = self._replay_session(request, object_id)
        moments, at, _ = replaylog.screen(obj, _moment(request))
        # Who looked at what a person saw is itself on the trail (issue 27, least privilege).
        audit.record("session.replay", actor=request.user, session_id=obj.pk,
                     details={"at": at})
        frame = reverse("admin:a2ui_a2uisessionlog_replay_frame", args=[obj.pk])
        context = {
            **self.admin_site.each_context(request),
            "title": f"Replay of session {obj.pk}",
            "opts": self.model._meta,
            "original": obj,
            "moments": moments,
            "at": at,
            "last": len(moments) - 1,
            "current": moments[at],
            "frame_url": f"{frame}?at={at}",
        }
        return TemplateResponse(request, "admin/a2ui/a2uisessionlog/replay.html", context)

    @xframe_options_sameorigin
    def replay_frame_view(self, request, object_id):
        """The screen at one moment: the web client's renderer fed the snapshot; no socket."""
        obj = self._replay_session(request, object_id)
        _, at, shown = replaylog.screen(obj, _moment(request))
        messages = jsonrpc_replay.messages(shown)
        nonce = csp.get_nonce(request)
        response = TemplateResponse(request, "admin/a2ui/a2uisessionlog/replay_frame.html",
                                    {"messages": messages, "at": at, "nonce": nonce,
                                     "agent_name": _agent_name(obj)})
        response["Content-Security-Policy"] = REPLAY_POLICY.format(nonce=nonce)
        response["X-Content-Type-Options"] = "nosniff"
        response["Referrer-Policy"] = "same-origin"
        response["Cache-Control"] = "no-store"
        return response


def _agent_name(session):
    """The session's agent as the person's page names it (its chat labels)."""
    agent = session.agent
    return (agent.display_name or agent.name) if agent is not None else ""


class ShortSessionMixin:
    @admin.display(description="session", ordering="session__session_id")
    def short_session(self, obj):
        return short_id(obj.session.session_id)


@admin.register(RenderedComponent)
class RenderedComponentAdmin(ShortSessionMixin, TimesWithSecondsMixin, QueryTextMixin, admin.ModelAdmin):
    # Fits a 1280 px screen (the session as its short id; position and expiry on the page).
    list_display = ("component_id", "component_type", "short_session", "updated_at")
    list_select_related = ("session",)
    list_filter = ("component_type",)
    search_fields = ("component_id", "session__session_id")
    readonly_fields = [f.name for f in RenderedComponent._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"


@admin.register(PendingRequest)
class PendingRequestAdmin(ShortSessionMixin, TimesWithSecondsMixin, QueryTextMixin, admin.ModelAdmin):
    # Fits a 1280 px screen (delivery on the page).
    list_display = ("request_id", "kind", "status", "short_session", "deadline", "resolved_at")
    list_select_related = ("session",)
    list_filter = ("kind", "status")
    search_fields = ("request_id", "session__session_id")
    readonly_fields = [f.name for f in PendingRequest._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"


@admin.register(Surface)
class SurfaceAdmin(ShortSessionMixin, TimesWithSecondsMixin, QueryTextMixin, admin.ModelAdmin):
    # Fits a 1280 px screen (the catalog, a long URL, on the page).
    list_display = ("surface_id", "short_session", "updated_at")
    list_select_related = ("session",)
    search_fields = ("surface_id", "session__session_id")
    readonly_fields = [f.name for f in Surface._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # read-only: the list and page say "View", not "Change"
