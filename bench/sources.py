"""Benchmark: cases per second of the chat, evidence and OTel adapters vs the native reader.

Generates a synthetic corpus (``generate_corpus``), ingests it with the native reader (the
baseline, timed), then re-expresses the same canonical cases in every other input format and
ingests each one the same way (``ingest()`` end to end: read, convert, write canonical shards):

* chat: JSONL transcripts (``{"messages": [...]}``) with tool calls and replies;
* evidence: Parquet folder, CSV folder, SQLite database, and PostgreSQL when a server URL is
  given (``--postgres URL`` or ``GOLDEN_TEST_POSTGRES_URL``; a private schema is used and dropped);
* otel: OTLP JSONL exports, rotated every 10k traces like a collector's file exporter.

    .venv/bin/python bench/sources.py                 # 100k cases (the recorded figure)
    .venv/bin/python bench/sources.py --cases 5000    # quick check
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.sources.evidence_writer import EvidenceWriter
from golden_distill.datasets.sources.otel_writer import export_request
from golden_distill.synthetic import generate_corpus

OTLP_TRACES_PER_FILE = 10_000
OTLP_TRACES_PER_LINE = 100


def iter_cases(shards: list[Path], limit: int) -> Iterator[dict[str, Any]]:
    seen = 0
    for shard in shards:
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=2000):
            for row in batch.to_pylist():
                if seen >= limit:
                    return
                seen += 1
                yield row


def case_to_chat(case: dict[str, Any]) -> dict[str, Any]:
    """A canonical case as an OpenAI-style transcript with tool calls and replies."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": case.get("user_input") or ""}]
    for step in case["steps"]:
        if step["kind"] == "model":
            continue
        call_id = f"call_{step['seq']}"
        function = {"name": step["name"], "arguments": step.get("arguments") or "{}"}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        reply: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "name": step["name"]}
        reply["content"] = step.get("response") or ""
        if step["status"] != "ok":
            reply["error"] = step.get("error") or step["status"]
        messages.append(reply)
    if (case.get("outcome") or {}).get("answer_text"):
        messages.append({"role": "assistant", "content": case["outcome"]["answer_text"]})
    meta = {
        "id": case.get("trace_id"),
        "session_id": case.get("session_id"),
        "tenant_id": case.get("tenant_id"),
        "user_id": case.get("user_id"),
        "model": (case.get("agent") or {}).get("model_name"),
        "reward": (case.get("outcome") or {}).get("reward"),
    }
    return {**{k: v for k, v in meta.items() if v is not None}, "messages": messages}


def pg_schema_url(base: str) -> tuple[str, str]:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}", schema


def drop_pg_schema(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def export_all(
    shards: list[Path], limit: int, work: Path, pg_url: str | None
) -> dict[str, tuple[str, str, float]]:
    """Write every derived input in one pass; {label: (source, format, seconds to write)}."""
    targets = {
        "evidence parquet": (str(work / "ev-parquet"), "parquet"),
        "evidence csv": (str(work / "ev-csv"), "csv"),
        "evidence sqlite": (f"sqlite:///{work / 'ev.db'}", "parquet"),
    }
    if pg_url:
        targets["evidence postgresql"] = (pg_url, "parquet")
    writers = {label: EvidenceWriter(t, file_format=f) for label, (t, f) in targets.items()}
    otel_dir = work / "otlp"
    otel_dir.mkdir()
    chat_path = work / "chat.jsonl"
    otel_batch: list[dict[str, Any]] = []
    otel_fh = None
    started = time.perf_counter()
    with chat_path.open("wb") as chat_fh:
        for n, case in enumerate(iter_cases(shards, limit)):
            for writer in writers.values():
                writer.write(case)
            chat_fh.write(orjson.dumps(case_to_chat(case)) + b"\n")
            if n % OTLP_TRACES_PER_FILE == 0:
                if otel_fh is not None:
                    otel_fh.close()
                otel_fh = (otel_dir / f"traces-{n // OTLP_TRACES_PER_FILE:04d}.jsonl").open("wb")
            otel_batch.append(case)
            if len(otel_batch) >= OTLP_TRACES_PER_LINE or n % OTLP_TRACES_PER_FILE == (
                OTLP_TRACES_PER_FILE - 1
            ):
                assert otel_fh is not None
                otel_fh.write(orjson.dumps(export_request(otel_batch)) + b"\n")
                otel_batch = []
        if otel_batch and otel_fh is not None:
            otel_fh.write(orjson.dumps(export_request(otel_batch)) + b"\n")
        if otel_fh is not None:
            otel_fh.close()
    for writer in writers.values():
        writer.close()
    seconds = time.perf_counter() - started
    inputs = {label: (target, "evidence", seconds) for label, (target, _) in targets.items()}
    inputs["chat jsonl"] = (str(chat_path), "chat", seconds)
    inputs["otel otlp-jsonl"] = (str(otel_dir), "otel", seconds)
    return inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--postgres", default=os.environ.get("GOLDEN_TEST_POSTGRES_URL"))
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: temp)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-sources-"))
    work.mkdir(parents=True, exist_ok=True)
    pg_url, schema = (None, None)
    if args.postgres:
        pg_url, schema = pg_schema_url(args.postgres)
    try:
        # ~1.5 runs per session in the generator: generate enough sessions for --cases runs.
        sessions = max(10, int(args.cases / 1.45) + 10)
        started = time.perf_counter()
        generate_corpus(work / "native", sessions=sessions, seed=args.seed, shards=2)
        print(f"generated {sessions} sessions in {time.perf_counter() - started:.1f}s")
        native = ingest([str(work / "native")], work / "out-native", fmt="native")
        cases = min(args.cases, native.cases_written)
        native_rate = native.cases_written / native.seconds
        print(f"native: {native.cases_written} cases in {native.seconds:.2f}s")
        inputs = export_all(native.shards, cases, work, pg_url)
        print(f"derived inputs for {cases} cases written in {inputs['chat jsonl'][2]:.1f}s")
        print()
        print(
            f"{'adapter / input':<22} {'cases':>8} {'seconds':>8} {'cases/s':>9} {'vs native':>9}"
        )
        print(f"{'native jsonl':<22} {native.cases_written:>8} {native.seconds:>8.2f} "
              f"{native_rate:>9.0f} {1.0:>8.2f}x")  # fmt: skip
        for label, (source, fmt, _) in inputs.items():
            out = work / f"out-{label.replace(' ', '-')}"
            summary = ingest([source], out, fmt=fmt)
            if summary.cases_written != cases or summary.failed:
                raise SystemExit(
                    f"{label}: {summary.cases_written} cases (expected {cases}), "
                    f"failed={[s.error for s in summary.failed]}, {summary.quarantined}"
                )
            rate = summary.cases_written / summary.seconds
            print(f"{label:<22} {summary.cases_written:>8} {summary.seconds:>8.2f} "
                  f"{rate:>9.0f} {rate / native_rate:>8.2f}x")  # fmt: skip
            shutil.rmtree(out, ignore_errors=True)
    finally:
        if pg_url and schema and args.postgres:
            drop_pg_schema(args.postgres, schema)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
