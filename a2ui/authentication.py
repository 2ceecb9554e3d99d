"""DRF authentication: agent keys for agents, and stream tokens refused on every endpoint."""

from rest_framework import authentication, exceptions

from a2ui import tokens


def _bearer(request):
    header = authentication.get_authorization_header(request).decode("latin-1")
    scheme, _, value = header.partition(" ")
    if scheme.lower() in {"bearer", "token"} and value.strip():
        return value.strip()
    return None


class RejectStreamTokenAuthentication(authentication.BaseAuthentication):
    """Stream tokens open A2UI sockets and nothing else (seed 000 section 8.3)."""

    message = "Stream tokens are only valid for A2UI WebSocket connections."

    def authenticate(self, request):
        candidates = [_bearer(request), request.query_params.get("token")]
        if any(c and tokens.peek_any_stream_token(c) for c in candidates):
            raise exceptions.AuthenticationFailed(self.message)
        return None

    def authenticate_header(self, request):
        return 'Bearer realm="a2ui"'


class AgentPrincipal:
    """The request.user of an agent-authenticated request: authenticated, not a person."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None
    id = None

    def __init__(self, agent):
        self.agent = agent
        self.username = f"agent:{agent.name}"

    def __str__(self):
        return self.username

    def has_perm(self, perm, obj=None):
        return False


class AgentKeyAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer a2ui_ak_...``: request.user is an AgentPrincipal, auth the Agent."""

    def authenticate(self, request):
        raw = _bearer(request)
        if not raw or not tokens.looks_like_agent_key(raw):
            return None
        try:
            agent = tokens.verify_agent_key(raw)
        except tokens.TokenError as exc:
            raise exceptions.AuthenticationFailed(exc.reason) from None
        return AgentPrincipal(agent), agent

    def authenticate_header(self, request):
        return 'Bearer realm="a2ui"'
