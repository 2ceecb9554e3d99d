"""An ``asyncio.Queue`` that costs about 1 KB less while it is empty.

Every idle socket holds two queues (Daphne's input queue of its application and the channel
layer's queue of its channel), and ``asyncio.Queue`` allocates four ``collections.deque`` (its
items, its getters, its putters, and its ``join`` event's waiters), 760 bytes each even when
empty. The waiters are at most a getter or two: a list with a ``popleft`` (``Line``, 56 bytes
empty) does that work. The items stay in a ``deque``: a burst of thousands of pushes queued
for a slow socket is drained in linear time. Same behaviour as ``asyncio.Queue`` otherwise
(bench/bench_capacity.py, docs/performance.md "Capacity").
"""

import asyncio


class Line(list):
    """A list that answers the deque calls asyncio makes on a queue's or event's waiters."""

    __slots__ = ()

    def popleft(self):
        return self.pop(0)


class LeanQueue(asyncio.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self._getters = Line()
        self._putters = Line()
        self._finished._waiters = Line()
