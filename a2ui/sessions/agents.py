"""Registering, revoking and re-keying agents; every change is audited and live sockets close."""

import re

from asgiref.sync import async_to_sync
from django.db.models import Q
from django.utils import timezone

from a2ui import tokens
from a2ui.compliance import audit
from a2ui.core.closes import CloseCode
from a2ui.infra import groups

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def find_agent(agent_id):
    """The active agent named ``agent_id`` (its name, or its id as digits), or None."""
    query = Q(name=agent_id)
    if agent_id.isdigit():
        query |= Q(pk=int(agent_id))
    return tokens.Agent.objects.filter(query, is_active=True).first()


def create(name, owner=None, actor=None, **fields):
    if not NAME_RE.match(name or ""):
        raise ValueError("Agent names are 1-64 letters, digits, '-' or '_'.")
    fields = {k: v for k, v in fields.items() if v not in (None, "")}
    agent, key = tokens.create_agent(name, owner=owner, **fields)
    audit.record("agent.create", actor=actor, agent=agent, target=agent)
    return agent, key


def _close_key_sockets(agent, reason):
    async_to_sync(groups.send_group)(
        groups.agent_key_group(agent), groups.close_event(CloseCode.REVOKED, reason)
    )


def revoke(agent, actor=None):
    """Deactivate the agent: its key is refused from now on and its open sockets close."""
    agent.is_active = False
    agent.revoked_at = timezone.now()
    agent.save(update_fields=["is_active", "revoked_at"])
    audit.record("agent.revoke", actor=actor, agent=agent, target=agent)
    _close_key_sockets(agent, "Agent key revoked")


def rotate(agent, actor=None):
    old = tokens.Agent(pk=agent.pk, key_prefix=agent.key_prefix)
    key = tokens.rotate_agent_key(agent)
    audit.record("agent.rotate_key", actor=actor, agent=agent, target=agent)
    _close_key_sockets(old, "Agent key rotated")
    return key
