"""The layering of docs/architecture.md ("Layers"), as import contracts (import-linter,
``[tool.importlinter]`` in pyproject.toml): protocol packages never import each other, the core
never imports a protocol, a transport or a wire, and the sans-I/O modules never import Django,
Channels or a network library. ``make lint`` runs the same check."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def run(*args, cwd=ROOT):
    return subprocess.run([str(LINT), "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_the_contracts_hold():
    result = run()
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 broken" in result.stdout


def test_a_protocol_importing_another_breaks_them(tmp_path):
    """The check can fail: a copy of the package where the MCP adapter imports AG-UI's."""
    shutil.copytree(ROOT / "a2ui", tmp_path / "a2ui",
                    ignore=shutil.ignore_patterns("static", "templates", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    adapter = tmp_path / "a2ui" / "mcp" / "adapter.py"
    adapter.write_text(adapter.read_text() + "\nfrom a2ui.agui import mapping  # noqa\n")
    core = tmp_path / "a2ui" / "core" / "state.py"
    core.write_text(core.read_text() + "\nimport django  # noqa\n")
    result = run(cwd=tmp_path)
    assert result.returncode != 0
    assert "a2ui.mcp is not allowed to import a2ui.agui" in result.stdout
    assert "a2ui.core is not allowed to import django" in result.stdout
