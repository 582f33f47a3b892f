"""No code comment, docstring or doc cites a work session ("benchmarks.md, session N").

A reason in the code says itself (the measured fact, the mechanism), so it stays true and
checkable when the history it came from is gone; docs hold current facts, and the history lives
in git. This scans every text file of the code folders, the tools, the tests and the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("flows", "filters", "redaction", "datasets", "synthetic", "configs", "bench", "tests",
           "docs", ".ci")  # fmt: skip
SUFFIXES = {".py", ".md", ".sh", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".txt", ".html"}
TOP_FILES = ("README.md", "Makefile", "pyproject.toml", "setup.py", "prefect.yaml")
#: "session" and a number: a work session, not an agent's recorded session (those are
#: "sessions" after a count, "--sessions 1000000", or ids such as "s-4").
CITATION = re.compile(r"\b[Ss]ession \d")


def _text_files() -> list[Path]:
    files = [REPO / name for name in TOP_FILES if (REPO / name).is_file()]
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return files


def test_nothing_cites_a_session():
    files = _text_files()
    assert len(files) > 300  # the scan reaches the code, not an empty folder
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if CITATION.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "state the reason instead of citing a session:\n" + "\n".join(found)


def test_the_pattern_finds_a_citation_and_spares_agent_sessions():
    n = 19  # written apart, so this file does not cite one itself
    assert CITATION.search(f"# 1.3% of redaction CPU (docs/benchmarks.md, session {n})")
    assert CITATION.search(f"## Session {n}: the key pass")
    assert not CITATION.search("bench/end_to_end.py --sessions 1000000")
    assert not CITATION.search("a session holds several turns")
