"""Publishing (section `publish:`): where golden sets are stored, how files are cut, retention.

The store is any fsspec URL: a local directory by default, ``s3://bucket/prefix`` or ``gs://...``
at scale. Credentials are never part of this section: S3/GCS clients take them from their usual
environment (``AWS_ACCESS_KEY_ID``..., instance roles); ``storage_options`` only carries
non-secret client settings such as an endpoint URL.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from golden_distill.datasets.config_model import StrictModel
from golden_distill.datasets.store.layout import check_set_name


class RetentionConfig(StrictModel):
    """What `golden sets gc` keeps by default. A version an alias points to is always kept."""

    keep_last: int = Field(10, ge=1, description="Always keep the newest N versions of a set.")
    keep_days: float = Field(
        30.0, ge=0, description="Always keep versions created fewer than this many days ago."
    )
    orphan_grace_hours: float = Field(
        24.0,
        ge=0,
        description="Leftovers of a publisher that died (staging folders, version folders with "
        "no manifest) are removed only once older than this, so a running publish is never hit.",
    )


#: Below this share of mutants killed, a set is flagged (`golden sets strength`, the report).
DEFAULT_MIN_KILL_SHARE = 0.8


class StrengthConfig(StrictModel):
    """The strength measured on each published version (datasets/replay/strength.py): the
    share of boundary-level mutants its cases kill, shown in the run report and the manifest
    stats; a version killing less than ``min_kill_share`` is flagged there."""

    enabled: bool = Field(
        True,
        description="Measure each new version's strength (on its redacted cases) for the report.",
    )
    min_kill_share: float = Field(
        DEFAULT_MIN_KILL_SHARE,
        ge=0.0,
        le=1.0,
        description="Flag a set that kills less than this share of mutants (the report, and "
        "the default of `golden sets strength --min-kill-share`).",
    )
    max_cases: int = Field(
        500,
        ge=1,
        description="Measure at most this many cases of a larger version: a deterministic "
        "sample (the smallest sha256 of the case ids), so the figure is stable across runs and "
        "the nightly run's added time stays bounded; the report says when it sampled.",
    )


class PublishConfig(StrictModel):
    store_url: str = Field(
        "./golden-store",
        description="Where versions are written: a local directory or an fsspec URL "
        "(s3://bucket/prefix, gs://bucket/prefix).",
    )
    set_name: str = Field(
        "nightly",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
        description="The golden set's name: versions live under <store>/<set_name>/versions/.",
    )
    max_rows_per_file: int = Field(
        100_000,
        gt=0,
        description="Cases per Parquet file; a larger set is split into cases-NNNN.parquet.",
    )
    row_group_rows: int = Field(
        512,
        gt=0,
        description="Cases per Parquet row group. Small groups make fetching one case by id fast "
        "(cases are sorted by case_id and row groups carry min/max statistics).",
    )
    compression_level: int | None = Field(
        None, description="zstd level for the Parquet files (None: the library default)."
    )
    storage_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Non-secret fsspec options for the store, e.g. "
        "{client_kwargs: {endpoint_url: http://127.0.0.1:9000}} for an S3-compatible server.",
    )
    retention: RetentionConfig = Field(
        default_factory=RetentionConfig, description="Defaults for `golden sets gc`."
    )
    strength: StrengthConfig = Field(
        default_factory=StrengthConfig,
        description="The kill share measured on each new version, shown in its report.",
    )
    signing_key_secret_block: str | None = Field(
        None,
        description="Prefect Secret block holding the Ed25519 private key (PEM) that signs each "
        "manifest (manifest.sig). The GOLDEN_SIGNING_KEY environment variable (PEM text or a "
        "file path) wins over it. Unset and no variable: versions are published unsigned.",
    )

    @field_validator("set_name")
    @classmethod
    def _full_match(cls, value: str) -> str:
        return check_set_name(value)  # the store's rule: a full match, no '..', not reserved
