"""The admin of remote agents: an agent's transport, on the agent's page (an inline).

Header values are written once (a textarea, one ``Name: value`` a line) and never shown
again: the page shows their names only; an empty field keeps them, "remove headers" drops
them. The URL is checked against ``A2UI['REMOTE_AGENT_HOSTS']`` (and an A2A agent's card read)
before anything is saved."""

from django import forms
from django.contrib import admin

from a2ui.remote import registry, secrets
from a2ui.remote.models import RemoteAgent


class RemoteAgentForm(forms.ModelForm):
    headers = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off"}), required=False,
        strip=True, help_text="One 'Name: value' a line, e.g. 'Authorization: Bearer ...'. "
                              "Stored encrypted and never shown again; empty keeps the stored "
                              "headers.")
    remove_headers = forms.BooleanField(required=False, help_text="Remove every header.")

    class Meta:
        model = RemoteAgent
        fields = ("kind", "url", "max_concurrent_runs")

    def clean(self):
        data = super().clean()
        text = data.get("headers") or ""
        try:
            data["parsed_headers"] = registry.parse_headers(
                [line for line in text.splitlines() if line.strip()]) if text else None
            if data.get("remove_headers"):
                data["parsed_headers"] = {}
            in_process = self.instance.pk is not None and self.instance.in_process
            if not in_process:
                url = data.get("url") or ""
                if not url:
                    raise registry.Refused("A remote agent needs its URL.")
                kind = data.get("kind") or RemoteAgent.KIND_AGUI
                if (self.instance.pk is None or url != self.instance.url
                        or kind != self.instance.kind):
                    prepared = registry.prepare(kind, url, data["parsed_headers"] or
                                                self._stored_headers())
                    data["url"] = prepared.get("url") or url
                    self.instance.config = prepared.get("config") or {}
        except registry.Refused as exc:
            raise forms.ValidationError(str(exc)) from None
        return data

    def _stored_headers(self):
        if self.instance.pk is None:
            return {}
        try:
            return secrets.unseal(self.instance.sealed_headers)
        except secrets.SealError:
            return {}

    actor = None  # the operator (set by the inline for the request)

    def save(self, commit=True):
        remote = super().save(commit=False)
        headers = self.cleaned_data.get("parsed_headers")
        if headers is not None:
            remote.sealed_headers = secrets.seal(headers)
            remote.header_names = sorted(headers)
        if commit:
            remote.save()
        if self.has_changed():
            registry.audited_change(remote.agent, self.actor, sorted(self.changed_data),
                                    remote.url, headers)
        return remote


class RemoteAgentInline(admin.StackedInline):
    """On an agent's page (once it exists: create the agent, then give it its transport):
    "Remote agent transport", empty for an agent that connects itself."""

    model = RemoteAgent
    form = RemoteAgentForm
    extra = 0
    max_num = 1
    can_delete = False
    fields = ("kind", "url", "header_names", "headers", "remove_headers", "in_process",
              "max_concurrent_runs", "config", "updated_at")
    readonly_fields = ("header_names", "in_process", "config", "updated_at")

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.form = type("RemoteAgentForm", (formset.form,), {"actor": request.user})
        return formset

    def has_change_permission(self, request, obj=None):
        return request.user.has_perm("a2ui.change_agent")

    def has_add_permission(self, request, obj=None):
        return request.user.has_perm("a2ui.change_agent")

    def has_delete_permission(self, request, obj=None):
        return False
