"""The fuzz tier: seeded hostile frames to every socket and REST endpoint (docs/testing.md).

``A2UI_FUZZ_SEED`` replays a run (the seed is printed in the header and with every failure);
``A2UI_FUZZ_CASES`` scales the number of generated cases per test (default 1.0).
"""

import logging
import traceback
import zlib
from pathlib import Path

import pytest

from tests.fuzz.seed import SEED

HERE = Path(__file__).parent

#: Loggers whose ERROR records (or any record with a traceback) fail a case.
WATCHED_LOGGERS = ("", "a2ui", "django", "channels", "daphne", "asyncio")


def pytest_report_header(config):
    return f"a2ui fuzz seed: {SEED} (replay with A2UI_FUZZ_SEED={SEED})"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.fuzz)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    if rep.failed and item.get_closest_marker("fuzz"):
        rep.sections.append(("a2ui fuzz seed",
                             f"A2UI_FUZZ_SEED={SEED} .venv/bin/python -m pytest '{item.nodeid}'"))
    return rep


@pytest.fixture
def fuzzer(request):
    """A Fuzzer seeded from the run's seed and the test's name (tests stay independent)."""
    from tests.fuzz.grammar import Fuzzer

    return Fuzzer(zlib.crc32(f"{SEED}:{request.node.name}".encode()))


class ErrorLog(logging.Handler):
    """Collects ERROR records and records carrying a traceback from the watched loggers."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records = []
        self._seen = set()

    def emit(self, record):
        if record.levelno >= logging.ERROR or record.exc_info:
            if id(record) not in self._seen:
                self._seen.add(id(record))
                self.records.append(record)

    def since(self, mark):
        return [f"{r.name} {r.levelname}: {r.getMessage()[:200]}" + _where(r)
                for r in self.records[mark:]]


def _where(record):
    """The exception and the innermost frame of the app that raised it."""
    if not record.exc_info or record.exc_info[1] is None:
        return ""
    exc = record.exc_info[1]
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/a2ui/" in f.filename] or frames
    at = f" at {ours[-1].filename.rsplit('/a2ui/', 1)[-1]}:{ours[-1].lineno}" if ours else ""
    return f" ({type(exc).__name__}: {str(exc)[:150]}{at})"


@pytest.fixture
def error_log():
    handler = ErrorLog()
    loggers = [logging.getLogger(name) for name in WATCHED_LOGGERS]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


@pytest.fixture
def fuzz_settings(settings):
    """Hundreds of frames per session and many sessions: limits are tested elsewhere."""
    settings.A2UI = {"RATE_LIMIT_PER_MINUTE": 10**6, "MAX_CONCURRENT_SESSIONS_PER_AGENT": 10**4}
    return settings
