"""The run's seed and scale, read once (conftest and the tests import it from here)."""

import os
import random

_SEED = os.environ.get("A2UI_FUZZ_SEED", "").strip()
#: ``A2UI_FUZZ_SEED`` replays a run; otherwise each run draws a new one (printed on failure).
SEED = int(_SEED) if _SEED else random.SystemRandom().randrange(2**32)
#: ``A2UI_FUZZ_CASES`` multiplies the number of generated cases per test (default 1).
SCALE = float(os.environ.get("A2UI_FUZZ_CASES", "1") or 1)


def cases(n):
    return max(1, int(n * SCALE))
