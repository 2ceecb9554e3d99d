"""The repository's text files hold no leftover merge-conflict markers (a conflict resolved by
committing both sides with the markers left in ships a broken document)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^(<{7}|>{7})( |$)", re.MULTILINE)


def test_no_merge_conflict_markers():
    files = subprocess.run(["git", "ls-files", "*.md", "*.py", "*.html", "*.js", "*.css",
                            "*.toml", "*.txt"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    found = [f for f in files if (ROOT / f).is_file()
             and MARKER.search((ROOT / f).read_text(errors="replace"))]
    assert found == []
