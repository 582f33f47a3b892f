"""The flow's own process stays light: it wires tasks, and the heavy detectors (Presidio, spaCy,
phonenumbers) and scikit-learn load only in the worker processes that run them.

Every module the flow loads stays in its memory for the whole run, next to the workers (the
process tree's peak at 2M sessions is measured against a 2 GB budget): importing the flow must
not pull in the redaction or dedup engines through a module it imports for a job's type."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("spacy", "thinc", "presidio_analyzer", "presidio_anonymizer", "phonenumbers", "sklearn")


def test_importing_the_flow_and_its_cli_loads_no_detector_or_dedup_engine():
    code = (
        "import json, sys\n"
        "import golden_distill.flows.distill, golden_distill.flows.cli.run\n"
        "import golden_distill.flows.redact_stage, golden_distill.flows.tasks.keys\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_key_pass_still_loads_its_scanner_where_it_runs():
    code = (
        "import json, sys\n"
        "from golden_distill.flows.tasks import keys\n"
        "from golden_distill.redaction.key_scan import KeyScanner\n"
        "print(json.dumps('presidio_anonymizer' in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) is True
