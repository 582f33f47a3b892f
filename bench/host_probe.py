"""A fixed piece of CPU work, timed: how fast this host is right now.

The same run on the same corpus took 1054 s of CPU at one moment and 650 s twenty minutes later
on a shared 2-core virtual machine: a neighbour's load or the host's clock, invisible from
inside apart from the time the same work takes. Benchmarks time these probes next to what they
measure, so a figure from another hour or machine can be read with the speed it was measured
at. They are short, so they are a rough gauge: two readings minutes apart differed by up to
1.6x on such a machine; they tell a machine twice as slow, not 10% from 20%.

Two probes, each single-threaded and about a second on a quiet host:

- ``probe_seconds``: a small loop of regex search over short text and JSON encoding. It lives in
  the core's caches, and it can miss a slowdown: it once read 1.0 s while the 1M run took
  2.2x the CPU it took at a reading of 0.76 s.
- ``presidio_seconds``: default Presidio (every predefined recognizer, no NLP model) analysing
  a fixed set of texts, the naive baseline of ``bench/redaction.py``: the pipeline's own kind
  of work (Presidio, regex, ``phonenumbers``, many small objects). On the slow machine above,
  that same baseline ran 2.0x slower than on a fast one, as the pipeline did.

    .venv/bin/python bench/host_probe.py   # prints both probes' CPU seconds
"""

from __future__ import annotations

import importlib
import json
import random
import re
import subprocess
import sys
import time

_PATTERN = re.compile(r"\d{3}[-. ]\d{4}")
_TEXT = "call 555-1234 or 555.9876 today " * 50


def _work(rounds: int) -> int:
    total = 0
    for i in range(rounds):
        total += len(_PATTERN.findall(_TEXT))
        total += len(json.dumps({"a": i, "b": [i, str(i)], "c": {"d": f"x{i}"}}))
    return total


def probe_seconds(rounds: int = 40_000) -> float:
    """CPU seconds of the fixed work (the best of three: a probe measures the host, not a
    scheduling hiccup)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        _work(rounds)
        best = min(best, time.process_time() - started)
    return best


def _texts() -> list[str]:
    """A fixed set of short texts like an agent's recordings: requests with names, e-mails,
    phone and card numbers, order ids and amounts (the same texts on every call)."""
    rng = random.Random(7)
    names = ["Marta Quenby", "John Smith", "Li Wei", "Ana Souza", "Omar Haddad"]
    texts = []
    for i in range(400):
        name = rng.choice(names)
        mail = f"{name.split()[0].lower()}{i}@example.com"
        order, dollars, cents = rng.randrange(10**6, 10**7), rng.randrange(900), rng.randrange(100)
        texts.append(
            f"Hi, this is {name}, order #W{order} for ${dollars}.{cents:02d}; reach me at {mail} "
            f"or +1 212 555 {rng.randrange(1000, 10000)}. Card 4111 1111 1111 {i % 10000:04d}."
        )
    return texts


def presidio_seconds() -> float:
    """CPU seconds of default Presidio analysing ``_texts()``, the best of three after one
    warm-up (imports and the recognizers' first use are not timed)."""
    importlib.import_module("golden_distill.redaction")  # before Presidio: tldextract offline
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NoOpNlpEngine

    engine = AnalyzerEngine(
        nlp_engine=NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "no_op"}])
    )
    texts = _texts()
    engine.analyze(text=texts[0], language="en")
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for text in texts:
            engine.analyze(text=text, language="en")
        best = min(best, time.process_time() - started)
    return best


def presidio_seconds_in_child() -> float:
    """``presidio_seconds`` in a child process, so a benchmark's own process stays lean."""
    done = subprocess.run(
        [sys.executable, __file__, "--presidio"], capture_output=True, text=True, check=True
    )
    return float(done.stdout.split()[-1])


if __name__ == "__main__":
    if sys.argv[1:] == ["--presidio"]:
        print(f"{presidio_seconds():.3f}")
    else:
        print(
            f"host probe: loop {probe_seconds():.2f} s, Presidio {presidio_seconds():.2f} s of CPU"
        )
        print("(lower is faster)")
