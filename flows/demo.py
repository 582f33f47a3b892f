"""`make demo`: a sample corpus (first time only), one full run, and where to look.

    python -m golden_distill.flows.demo --dir .demo

Everything lands under ``--dir``: the generated recordings, a demo pseudonym key (only when
``GOLDEN_PSEUDONYM_KEY`` is not set; created with mode 0600), the work folder and the golden
store. Running it again reuses the corpus and the cached shard results.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from golden_distill.flows.cli.run import execute
from golden_distill.flows.config import DEFAULT_CONFIG_PATH
from golden_distill.flows.errors import describe, find_stage_error
from golden_distill.flows.params import DistillParams
from golden_distill.redaction.keys import ENV_VAR, read_or_create_key_file
from golden_distill.synthetic import generate_corpus

DEMO_SESSIONS = 3_000
DEMO_SHARDS = 4
DEMO_SEED = 20261130


def ensure_corpus(corpus: Path, sessions: int = DEMO_SESSIONS, shards: int = DEMO_SHARDS) -> bool:
    """Generate the sample corpus unless one is there; True when generated now."""
    if corpus.is_dir() and any(p.name.startswith("recordings-") for p in corpus.iterdir()):
        return False

    generate_corpus(corpus, sessions=sessions, seed=DEMO_SEED, shards=shards)
    return True


def ensure_key(key_file: Path) -> str:
    """Use GOLDEN_PSEUDONYM_KEY when set; else a local demo key file (mode 0600). Says which."""

    if os.environ.get(ENV_VAR):
        return f"pseudonym key: from {ENV_VAR}"
    material, created = read_or_create_key_file(key_file)
    os.environ[ENV_VAR] = material.decode()  # this process (and its workers) only
    verb = "created" if created else "using"
    return (
        f"pseudonym key: {ENV_VAR} is not set, {verb} demo key file {key_file} (mode 0600). "
        f"For real runs set {ENV_VAR} or a Prefect Secret block (docs/operating.md)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=".demo", help="Folder for everything the demo writes.")
    parser.add_argument("--sessions", type=int, default=DEMO_SESSIONS)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG_PATH))
    args = parser.parse_args(argv)

    base = Path(args.dir).resolve()
    corpus = base / "recordings"
    print(f"sample corpus: {corpus}")
    if ensure_corpus(corpus, sessions=args.sessions):
        print(f"  generated {args.sessions:,} sessions")
    else:
        print("  (reused)")
    print(ensure_key(base / "pseudonym.key"))

    params = DistillParams(
        config_path=args.config,
        sources=[str(corpus)],
        source_format="native",  # the generator writes native JSONL (tiny shards cannot be sniffed)
        store_url=str(base / "golden-store"),
        work_dir=str(base / "work"),
    )
    outcome = execute(params)
    if isinstance(outcome, BaseException):
        stage = find_stage_error(outcome)
        where = stage.stage if stage else "flow"
        print(
            f"demo run failed in stage '{where}': {stage.detail if stage else describe(outcome)}",
            file=sys.stderr,
        )
        return 1
    version, report, reused, why, counts = outcome
    if reused:
        print(f"nothing new to publish: the latest version {version} stands ({why})")
    if counts.get("cases") is not None:  # what was published, not what was selected
        print(f"{'cases in it' if reused else 'published'}: {counts['cases']:,} cases")
    print(f"published version: {version}")
    print(f"store: {base / 'golden-store'}")
    print(f"report: {report}")
    print("open the report in a browser; read the set with golden_distill.datasets.reader")
    return 0


if __name__ == "__main__":
    sys.exit(main())
