"""Seeded hostile A2A stream events into the A2A client's reader (a2ui.remote.a2a.parts) and
mapper: nothing raises, nothing the policy refuses comes out as a surface, every refusal is a
short printable sentence, every text is UTF-8 encodable."""

import json
import random

from a2ui.core.content import jsonvalue
from a2ui.remote import ops
from a2ui.remote.a2a import parts as p
from a2ui.remote.a2a.extension import MIME
from a2ui.remote.a2a.mapping import RunMapper
from tests.fuzz.seed import SEED, cases

KINDS = ["createSurface", "updateComponents", "updateDataModel", "deleteSurface", "action",
         "bogus", "__proto__", ""]
MIMES = [MIME, "application/json+a2ui", "application/json", "text/html", "", None, 7]
STATES = ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED",
          "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED",
          "TASK_STATE_CANCELED", "bogus", None, 3]


def scalar(rng):
    return rng.choice([
        2 ** 63, -(2 ** 64) - 1, 2 ** 200, 1e308, float("inf"), float("nan"), -0.0, 3.0,
        "\ud800", "a\udfffb", "\x00", "<script>alert(1)</script>", "javascript:alert(1)",
        "x" * rng.choice([1, 10, 5000]), True, None, 0, "", "\u202e", "🙂",
    ])


def value(rng, depth=0):
    roll = rng.random()
    if depth > 70 or roll < 0.4:
        return scalar(rng)
    if roll < 0.7:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["surfaceId", "catalogId", "components", "value", "path", "id",
                        "\ud800", "k\x00", scalar(rng) if rng.random() < 0.05 else "x"]):
            value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def deep(n):
    v = "leaf"
    for _ in range(n):
        v = {"a": v}
    return v


def message(rng):
    roll = rng.random()
    if roll < 0.1:
        return scalar(rng)
    if roll < 0.15:
        return {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": deep(200)}}
    extra = value(rng)
    body = {"surfaceId": rng.choice(["s", "\ud800", 5, "x" * 300]),
            **(extra if isinstance(extra, dict) else {})}
    msg = {"version": rng.choice(["v0.9", "v0.9.1", "v9", 1]), rng.choice(KINDS): body}
    if rng.random() < 0.2:
        msg[rng.choice(KINDS)] = value(rng)
    return msg


def part(rng):
    roll = rng.random()
    if roll < 0.3:
        return {"text": rng.choice(["hi", "<img src=x onerror=alert(1)>", "\ud800", "a\x00b"])}
    data = rng.choice([
        [message(rng) for _ in range(rng.randint(0, 4))], message(rng), scalar(rng),
        [message(rng)] * rng.choice([1, p.MAX_MESSAGES_PER_PART + 1]),
    ])
    out = {"data": data}
    where = rng.random()
    if where < 0.45:
        out["metadata"] = {"mimeType": rng.choice(MIMES)}
    elif where < 0.9:
        out["mediaType"] = rng.choice(MIMES)
    else:
        out["metadata"] = scalar(rng)
    return out


def event(rng):
    parts = [part(rng) for _ in range(rng.randint(0, 4))]
    msg = {"messageId": rng.choice(["m", "", 5, None]), "parts": rng.choice([parts, parts, "x"])}
    shape = rng.randrange(6)
    if shape == 0:
        return {"statusUpdate": {"taskId": "t", "contextId": rng.choice(["c", 5]),
                                 "status": {"state": rng.choice(STATES), "message": msg}}}
    if shape == 1:
        return {"artifactUpdate": {"taskId": "t", "append": rng.random() < 0.5,
                                   "lastChunk": rng.choice([True, False, "yes"]),
                                   "artifact": {"artifactId": rng.choice(["a", 1]),
                                                "parts": parts}}}
    if shape == 2:
        return {"message": {**msg, "taskId": rng.choice(["t", ""])}}
    if shape == 3:
        return {"task": {"id": "t", "status": {"state": rng.choice(STATES), "message": msg},
                         "artifacts": rng.choice([[{"parts": parts}], "x"])}}
    if shape == 4:
        return value(rng)
    return {"statusUpdate": scalar(rng)}


def _encodable(obj):
    json.dumps(obj, ensure_ascii=False).encode("utf-8")


def test_hostile_events_never_escape_the_reader():
    rng = random.Random(SEED)
    for _ in range(cases(400)):
        reader, mapper = p.Reader(), RunMapper()
        for _ in range(rng.randint(1, 5)):
            items = reader.read(event(rng))
            out = mapper.ops(items)
            for item in items:
                if isinstance(item, p.Surface):
                    for m in item.messages:
                        assert isinstance(m, dict)
                        assert len([k for k in m if k in p.SERVER_KINDS]) == 1
                        assert jsonvalue.find(m) is None
                        _encodable(m)
                elif isinstance(item, p.Refused):
                    assert len(item.reason) < 400
                    _encodable([item.reason, item.surface_id, item.path])
                elif isinstance(item, p.Text | p.TextChunk):
                    _encodable(item.text)
            for op in out:
                if isinstance(op, ops.TextDelta):
                    _encodable(op.delta)
        for op in mapper.finish():
            assert isinstance(op, ops.OPS)
        for err in mapper.errors:
            _encodable(err)
