"""The typed public surface as a team's type checker sees it (docs/agents.md, "Types").

``consumer.py`` uses the SDK, the Python agent API (async and sync), the template tag and the
settings with the types they must have (``assert_type``); ``misuse.py`` misuses them, one
mistake a line marked ``# error: <code>``. mypy (the project's ``[tool.mypy]``, django-stubs)
must pass the first and report exactly the marked lines of the second: a type lost to ``Any``
fails ``consumer.py``, and a check that reports nothing fails here."""

import os
import pathlib
import re
import subprocess
import sys
import tomllib
import types
import typing
from collections.abc import Mapping

import pytest
from django.utils.functional import Promise

from a2ui import conf
from a2ui.core import settingtypes

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent


def _mypy(*files):
    """mypy in a process of its own (its Django plugin sets Django up)."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--no-pretty",
         "--show-error-codes", *files],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.timeout(660)
def test_a_teams_checker_sees_the_types_and_reports_their_misuse():
    expected = set()
    for number, line in enumerate((HERE / "misuse.py").read_text().splitlines(), 1):
        found = re.search(r"# error: ([a-z-]+)$", line)
        if found:
            expected.add((number, found.group(1)))
    assert len(expected) >= 10

    code, out = _mypy("tests/typed/consumer.py", "tests/typed/misuse.py")

    reported = set()
    for found in re.finditer(r"^tests/typed/(\w+)\.py:(\d+): error: .*\[([a-z-]+)\]$", out, re.M):
        assert found.group(1) == "misuse", out  # consumer.py type-checks clean
        reported.add((int(found.group(2)), found.group(3)))
    assert code == 1, out
    assert reported == expected, out


def _fits(value, hint):
    """Whether a default ``value`` has the declared type ``hint`` (the shapes settingtypes
    uses)."""
    if hint is typing.Any:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if hint is type(None):
        return value is None
    if hint in (int, float):
        return isinstance(value, int if hint is int else (int, float)) and not isinstance(
            value, bool)
    if hint is str:
        return isinstance(value, str | Promise)  # a lazy translation reads as a str
    if origin is not None:
        if not isinstance(value, origin) or isinstance(value, str):
            return False
        if issubclass(origin, Mapping):
            return all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
        return all(_fits(item, args[0]) for item in value)
    return isinstance(value, hint)


def test_every_setting_is_declared_with_the_type_of_its_default():
    declared = typing.get_type_hints(settingtypes.Settings)
    defaults = conf.defaults()
    assert set(defaults) - set(declared) == set(), "settings without a type in a2ui.core.settingtypes"
    assert set(declared) - set(defaults) == set(), "types of settings that are none"
    wrong = {name: (value, declared[name]) for name, value in defaults.items()
             if not _fits(value, declared[name])}
    assert wrong == {}


def test_the_types_ship_with_the_package():
    assert (ROOT / "a2ui" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["a2ui"]
