"""The adversarial corpus through the whole `golden run`: nothing planted escapes, most is kept.

Every file a run writes is searched for every probe's marker (and its digits-only form): the
store (Parquet decoded), the work folder, PREFECT_HOME (Prefect's database, results, logs) and
the cache folder (where a Prefect database template goes, flows/prefect_db.py) as text. The work
folder's raw-data files (candidates, quarantine, redaction inputs) are the only places raw values
may sit; they must be 0600 inside 0700 folders. Refusing everything is not a pass: most probe
cases must still be published.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from adversarial import adversarial_corpus

pytestmark = pytest.mark.slow


_corpus = adversarial_corpus()
PROBES, write_corpus = _corpus.PROBES, _corpus.write_corpus

#: Work-folder files that hold raw data by design (mode 0600, folders 0700).
RAW_FILES = (
    "candidates.parquet",
    "decisions.parquet",
    "signatures.parquet",
    "quota_rows.parquet",  # the selection's representatives before the quotas (raw tenant ids)
    "quarantine.jsonl",
    "errors.log",
)
#: Probes still published unredacted, each a documented limit (docs/privacy.md "Known limits").
#: None: bare names with no cue and no key are found by ``recognizers/bare_name.py``.
KNOWN_GAPS: set[str] = set()
#: Share of probe cases that must still be published (the rest quarantined, never leaked).
MIN_PUBLISHED = 0.6


def _text_of(path: Path) -> str:
    if path.suffix == ".parquet":
        try:
            return json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False)
        except Exception:
            pass
    return path.read_bytes().decode("utf-8", "replace")


def _searchable(root: Path, raw_ok: bool) -> list[Path]:
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if raw_ok and path.name in RAW_FILES:
            continue
        out.append(path)
    return out


@pytest.fixture(scope="module")
def adversarial_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    root = tmp_path_factory.mktemp("adversarial")
    by_record = write_corpus(root / "recordings" / "probes.jsonl")
    config = root / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "funnels": {"quotas": {"enabled": False}},
                "run": {"work_dir": str(root / "work"), "task_runner": "thread"},
            }
        )
    )
    home = root / "prefect-home"
    env = {
        "PREFECT_HOME": str(home),
        "XDG_CACHE_HOME": str(root / "cache"),  # where a Prefect database template may go
        "GOLDEN_PSEUDONYM_KEY": "adversarial-run-key-Zq8v2Lw7Xp4Tb9Nm1Rk6Hs3Jd5Fg0Ca",
    }
    old_umask = os.umask(0o022)  # a permissive umask: raw files must be 0600 regardless
    try:
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--config",
                str(config),
                "--source",
                str(root / "recordings"),
                "--store",
                str(root / "store"),
                "--set",
                "adv",
                "--format",
                "native",
            ],
            env=env,
        )
    finally:
        os.umask(old_umask)
    assert result.exit_code == 0, result.output
    return {"root": root, "by_record": by_record, "home": home, "output": result.output}


def _why_outputs(root: Path) -> dict[Path, str]:
    """`golden sets why` of every case the decisions table holds that is not published (each
    refused, cut or never selected probe case): what a reviewer reads about them."""
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    table = pq.read_table(next((root / "store").rglob("decisions.parquet"))).to_pylist()
    out = {}
    for row in table:
        if row["status"] == "published":
            continue
        result = CliRunner().invoke(
            app, ["sets", "why", row["case_id"], "--set", "adv", "--store", str(root / "store")]
        )
        assert result.exit_code == 0, result.output
        out[Path(f"<sets why {row['case_id']}>")] = result.output
    return out


def test_no_probe_leaks_anywhere(adversarial_run: dict) -> None:
    root: Path = adversarial_run["root"]
    files = _searchable(root / "store", False) + _searchable(root / "work", True)
    files += _searchable(adversarial_run["home"], False) + _searchable(root / "cache", False)
    assert files
    # the decisions table (why every probe case is in or out) is searched like the rest
    decisions = [p for p in files if p.name == "decisions.parquet"]
    assert decisions and any(
        r["status"].startswith("redaction:") for r in pq.read_table(decisions[0]).to_pylist()
    )
    leaks: dict[str, list[str]] = {}
    texts = {path: _text_of(path) for path in files}
    texts[Path("<cli output>")] = adversarial_run["output"]
    texts.update(_why_outputs(root))
    for probe in PROBES:
        for form in probe.forms():
            where = [
                str(p.relative_to(root)) if p.is_absolute() else str(p)
                for p, t in texts.items()
                if form in t
            ]
            if where:
                leaks.setdefault(probe.probe_id, []).extend(sorted(set(where)))
    unexpected = {k: v for k, v in leaks.items() if k not in KNOWN_GAPS}
    assert not unexpected, f"{len(unexpected)} probe(s) leaked: " + json.dumps(unexpected)[:6000]
    # a known gap is published unredacted in the cases only, never in logs, reports, manifests
    for probe_id, where in leaks.items():
        assert all("cases" in w or "redacted.parquet" in w for w in where), (probe_id, where)


def test_most_probe_cases_still_published(adversarial_run: dict) -> None:
    from golden_distill.datasets.reader import open_set

    root: Path = adversarial_run["root"]
    table = open_set(str(root / "store"), "adv").read_table()
    published = table.num_rows
    assert published >= MIN_PUBLISHED * len(PROBES), f"only {published}/{len(PROBES)} published"


def test_raw_files_are_private(adversarial_run: dict) -> None:
    root: Path = adversarial_run["root"]
    raw = [p for p in (root / "work").rglob("*") if p.is_file() and p.name in RAW_FILES]
    assert raw
    for path in raw:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        parent = path.parent
        while parent != root:
            assert stat.S_IMODE(parent.stat().st_mode) & 0o077 == 0, parent
            parent = parent.parent


def test_manifest_records_detectors_and_field_inventory(adversarial_run: dict) -> None:
    from golden_distill.datasets.reader import open_set

    root: Path = adversarial_run["root"]
    manifest = open_set(str(root / "store"), "adv").manifest
    detectors = manifest["detector_versions"]
    assert detectors["presidio_analyzer"] and "secrets" in detectors["recognizers"]
    assert detectors["secrets_ruleset"].startswith("detect-secrets ")
    assert detectors["unsafe_allow_weakened"] is False
    fields = manifest["redaction"]["fields"]
    # the probe reply under an unknown key was scanned, and its finding recorded by path
    assert any(
        "found:EMAIL_ADDRESS" in kinds for paths in fields.values() for kinds in paths.values()
    )
    report = next((root / "store").rglob("report.html")).read_text()
    assert "Redaction: field inventory" in report and "first seen in this run" in report


def test_golden_fields_prints_inventory_and_proposes_config(adversarial_run: dict) -> None:
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    root: Path = adversarial_run["root"]
    result = CliRunner().invoke(app, ["fields", "--store", str(root / "store"), "--set", "adv"])
    assert result.exit_code == 0, result.output
    assert "field inventory of" in result.output and "response.mail" in result.output
    assert "sensitive_keys:" in result.output
    leaked = [p.probe_id for p in PROBES for f in p.forms() if f in result.output]
    assert not leaked
