"""Stage 2 of a push, admit: may this agent push this to this session now?

Three checks, each before anything is stored or sent:

* the owner: the session is live and the agent's (:func:`agent_session`; a Redis or local
  cache answers most calls, the database the first and after the entry lapses, closing a
  session deletes it everywhere);
* the content of activity events against the configured limits (:func:`clean`; the stored
  state is checked again under the row's lock in ``store``);
* the consent gate, for what asks the person something (:func:`consent_gate`: -32010 while a
  required consent is missing, after the person's clients were prompted for it).
"""

from a2ui.consent import choices as consent
from a2ui.core.errors import DomainError, Fault
from a2ui.core.events import Kind
from a2ui.infra import dbthreads, shared
from a2ui.push import fanout
from a2ui.sessions import lifecycle as sessions
from a2ui.surfaces import activity


async def agent_session(agent_id, session_id):
    """The session's UUID; -32000 unless the session is live and belongs to this agent."""
    sid = sessions.parse_session_id(session_id)
    cached = await shared.cached_session(sid.hex)
    if cached is None:
        row = await dbthreads.run(sessions.live_owner, sid)
        if row is None:
            raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)})
        await shared.cache_session(sid.hex, row[0], row[1])
        cached = (str(row[0] or ""), str(row[1] or ""))
    if cached[0] != str(agent_id or ""):
        raise DomainError(Fault.SESSION_NOT_FOUND, data={"session_id": str(sid)})
    return sid


def owns(owner, agent_id):
    """True when a cached owner ``(agent_id, user_id)`` is the agent's."""
    return owner is not None and owner[0] == str(agent_id or "")


def clean(kind, data, prefix=""):
    """The clean data of an event an agent pushes: activity kinds checked against the
    configured limits (``a2ui.surfaces.activity.check``), the rest as their protocol read
    them."""
    if kind in activity.KINDS:
        return activity.check(kind, data, prefix)
    return data


async def consent_gate(sid, prompt=True):
    """Raise -32010 if the session's person lacks a required consent. With ``prompt``, the
    session's clients are first sent ``consent.required``, so the person can answer what the
    agent is waiting for."""
    missing = await consent.amissing_for_session(sid)
    if missing and prompt:
        await fanout.emit(sid, Kind.CONSENT_REQUIRED,
                          {"consent_types": consent.describe(missing)})
    consent.require(missing)
