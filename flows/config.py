"""The whole pipeline's configuration: one YAML file, one section per phase.

Each section's model lives beside the code that uses it (dlt-style); this module only composes
them, so `golden config validate` and `golden config schema` see one strict model. Secrets (the
pseudonym key, database passwords) are never here: they are resolved from the environment or a
Prefect Secret block at run time (see redaction/keys.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import Field

from golden_distill.datasets.config_model import StrictModel, load_yaml
from golden_distill.datasets.incremental_config import SelectionConfig
from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.shipped_configs import shipped_config
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.curation_config import CurationConfig
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.flows.run_config import FlowConfig
from golden_distill.redaction.config import RedactionConfig

#: The shipped default, used by `make demo` and when no --config is given.
DEFAULT_CONFIG_PATH = shipped_config("nightly.yaml")


class PipelineConfig(StrictModel):
    ingest: IngestConfig = Field(default_factory=IngestConfig, description="Reading recordings.")
    funnels: FunnelsConfig = Field(default_factory=FunnelsConfig, description="Selection funnels.")
    redaction: RedactionConfig = Field(
        default_factory=RedactionConfig, description="PII scrubbing and pseudonyms."
    )
    dedup: DedupConfig = Field(default_factory=DedupConfig, description="Deduplication.")
    publish: PublishConfig = Field(default_factory=PublishConfig, description="Publishing.")
    run: FlowConfig = Field(
        default_factory=FlowConfig, description="How the flow runs (runner, work folders)."
    )
    selection: SelectionConfig = Field(
        default_factory=SelectionConfig,
        description="Growing the set across runs (carried cases, retention).",
    )
    curation: CurationConfig = Field(
        default_factory=CurationConfig, description="Splits, trust tiers and the review loop."
    )


def load_pipeline_config(path: Path | str | None = None) -> PipelineConfig:
    """Load and validate a pipeline config (the shipped default when ``path`` is None)."""
    return load_yaml(PipelineConfig, path or DEFAULT_CONFIG_PATH)


def config_sha256(config: PipelineConfig) -> str:
    """A hash of the *effective* config (defaults included), for manifests and cache keys."""
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()
