"""Every file path the docs name exists, and the "where to change what" table names real things.

A doc that sends a reader to a file that was renamed or deleted is worse than none. Paths are
the tokens that start with a folder or file of the repository (`flows/engine.py`,
`datasets/sources/`, `filters/runner.score_cases`: a module and a name it defines); a
placeholder (`filters/<funnel>.py`) or glob (`configs/tools/*.yaml`) must still match something.
Paths inside the user's stores and work folders (created by a run, not shipped) are the only
ones allowed to be absent: `ALLOWED_ABSENT`.

In docs/architecture.md's "Where to change what", every constant, class and function a row names
in backticks must be defined in a Python file that row names, so the table stays true when code
moves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
FOLDERS = ("flows", "filters", "redaction", "datasets", "synthetic", "configs", "bench", "tests",
           "docs", ".ci")  # fmt: skip
FILES = ("pyproject.toml", "Makefile", "setup.py", "requirements.lock", "prefect.yaml",
         "README.md")  # fmt: skip
#: Folders a run or a benchmark creates (gitignored): a doc may name files inside them.
ALLOWED_ABSENT = ("bench/out/",)

_TOP = "|".join(map(re.escape, FOLDERS))
_TOP_FILES = "|".join(map(re.escape, FILES))
_PATH = re.compile(rf"(?<![\w./<>~-])((?:{_TOP})/(?:[\w./*<>-]|\{{[\w.,]*\}})*|(?:{_TOP_FILES})\b)")
_PLACEHOLDER = re.compile(r"<[^>/]*>|\*")
_ALTERNATIVES = re.compile(r"\{([\w.,]*)\}")


def _defines(source: str, name: str) -> bool:
    return bool(
        re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(name)}\b", source, re.M)
        or re.search(rf"^\s*{re.escape(name)}\s*(?::[^\n=]*)?=", source, re.M)
    )


def _resolve(token: str) -> list[Path]:
    """The files a path token stands for (empty when it names nothing that exists)."""
    path = token.rstrip(".,:;)'\"")
    braces = _ALTERNATIVES.search(path)
    if braces:  # filters/dedup/{cluster,features}.py: every alternative must exist
        each = [_resolve(path.replace(braces.group(0), alt, 1)) for alt in braces[1].split(",")]
        return [f for files in each for f in files] if all(each) else []
    if _PLACEHOLDER.search(path):
        pattern = _PLACEHOLDER.sub("*", path)
        return sorted(REPO.glob(pattern.rstrip("/"))) if "*" in pattern else []
    if (REPO / path).exists():
        target = REPO / path
        return [target, *sorted(target.rglob("*.py"))] if target.is_dir() else [target]
    if (REPO / f"{path}.py").exists():  # a module named without .py: datasets/ingest
        return [REPO / f"{path}.py"]
    module, _, name = path.rpartition(".")  # module.name: filters/runner.score_cases
    if module and (REPO / f"{module}.py").exists():
        source = (REPO / f"{module}.py").read_text()
        return [REPO / f"{module}.py"] if _defines(source, name) else []
    return []


def _paths(doc: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        found += [(number, m.group(1)) for m in _PATH.finditer(line)]
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_path_a_doc_names_exists(doc):
    missing = [
        f"{doc.name}:{number}: {token}"
        for number, token in _paths(doc)
        if not token.startswith(ALLOWED_ABSENT) and not _resolve(token)
    ]
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_the_check_sees_paths_and_catches_a_wrong_one():
    assert len(_paths(REPO / "docs" / "architecture.md")) > 60
    assert _resolve("flows/engine.py") and _resolve("datasets/sources/")
    assert _resolve("filters/runner.score_cases") and _resolve("filters/<funnel>.py")
    assert _resolve("configs/tools/*.yaml") and _resolve("datasets/ingest")
    assert _resolve("tests/data/tau-bench") and _resolve("filters/dedup/{cluster,buckets}.py")
    assert not _resolve("filters/dedup/{cluster,nowhere}.py")
    assert not _resolve("datasets/store/replay.py")  # renamed: recorded_calls.py
    assert not _resolve("filters/runner.decide_selection")  # the module defines no such name
    assert not _resolve("flows/nowhere/<name>.py")


def _change_table() -> list[str]:
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]


#: A backticked name the table says is defined somewhere: a constant, a class, a function with an
#: underscore in its name, or Class.method. Config keys (`funnels.redacted...`), commands and
#: single lowercase words are prose, not checked.
_NAME = re.compile(r"^(?:[A-Z][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?|_?[a-z][a-z0-9]*_[a-z0-9_]+)$")


def test_the_change_table_names_only_what_its_files_define():
    rows = _change_table()
    assert len(rows) >= 20
    for topic in ("a funnel", "a PII recognizer", "a source (", "a source's fast path",
                  "a replay assertion", "a config field", "a report section"):  # fmt: skip
        assert any(row.startswith(f"| {topic}") for row in rows), topic
    undefined = []
    for row in rows[1:]:  # the first row is the header
        files = {f for _, token in _paths_in(row) for f in _resolve(token) if f.suffix == ".py"}
        for name in re.findall(r"`([^`]+)`", row):
            if "/" in name or not _NAME.match(name):
                continue
            parts = name.split(".")
            sources = [f.read_text() for f in files]
            if not all(any(_defines(src, part) for src in sources) for part in parts):
                undefined.append(f"{name!r} in: {row[:60]}...")
    assert not undefined, "named but not defined in the row's files:\n" + "\n".join(undefined)


def _paths_in(text: str) -> list[tuple[int, str]]:
    return [(0, m.group(1)) for m in _PATH.finditer(text)]


def test_every_benchmark_script_is_documented():
    text = (REPO / "docs" / "benchmarks.md").read_text()
    scripts = sorted(p.name for p in (REPO / "bench").glob("*.py") if not p.name.startswith("_"))
    assert len(scripts) > 10
    undocumented = [name for name in scripts if f"bench/{name}" not in text]
    assert not undocumented, f"say in docs/benchmarks.md how to run: {undocumented}"
