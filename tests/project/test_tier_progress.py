"""The per-tier progress lines of the test run (tests/tierprogress.py)."""

from tests.tierprogress import Progress, tier_of

IDS = ["tests/core/test_a.py::t1", "tests/core/test_a.py::t2", "tests/live/test_b.py::t",
       "tests/browser/test_c.py::t", "tests/mcp/test_d.py::t"]


def test_a_test_tier_is_its_directory():
    assert [tier_of(i) for i in IDS] == ["in-process", "in-process", "live", "browser",
                                         "in-process"]


def make(every=60.0):
    lines, clock = [], [0.0]
    progress = Progress(lines.append, now=lambda: clock[0], every=every)
    return progress, lines, clock


def test_a_line_when_a_tier_finishes_and_every_interval():
    progress, lines, clock = make()
    progress.collected_ids(IDS)
    progress.collected_ids(IDS)  # a second xdist worker's collection counts once
    progress.finished(IDS[0])
    assert lines == []
    progress.finished(IDS[2])  # live: 1/1, finished
    assert lines == ["tiers after 0m00s: in-process 1/3 · live 1/1 · browser 0/1"]
    clock[0] = 61
    progress.finished(IDS[1])
    assert lines[-1] == "tiers after 1m01s: in-process 2/3 · live 1/1 · browser 0/1"
    clock[0] = 70
    progress.finished(IDS[3])  # browser finished
    progress.finished(IDS[4])  # in-process finished
    assert lines[-2:] == ["tiers after 1m10s: in-process 2/3 · live 1/1 · browser 1/1",
                          "tiers after 1m10s: in-process 3/3 · live 1/1 · browser 1/1"]


def test_a_tier_with_no_tests_is_not_shown():
    progress, lines, clock = make()
    progress.collected_ids(IDS[:2])
    progress.finished(IDS[0])
    progress.finished(IDS[1])
    assert lines == ["tiers after 0m00s: in-process 2/2"]


def test_a_test_running_too_long_is_named_also_when_nothing_finishes():
    lines, clock = [], [0.0]
    progress = Progress(lines.append, now=lambda: clock[0], every=60.0, slow=300.0)
    progress.collected_ids(IDS)
    progress.began(IDS[0])
    progress.began(IDS[2])
    clock[0] = 30
    progress.tick()
    assert lines == []  # less than an interval since the start
    clock[0] = 61
    progress.tick()
    assert lines == ["tiers after 1m01s: in-process 0/3 · live 0/1 · browser 0/1"]
    progress.finished(IDS[2])
    progress.began(IDS[1])
    clock[0] = 360
    progress.tick()
    assert lines[-2:] == ["tiers after 6m00s: in-process 0/3 · live 1/1 · browser 0/1",
                          "  still running 6m00s: tests/core/test_a.py::t1"]
    clock[0] = 380
    progress.tick()  # within the interval of the last line: nothing
    assert len(lines) == 4
