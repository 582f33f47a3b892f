"""What detected personal data in a version: recorded in its manifest (``detector_versions``).

A golden set is only as safe as the detectors that scrubbed it; when a recognizer or the
secrets ruleset changes, older versions can be told apart (and re-made) by these fields.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.recognizers.secrets import plugin_names, ruleset_version


def detector_versions(config: RedactionConfig) -> dict[str, Any]:
    """Presidio's version, the recognizers that ran, the secrets ruleset and whether the
    configuration was allowed below the redaction floor."""
    return {
        "presidio_analyzer": version("presidio-analyzer"),
        "presidio_anonymizer": version("presidio-anonymizer"),
        "recognizers": config.active_recognizers,
        "ner_model": config.ner_model,
        "secrets_ruleset": ruleset_version(),
        "secrets_plugins": plugin_names(),
        "unsafe_allow_weakened": config.unsafe_allow_weakened,
    }
