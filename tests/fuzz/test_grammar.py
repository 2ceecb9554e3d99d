"""The fuzzer itself: its draws must not share state between cases."""

import copy

from tests.fuzz.grammar import TYPES, Fuzzer


def test_mutations_never_change_the_shared_leaves():
    """A leaf from TYPES was the shared object itself: a later mutation inside it changed
    TYPES for every later case, up to a value that holds itself (seeds 115 and 132)."""
    before = copy.deepcopy(TYPES)
    fuzzer = Fuzzer(132)
    message = {"a": {"b": [1, 2, {"c": "d"}]}}
    for _ in range(3000):
        message = fuzzer.mutate(message)
        if not isinstance(message, dict):
            message = {"a": message}
    assert TYPES == before
