"""The push pipeline: how an agent's push reaches every client of a session. Read top to
bottom, one module a stage: ``entry`` (the one call every agent path makes), ``admit`` (may
this agent push this to this session now), ``store`` (what it changes, one transaction),
``keys`` (idempotency and what the agent is told), ``sequence`` (the only place events are
numbered), ``fanout`` (to every client: ``direct`` in this process, else one publish; the
replay hook), ``outcome`` (the one type of answer). Beside them, what else writes and then
sends: ``answers`` (a request's outcome), ``person`` (what a person sends), ``sessions``
(sessions opened and closed), ``revocation`` (operators' actions), ``sweep`` (housekeeping).
"""
