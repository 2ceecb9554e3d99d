"""Who may call what: people get stream tokens, agents send messages."""

from rest_framework.permissions import BasePermission

from a2ui.models import Agent


class IsPerson(BasePermission):
    """A user signed in by session or DRF token; agent keys are refused."""

    message = "This endpoint is for people (session or API token), not agent keys."

    def has_permission(self, request, view):
        user = request.user
        return bool(
            user and user.is_authenticated and not isinstance(request.auth, Agent)
            and getattr(user, "pk", None) is not None
        )


class IsAgent(BasePermission):
    """An agent authenticated with its key."""

    message = "This endpoint needs an agent key: Authorization: Bearer a2ui_ak_..."

    def has_permission(self, request, view):
        return isinstance(request.auth, Agent)
