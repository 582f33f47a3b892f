"""Pseudonyms never collide across a run: two shards, a three-digit key space, `golden run`.

Each shard's redaction only sees its own cases, so a tenant pseudonym made in shard A could be
the real id of a tenant that only shard B holds. The key pass before redaction (keyed digests,
no raw keys outside the tasks) gives every redaction task the run's originals, so in one pass
published pseudonyms are never an original of the run, never shared by two originals, and the
same in both shards.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from adversarial import adversarial_corpus

from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_rules import RuleMatcher
from golden_distill.redaction.pseudonym import key_pseudonym

pytestmark = pytest.mark.slow

KEY = "collision-run-key-Qm4Wz8Xr2Tn6Vb1Ky9Ls3Hd7Jf5Gp0Ce"
PER_SHARD = 70
SHARED = 10  # tenants present in both shards


def _tenant_prefix() -> str:
    return RuleMatcher(RedactionConfig()).key_rules["tenant"].prefix or ""


def test_pseudonyms_never_collide_across_shards(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    base_record = adversarial_corpus().base_record
    rng = random.Random(11)
    numbers = rng.sample(range(1000), 2 * PER_SHARD - SHARED)
    shard_a = numbers[:PER_SHARD]
    shard_b = numbers[PER_SHARD - SHARED :]
    tenant_of: dict[str, str] = {}
    n = 0
    for name, tenants in (("a", shard_a), ("b", shard_b)):
        lines = []
        for t in tenants:
            rec = base_record(n, f"coll-{n}")
            tenant = f"tenant-{t:03d}"
            rec["recordId"] = f"coll-{name}-{n:03d}"
            rec["tenantId"] = tenant
            rec["promptVariables"] = {"tenant": tenant}
            tenant_of[rec["recordId"]] = tenant
            lines.append(json.dumps(rec))
            n += 1
        folder = tmp_path / "recordings"
        folder.mkdir(exist_ok=True)
        (folder / f"shard-{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    originals = set(tenant_of.values())

    # the premise: per-shard guards alone would publish another shard's real tenant id
    secret = KEY.encode()
    prefix = _tenant_prefix()
    only_b = {f"tenant-{t:03d}" for t in shard_b} - {f"tenant-{t:03d}" for t in shard_a}
    bases_a = {key_pseudonym(f"tenant-{t:03d}", "tenant", secret, prefix) for t in shard_a}
    assert bases_a & only_b

    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "funnels": {"quotas": {"enabled": False}},
                "run": {"work_dir": str(tmp_path / "work"), "task_runner": "thread"},
            }
        )
    )
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--config",
            str(config),
            "--source",
            str(tmp_path / "recordings"),
            "--store",
            str(tmp_path / "store"),
            "--set",
            "coll",
            "--format",
            "native",
        ],
        env={"PREFECT_HOME": str(tmp_path / "prefect-home"), "GOLDEN_PSEUDONYM_KEY": KEY},
    )
    assert result.exit_code == 0, result.output

    rows = []
    for path in sorted((tmp_path / "store").rglob("cases*.parquet")):
        rows.extend(pq.read_table(path).to_pylist())
    assert len(rows) >= 0.9 * len(tenant_of)
    published: dict[str, str] = {}
    for row in rows:
        original = tenant_of[row["source"]["source_record_id"]]
        pseudonym = row["tenant_id"]
        # the same original has one pseudonym in every shard
        assert published.setdefault(original, pseudonym) == pseudonym
        assert original not in json.dumps(row, default=str)
    assert len(published) >= 0.9 * len(originals)
    assert len(set(published.values())) == len(published)  # never shared
    assert not set(published.values()) & originals  # never another original of the run
    # in one pass: one key pass and one redaction per shard, nothing redone
    work = tmp_path / "work" / "sets" / "coll"  # each set has its own work folder
    assert len(list(work.rglob("redacted-*"))) == 2
    assert len(list(work.glob("run-keys/*.npz"))) == 1
