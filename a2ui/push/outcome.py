"""Stage 7 of a push, the outcome: what the agent is answered, in one type.

A push answers what happened to it (``a2ui.push.keys`` says when): a :class:`Sent` when it was
numbered and sent (its sequence number, the session's attached clients per protocol, and the
protocols among them that show its kind), or a :class:`Pushed` when it has no number of its
own to report (a retry of a push already stored: ``replayed``; stored but not delivered live:
``warning``). :func:`answer` and :func:`flag` turn them into the JSON every agent path returns.
"""

from typing import Any

from a2ui.core import adapters


class Sent(int):
    """A push's sequence number with the clients of the session when it was sent:
    ``clients`` attached per protocol (``{protocol: n}``), ``reached`` those of them whose
    protocol shows the event's kind (``Adapter.kinds``)."""

    clients: dict[str, int] | None = None
    reached: dict[str, int] | None = None

    def __new__(cls, seq: int, clients: dict[str, int] | None,
                reached: dict[str, int] | None = None) -> "Sent":
        self = super().__new__(cls, seq)
        self.clients = clients
        self.reached = clients if reached is None else reached
        return self


class Pushed(int):
    """What a push answers when it has no sequence number of its own to report (0): a retry
    of a push already stored (``replayed``, with the original ``outcome``), or a push stored
    but not delivered live (``warning``)."""

    replayed: bool = False
    warning: str | None = None
    outcome: Any = None

    def __new__(cls, *, replayed: bool = False, warning: str | None = None,
                outcome: Any = None) -> "Pushed":
        self = super().__new__(cls, 0)
        self.replayed, self.warning, self.outcome = replayed, warning, outcome
        return self


def reached(kind: str, clients: dict[str, int] | None) -> dict[str, int]:
    """``{protocol: n}`` of ``clients`` whose adapter shows events of ``kind``."""
    if not clients:
        return {}
    kinds = {adapter.name: adapter.kinds for adapter in adapters.registered()}
    return {protocol: n for protocol, n in clients.items()
            if kind in kinds.get(protocol, ())}


def answer(seq: int, **fields: Any) -> dict[str, Any]:
    """``{"delivered": true, "seq": n, "clients": {protocol: n}, "reached": {protocol: n}}``,
    the answer of one push; for a :class:`Pushed`, ``seq`` null with ``replayed`` or
    ``warning`` (and no ``clients``)."""
    out = {"delivered": True, "seq": None if isinstance(seq, Pushed) else seq, **fields}
    return flag(out, seq)


def flag(out: dict[str, Any], *seqs: int | None) -> dict[str, Any]:
    """``out`` with ``replayed`` / ``warning`` when a push of ``seqs`` was a :class:`Pushed`
    (a batch's flags are the whole batch's), and ``clients`` / ``reached`` of the last one
    sent live."""
    for seq in seqs:
        clients = getattr(seq, "clients", None)
        if clients is not None:
            out["clients"] = clients
            out["reached"] = getattr(seq, "reached", None)
        if isinstance(seq, Pushed):
            if seq.replayed:
                out["replayed"] = True
            if seq.warning:
                out["warning"] = seq.warning
    return out


def surfaces(first: int, out: list[Any], sent: Sent | None = None) -> dict[str, Any]:
    """The answer of a v0.9 batch stored as surface numbers ``first`` .. ``first + len(out)
    - 1``: ``{"delivered": n, "seq": last}`` (what a retry with its key is answered), with
    ``clients`` and ``reached`` once sent."""
    result: dict[str, Any] = {"delivered": len(out), "seq": first + len(out) - 1}
    if sent is not None and sent.clients is not None:
        result["clients"] = sent.clients
        result["reached"] = sent.reached
    return result
