"""The process-local tallies the metrics hooks add to (``a2ui.infra.prom``): a counter's totals,
a gauge's levels and a histogram's bucket counts per label tuple, each a dict entry under one
uncontended lock, flushed into ``prometheus_client``'s metrics off the hot path; and the bounded
label values they are keyed by."""

import bisect
import re
import threading

_LABEL = re.compile(r"[a-z0-9_.-]{1,40}")
MAX_LABELS = 32
_seen = {}
_labels = {}  # (kind, raw value) -> its label: the hot path's lookup


def label(value, kind="protocol"):
    """A bounded label value: at most :data:`MAX_LABELS` distinct values per kind, the rest
    ``"other"``; anything not a short lowercase word ``"other"`` too."""
    key = (kind, value)
    try:
        return _labels[key]
    except (KeyError, TypeError):  # TypeError: an unhashable value
        pass
    text = str(value).lower()
    if not _LABEL.fullmatch(text):
        return "other"
    seen = _seen.setdefault(kind, set())
    if text not in seen:
        if len(seen) >= MAX_LABELS:
            return "other"
        seen.add(text)
    if len(_labels) < 4 * MAX_LABELS * max(1, len(_seen)):
        try:
            _labels[key] = text
        except TypeError:
            pass
    return text


# The tallies: what the hooks add to ----------------------------------------------------------

tally_lock = threading.Lock()  # held for one dict update: adds come from threads too


class Counts:
    """A counter's process-local totals per label tuple; :meth:`flush` adds to the metric what
    came since the last flush (nothing added meanwhile is lost)."""

    def __init__(self, metric):
        self.metric, self.totals, self.flushed = metric, {}, {}

    def add(self, key=(), n=1):
        with tally_lock:
            self.add_locked(key, n)

    def add_locked(self, key, n):
        """:meth:`add` with ``tally_lock`` already held (several tallies under one lock)."""
        self.totals[key] = self.totals.get(key, 0) + n

    def flush(self):
        with tally_lock:
            totals = dict(self.totals)
        for key, total in totals.items():
            delta = total - self.flushed.get(key, 0)
            if delta:
                (self.metric.labels(*key) if key else self.metric).inc(delta)
                self.flushed[key] = total


class Levels(Counts):
    """A gauge's process-local values per label tuple (added to, up and down); :meth:`flush`
    sets the metric to the values that changed."""

    def flush(self):
        with tally_lock:
            totals = dict(self.totals)
        for key, value in totals.items():
            if self.flushed.get(key) != value:
                (self.metric.labels(*key) if key else self.metric).set(value)
                self.flushed[key] = value


class Observations:
    """A histogram's process-local bucket counts and sums per label tuple (found by bisection
    on the bounds); :meth:`flush` adds what came since the last flush to the metric's buckets."""

    def __init__(self, metric, buckets):
        self.metric, self.bounds = metric, tuple(float(b) for b in buckets)
        self.totals, self.flushed = {}, {}

    def bucket(self, value):
        """The index of ``value``'s bucket: the first bound >= value (``len(bounds)``: +Inf)."""
        return bisect.bisect_left(self.bounds, value)

    def observe(self, key, value, n=1):
        i = self.bucket(value)
        with tally_lock:
            self.observe_locked(key, value, n, i)

    def observe_locked(self, key, value, n, i):
        """:meth:`observe` with ``tally_lock`` held and the bucket (``i``) found."""
        entry = self.totals.get(key)
        if entry is None:
            entry = self.totals[key] = [0.0] + [0] * (len(self.bounds) + 1)
        entry[0] += value * n
        entry[i + 1] += n

    def flush(self):
        with tally_lock:
            totals = {key: list(entry) for key, entry in self.totals.items()}
        for key, entry in totals.items():
            before = self.flushed.get(key) or [0.0] * len(entry)
            if entry == before:
                continue
            child = self.metric.labels(*key) if key else self.metric
            # prometheus_client's Histogram.observe, for many observations at once: its
            # buckets are kept per bound (not cumulative), the +Inf one last.
            child._sum.inc(entry[0] - before[0])
            for bucket, now, then in zip(child._buckets, entry[1:], before[1:], strict=True):
                if now != then:
                    bucket.inc(now - then)
            self.flushed[key] = entry
