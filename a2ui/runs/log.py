"""A run's stream, kept for a client whose connection broke off: it comes back (to any process)
and gets what it missed, then what follows (AG-UI 1.0 resumption; docs/protocol-agui.md,
"Resuming a run").

The process streaming a run appends each of its events, as the frame its client got (opaque
bytes, numbered 1, 2, ... by the stream: the SSE ``id``), to the run's *log*; a client that
comes back names the last number it received and a *reader* (any process) sends the frames
after it, in order, then the new ones as they are appended. Nothing here reads a frame.

Keys (Redis; ``<run>`` is ``<session hex>:<run digest>``, as ``runleases.key``):

* ``a2ui:rlog:<run>``: a Redis stream, one entry per frame, entry id ``<n>-0``, fields ``f``
  (the frame) and ``t`` (``1`` on the run's final event). Its TTL is set again with every
  append (the stream says how long: a running run's log outlives its quiet periods, an ended
  run's is kept ``AGUI_RESUME_SECONDS``), and it keeps at most ``MAX_FRAMES`` (the oldest go).
* ``a2ui:ratt:<run>``: the reader attached now (a token of its own), for ``ATTACH_SECONDS``,
  set again by the reader as it polls; a new reader replaces the old one, which then stops.
* ``a2ui:raway:<run>``: the client of the run's own stream went away (set by the stream).

What may go wrong, and what it does: Redis loses the log (a restart, a flush, an eviction), an
append fails, or the oldest frames were trimmed. A reader checks that the numbers it sends
follow each other from the client's last one: a log that is missing while the client had
frames, that ends before the client's last one, or whose next frame is not the next number is
*lost* (:class:`Read` ``lost``): the reader says so to its client (which then starts again from
the session's state), it never skips a frame. Losing the attachment keys only delays: a reader
sets its key again at its next poll.

Without Redis (one process, the embedded default) the log lives in this process.
"""

import hashlib
import logging
import time
from dataclasses import dataclass, field

from a2ui.infra import outages, shared

log = logging.getLogger(__name__)

MAX_FRAMES = 5000  # per run: older frames are trimmed (a client that needs them restarts)
ATTACH_SECONDS = 5  # a reader's attachment, set again at each of its polls
READ_LIMIT = 500  # frames per read
WARN_EVERY_SECONDS = 10.0  # an outage is said once in a while, not once per event
_warned = [0.0]

