"""Ghost sessions: in use (attached, ``detached_at`` null) with no live client.

A session is marked detached when its socket count says its last socket left
(``lifecycle.asocket_closed``). That count cannot always say: a process killed with sockets
open never uncounts them, a count lost with Redis cannot be uncounted, a run whose stream never
started was counted and never shown. The session's client registry can: each client that shows
the session holds a lease there (``a2ui.sessions.clients``) that its process refreshes, which
lapses ``CAP_LEASE_SECONDS`` after its process stops. A session in use whose registry has no
live member is a ghost, and is detached (the resume window then runs as for any detached
session: its clients may still resume it):

* by the housekeeping sweep, for every session (``a2ui.push.sweep``), so none stays in use
  without a client for longer than ``CAP_LEASE_SECONDS`` plus two sweeps;
* by a socket's close whose count is gone (``lifecycle.asocket_closed``);
* by the admission of a person refused at a limit: her own ghosts (and, at the agent's limit,
  the agent's) are detached and she is admitted if that made room (``a2ui.push.sessions``).

A session opened (or resumed) less than ``GRACE_SECONDS`` ago is not judged: its client is
joining the registry. The registry answers "cannot tell" (Redis unreachable, or its leases
younger than their time to live, e.g. just after a Redis restart): then nothing is detached.
"""

import logging
from datetime import timedelta

from django.utils import timezone

from a2ui.conf import a2ui_settings
from a2ui.infra import dbthreads, leases
from a2ui.models import A2UISessionLog
from a2ui.sessions import clients

log = logging.getLogger("a2ui.services")

#: A session attached this recently is not judged (its client is joining the registry).
GRACE_SECONDS = 5
#: Registries read per round trip.
BATCH = 500


def _attached(agent_id=None, user_id=None):
    """The sessions in use (of ``agent_id``, of ``user_id``: None for all), attached longer
    than the grace (created, and last active: a resume sets it, before that)."""
    cutoff = timezone.now() - timedelta(seconds=GRACE_SECONDS)
    rows = A2UISessionLog.objects.filter(state__in=A2UISessionLog.LIVE_STATES, detached_at__isnull=True,
                                         created_at__lt=cutoff)
    if agent_id is not None:
        rows = rows.filter(agent_id=agent_id)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    return list(rows.values_list("pk", flat=True))


async def ghosts(session_ids):
    """Of ``session_ids``, those whose registry has no live client (the registry is sure)."""
    out = []
    ids = list(session_ids)
    for i in range(0, len(ids), BATCH):
        chunk = ids[i:i + BATCH]
        keys = [clients.holder(sid.hex).key(clients.KIND) for sid in chunk]
        answers = await leases.alive(keys, ttl=a2ui_settings.CAP_LEASE_SECONDS)
        out.extend(sid for sid, alive in zip(chunk, answers, strict=True) if alive is False)
    return out


def _detach(session_ids):
    """Mark these sessions detached, those still attached. A client that attached meanwhile
    finds its session detached: the sweep attaches it again at the end of the resume window
    (its socket count and its registry say it is shown), as for a resume racing a close."""
    return A2UISessionLog.objects.filter(
        pk__in=list(session_ids), state__in=A2UISessionLog.LIVE_STATES, detached_at__isnull=True,
    ).update(detached_at=timezone.now())


async def adetach(agent_id=None, user_id=None):
    """Detach the ghosts among the sessions in use (of an agent, a person, or all); how many."""
    candidates = await dbthreads.run(_attached, agent_id, user_id)
    if not candidates:
        return 0
    found = await ghosts(candidates)
    if not found:
        return 0
    done = await dbthreads.run(_detach, found)
    if done:
        log.info("a2ui: %d session(s) in use with no live client detached", done)
    return done


async def adetach_if_ghost(session_id):
    """Detach this session if no client shows it (its close could not tell from the count)."""
    if await ghosts([session_id]):
        return await dbthreads.run(_detach, [session_id])
    return 0


async def amake_room(refusal, agent_id, user_id):
    """A person refused at a limit (``admission.Refusal``): detach the ghosts that fill it
    (hers at her share, the agent's at the agent's limit); True if any was, so that admitting
    her again may succeed."""
    if refusal is None or agent_id is None:
        return False
    return bool(await adetach(agent_id, user_id if refusal.per == "person" else None))
