"""Presidio's e-mail recognizer never reaches for the network: importing the redaction package
keeps tldextract on its bundled suffix-list snapshot, with nothing set by the caller."""

from __future__ import annotations

import os
import subprocess
import sys


def test_importing_redaction_keeps_tldextract_offline():
    env = {k: v for k, v in os.environ.items() if k != "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"}
    code = (
        "import golden_distill.redaction.analyzer\n"
        "import tldextract.tldextract as t\n"
        "print(repr(t.TLD_EXTRACTOR.suffix_list_urls))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "()"