# KEYS[1] the attachment; ARGV[1] the reader's token. Deletes it if it is still this reader's.
DETACH_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def run_key(session_id, run_id):
    session_hex = getattr(session_id, "hex", None) or str(session_id).replace("-", "")
    digest = hashlib.sha256(str(run_id).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{session_hex}:{digest}"


def _keys(session_id, run_id):
    run = run_key(session_id, run_id)
    return f"a2ui:rlog:{run}", f"a2ui:ratt:{run}", f"a2ui:raway:{run}"


def _warn(message, *args):
    outages.tally()
    now = time.monotonic()
    if now - _warned[0] >= WARN_EVERY_SECONDS:
        _warned[0] = now
        log.warning(message, *args, exc_info=True)


def _redis():
    backend = shared.backend()
    return backend if hasattr(backend, "execute") else None


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _number(entry_id):
    """The frame number of a stream entry id ``<n>-0`` (None if it is not one of ours)."""
    head, _, _ = _text(entry_id).partition("-")
    return int(head) if head.isdigit() else None


@dataclass
class Read:
    """What a reader found after the client's last frame: ``entries`` ``[(n, frame, final)]``
    in order; ``lost``: the frames after the client's last one are not all there any more;
    ``taken``: another reader attached since (this one stops); ``complete``: the client's last
    frame is the run's final one (nothing more will come)."""

    entries: list = field(default_factory=list)
    lost: bool = False
    taken: bool = False
    complete: bool = False


def check(after, entries, newest, newest_final=False):
    """The :class:`Read` of the frames ``entries`` ``[(n, frame, final)]`` found after frame
    ``after``, the log's newest number being ``newest`` (None: no log; ``newest_final``: that
    frame is the run's final one). Sans-I/O."""
    if newest is None:
        # No log: lost if the client had frames of it (it expired, or Redis lost it); else the
        # run's stream has not appended yet (its first frame is about to come).
        return Read(lost=after > 0)
    if newest < after:  # the log began again (lost and appended since), or a bogus number
        return Read(lost=True)
    expected = after + 1
    for n, _, _ in entries:
        if n != expected:  # a frame between is missing: trimmed, lost, or an append failed
            return Read(lost=True)
        expected += 1
    return Read(entries=list(entries), complete=newest == after and newest_final)


# Process-local stand-ins (no Redis) -------------------------------------------------------------

_local_logs = {}  # log key -> {"entries": [(n, frame, final)], "expires": monotonic}
_local_keys = {}  # attachment / away key -> (value, expires)


def _local_get(key):
    value, expires = _local_keys.get(key, (None, 0))
    return value if expires > time.monotonic() else None


def _local_log(key):
    entry = _local_logs.get(key)
    if entry is None or entry["expires"] <= time.monotonic():
        _local_logs.pop(key, None)
        return None
    return entry


def clear():
    """Forget the process-local logs (tests)."""
    _local_logs.clear()
    _local_keys.clear()


# The stream's side ------------------------------------------------------------------------------


async def append(session_id, run_id, entries, ttl):
    """Add ``entries`` ``[(n, frame, final)]`` (numbers following the log's) to the run's log,
    kept ``ttl`` seconds from now. False when they could not be stored (logged: a reader then
    finds the gap)."""
    if not entries:
        return True
    key, _, _ = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        now = time.monotonic()
        entry = _local_log(key) or {"entries": []}
        entry["entries"].extend(entries)
        del entry["entries"][:-MAX_FRAMES]
        entry["expires"] = now + ttl
        _local_logs[key] = entry
        if len(_local_logs) > 10000:
            for old in [k for k, v in _local_logs.items() if v["expires"] <= now]:
                del _local_logs[old]
        return True
    commands = [("XADD", key, "MAXLEN", "~", MAX_FRAMES, f"{n}-0", "f", frame,
                 "t", "1" if final else "0") for n, frame, final in entries]
    try:
        await redis.execute(*commands, ("EXPIRE", key, max(1, int(ttl))))
    except Exception:  # a gap a reader will find: never a silent skip
        _warn("a2ui: could not keep %d frame(s) of a run for resumption (and maybe more "
              "meanwhile)", len(entries))
        return False
    return True


async def mark_away(session_id, run_id, ttl):
    """The client of the run's own stream went away (for ``ttl`` seconds at most)."""
    _, _, away = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        _local_keys[away] = ("1", time.monotonic() + ttl)
        return
    try:
        await redis.execute(("SET", away, "1", "EX", max(1, int(ttl))))
    except Exception:  # a new run of the thread then waits for the stream to end the run
        _warn("a2ui: could not mark a run's client gone")


async def attended(session_id, run_id):
    """True while a reader is attached to the run, False when none is, None when Redis cannot
    say."""
    _, att, _ = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        return _local_get(att) is not None
    try:
        (value,) = await redis.execute(("EXISTS", att))
    except Exception:
        return None
    return bool(value)


async def unattended(session_id, run_id):
    """True when the client of the run's own stream went away and no reader is attached: a new
    run of the thread may take its place."""
    _, att, away = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        return _local_get(away) is not None and _local_get(att) is None
    try:
        is_away, is_attended = await redis.execute(("EXISTS", away), ("EXISTS", att))
    except Exception:
        return False
    return bool(is_away) and not is_attended


# The reader's side ------------------------------------------------------------------------------


async def attach(session_id, run_id, token):
    """Attach the reader ``token`` (it replaces any other: that one stops at its next read)."""
    _, att, _ = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        _local_keys[att] = (token, time.monotonic() + ATTACH_SECONDS)
        return
    try:
        await redis.execute(("SET", att, token, "EX", ATTACH_SECONDS))
    except Exception:  # set again at its next read
        _warn("a2ui: could not attach a reader to a run")


async def detach(session_id, run_id, token):
    """The reader ``token`` goes (its attachment is removed if it is still its own)."""
    _, att, _ = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        if _local_get(att) == token:
            _local_keys.pop(att, None)
        return
    try:
        await redis.execute(("EVAL", DETACH_SCRIPT, 1, att, token))
    except Exception:  # it expires by itself
        _warn("a2ui: could not detach a reader from a run")


async def read(session_id, run_id, after, token, limit=READ_LIMIT):
    """The frames after number ``after`` (:class:`Read`), in one round trip that also keeps the
    reader ``token`` attached. Raises when Redis cannot be reached (the reader tries again)."""
    key, att, _ = _keys(session_id, run_id)
    redis = _redis()
    if redis is None:
        holder = _local_get(att)
        if holder is not None and holder != token:
            return Read(taken=True)
        _local_keys[att] = (token, time.monotonic() + ATTACH_SECONDS)
        entry = _local_log(key)
        if entry is None:
            return check(after, [], None)
        found = [e for e in entry["entries"] if e[0] > after][:limit]
        newest = entry["entries"][-1] if entry["entries"] else (None, None, False)
        return check(after, found, newest[0], newest[2])
    holder, _, found, newest = await redis.execute(
        ("GET", att), ("EXPIRE", att, ATTACH_SECONDS),
        ("XRANGE", key, f"{after + 1}-0", "+", "COUNT", limit),
        ("XREVRANGE", key, "+", "-", "COUNT", 1))
    if holder is None:  # lost with Redis (or expired): attach again
        await redis.execute(("SET", att, token, "EX", ATTACH_SECONDS, "NX"))
    elif _text(holder) != token:
        return Read(taken=True)
    entries = [_entry(entry_id, fields) for entry_id, fields in found or ()]
    last = _entry(*newest[0]) if newest else (None, None, False)
    return check(after, entries, last[0], last[2])


def _entry(entry_id, fields):
    """``(n, frame, final)`` of a stream entry as Redis gives it."""
    values = {_text(k): v for k, v in zip(fields[::2], fields[1::2], strict=True)}
    frame = values.get("f", b"")
    return (_number(entry_id), frame if isinstance(frame, bytes) else frame.encode(),
            _text(values.get("t")) == "1")
