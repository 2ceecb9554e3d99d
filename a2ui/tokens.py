"""Typed credentials: stream tokens for user sockets, API keys for agents.

Each credential kind is recognisable on sight and accepted only where it belongs (seed 000
section 8.3):

* a stream token is a signed, typed claim set (``eyJ...:signature``, Django signing with a salt
  per token type) naming a StreamToken row; the row makes it revocable and expirable, and the
  token string itself is never stored;
* an agent key is ``a2ui_ak_<prefix>_<secret>``; only its SHA-256 hash is stored.
"""

import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.core import signing
from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.infra import dbconn
from a2ui.models import Agent, StreamToken

#: Each type is signed with its own salt, so a token of one type never verifies as another.
#: The types are the registered adapters' (``Adapter.token_type``, :func:`stream_token_types`):
#: the shipped ones are ``stream_a2ui`` (the person's page: the A2UI sockets and the SSE
#: stream), ``stream_mcp`` (only ``/mcp``) and ``stream_agui`` (only ``/ws/agui`` and AG-UI 1.0
#: runs). A new protocol's type needs no migration. This one is issued when none is named.
DEFAULT_TYPE = "stream_a2ui"


def stream_token_types():
    """The stream-token types a person's client may present: the registered adapters'
    ``token_type`` (``A2UI['ADAPTERS']``, ``a2ui.core.adapters``), in their order."""
    from a2ui.core.adapters import registered

    return tuple(dict.fromkeys(a.token_type for a in registered() if a.token_type))
AGENT_KEY_PREFIX = "a2ui_ak_"
#: What generate_agent_key produces; anything else (NUL, non-ASCII) never reaches the database.
_AGENT_KEY_SHAPE = re.compile(r"a2ui_ak_[0-9a-f]{1,32}_[A-Za-z0-9_-]{1,160}")


class TokenError(Exception):
    """A credential was refused; ``reason`` is safe to show to the client."""

    def __init__(self, reason, record=None):
        super().__init__(reason)
        self.reason = reason
        self.record = record  # the StreamToken, when a real token was refused (expired, ...)


def _salt(token_type):
    return f"a2ui.stream-token.{token_type}"


# Stream tokens ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_at: object
    token_type: str
    record: StreamToken


def issue_stream_token(user, agent, token_type=DEFAULT_TYPE):
    """Create the StreamToken row and return the signed token (shown once, never stored)."""
    if token_type not in stream_token_types():
        raise TokenError(f"Unknown token_type {token_type!r}.")
    now = timezone.now()
    record = StreamToken.objects.create(
        jti=uuid.uuid4(),
        user=user,
        agent=agent,
        token_type=token_type,
        issued_at=now,
        expires_at=now + timedelta(minutes=a2ui_settings.STREAM_TOKEN_EXPIRE_MINUTES),
    )
    token = signing.dumps(
        {"jti": record.jti.hex, "typ": token_type}, salt=_salt(token_type), compress=False
    )
    return IssuedToken(token, record.expires_at, token_type, record)


def peek_stream_token(raw, token_type=DEFAULT_TYPE):
    """Return the jti if ``raw`` is a validly signed stream token of that type, else None.

    No database access: REST authentication uses it to refuse stream tokens on sight.
    """
    if not isinstance(raw, str) or not raw or len(raw) > 512:
        return None
    try:
        claims = signing.loads(raw, salt=_salt(token_type))
    except signing.BadSignature:
        return None
    if not isinstance(claims, dict) or claims.get("typ") != token_type:
        return None
    try:
        return uuid.UUID(hex=str(claims.get("jti")))
    except ValueError:
        return None


def peek_any_stream_token(raw):
    """The type of stream token ``raw`` is (signature checked, no database), or None."""
    for token_type in stream_token_types():
        if peek_stream_token(raw, token_type) is not None:
            return token_type
    return None


@dbconn.read_retried
def verify_stream_token(raw, token_type=DEFAULT_TYPE):
    """Return the live StreamToken for ``raw`` or raise TokenError (bad, expired, revoked)."""
    jti = peek_stream_token(raw, token_type)
    if jti is None:
        raise TokenError("Invalid stream token.")
    record = (
        StreamToken.objects.select_related("user", "agent").filter(jti=jti).first()
    )
    if record is None or record.token_type != token_type:
        raise TokenError("Invalid stream token.")
    if record.revoked_at is not None:
        raise TokenError("Stream token revoked.", record)
    if record.expires_at <= timezone.now():
        raise TokenError("Stream token expired.", record)
    if not record.user.is_active:
        raise TokenError("User inactive.", record)
    if record.agent is not None and not record.agent.is_active:
        raise TokenError("Agent inactive.", record)
    return record


# Agent keys ------------------------------------------------------------------------------------


def _hash_key(key):
    return hashlib.sha256(key.encode()).hexdigest()


def generate_agent_key():
    """Return (key, prefix, hash) for a new agent key."""
    prefix = secrets.token_hex(6)
    key = f"{AGENT_KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return key, prefix, _hash_key(key)


def create_agent(name, owner=None, **fields):
    """Register an agent; return (agent, key). The key is shown once and stored only hashed."""
    key, prefix, key_hash = generate_agent_key()
    agent = Agent.objects.create(
        name=name, owner=owner, key_prefix=prefix, key_hash=key_hash, **fields
    )
    return agent, key


def rotate_agent_key(agent):
    key, prefix, key_hash = generate_agent_key()
    agent.key_prefix, agent.key_hash = prefix, key_hash
    agent.save(update_fields=["key_prefix", "key_hash"])
    return key


def looks_like_agent_key(raw):
    return isinstance(raw, str) and raw.startswith(AGENT_KEY_PREFIX)


@dbconn.read_retried
def verify_agent_key(raw):
    """Return the active Agent for ``raw`` or raise TokenError."""
    if not looks_like_agent_key(raw) or len(raw) > 200 or not _AGENT_KEY_SHAPE.fullmatch(raw):
        raise TokenError("Invalid agent key.")
    prefix = raw[len(AGENT_KEY_PREFIX):].split("_", 1)[0]
    agent = Agent.objects.filter(key_prefix=prefix).first()
    if agent is None or not hmac.compare_digest(agent.key_hash, _hash_key(raw)):
        raise TokenError("Invalid agent key.")
    if not agent.is_active:
        raise TokenError("Agent key revoked.")
    return agent


def default_agent():
    """The agent a stream token names when the client does not choose one."""
    name = a2ui_settings.DEFAULT_AGENT
    if name:
        return Agent.objects.filter(name=name, is_active=True).first()
    active = list(Agent.objects.filter(is_active=True)[:2])
    return active[0] if len(active) == 1 else None
