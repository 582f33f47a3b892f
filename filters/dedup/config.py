"""Deduplication (section `dedup:`): normalisation, blocking, clustering thresholds.

Every field documents itself (dlt-style); `golden config schema` shows these descriptions. The
defaults are tuned so that runs which follow the same tool path with the same write calls and a
similar request collapse into one representative, while a different write call or a different
tool path always keeps a run apart (see docs/dedup.md for the reasoning and the measurements).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from golden_distill.datasets.config_model import StrictModel


class FeatureWeights(StrictModel):
    """How much each view of a run counts in the near-duplicate (content) distance.

    Each view is an L2-normalised vector; the combined cosine distance is the weighted mean of
    the per-view cosine distances, so the weights are shares of the distance. The tool path is
    compared separately (``max_trajectory_distance``); its weight here is 0 by default so that
    ``distance_threshold`` reads as "how different may the requests be on the same path".
    """

    trajectory: float = Field(
        0.0, ge=0, description="Tool n-grams of the run (tool name, status, write/read)."
    )
    text: float = Field(0.8, ge=0, description="Word n-grams of the normalised user request.")
    argument_shapes: float = Field(
        0.2, ge=0, description="Argument key shapes per tool (keys and value types, no values)."
    )

    @model_validator(mode="after")
    def _some_weight(self) -> FeatureWeights:
        if self.trajectory + self.text + self.argument_shapes <= 0:
            raise ValueError("at least one feature weight must be > 0")
        return self


class DedupConfig(StrictModel):
    """Exact and near-duplicate removal over the selected, redacted cases."""

    enabled: bool = Field(True, description="Run deduplication at all (off: every case is kept).")
    block_on_read_tools: bool = Field(
        True,
        description=(
            "Blocks are runs with the same write calls (name and status, in order); when true the "
            "set of read tools must match as well. Near duplicates are only looked for inside a "
            "block, so runs with different write calls are never merged."
        ),
    )
    separate_by: list[Literal["write_actions", "systems", "outcome", "task"]] = Field(
        default_factory=lambda: ["write_actions", "systems"],
        description=(
            "What else makes runs different work, never merged however alike their text (on "
            "top of the write calls' names and statuses): write_actions = the argument shape of "
            "each write (keys and types); systems = the systems the steps touched. The task, "
            "the outcome (final state, status, reward, hand-off) and the tenant always "
            "separate runs, exact duplicates included ('outcome' and 'task' are accepted here "
            "and change nothing)."
        ),
    )
    task_id_pattern: str | None = Field(
        "^task=([^/]+)/",
        description=(
            "A regular expression whose first group is the task a run belongs to, searched in "
            "its trace_id, then its source record id (the default finds tau-bench's "
            "`task=12/trial=3`, the chat adapter's record id); runs of different tasks never "
            "share a cluster. Before it: intent.name; after it: the expected outcome, when "
            "recorded. null: no pattern."
        ),
    )
    borderline_band: float = Field(
        0.05,
        ge=0,
        le=1,
        description=(
            "Near-duplicate members whose distance to their representative is within this of "
            "distance_threshold (or past it, with average linkage) are listed as borderline in "
            "the report and in `golden preview`, so a threshold change is made knowingly."
        ),
    )

    @field_validator("task_id_pattern")
    @classmethod
    def _pattern_has_a_group(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                groups = re.compile(pattern).groups
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
            if groups < 1:
                raise ValueError("needs a group, e.g. '^task=(\\d+)/': its text is the task")
        return pattern

    near_duplicates: bool = Field(
        True, description="Look for near duplicates (off: exact duplicates only)."
    )
    distance_threshold: float = Field(
        0.35,
        ge=0,
        le=1,
        description=(
            "Content cosine distance (request text and argument shapes, weighted) up to which two "
            "runs of a block are near duplicates; with complete linkage every pair in a cluster "
            "is within it. 0.35 suits templated requests; free-form, LLM-worded conversations "
            "need about 0.55 with average linkage (docs/dedup.md)."
        ),
    )
    linkage: Literal["complete", "average", "single"] = Field(
        "complete",
        description=(
            "How links become clusters. complete: every pair in a cluster is within the "
            "threshold (no chaining); average: the mean pair is; single: connected components "
            "(cheapest, but chains of small rewordings can join unrelated runs)."
        ),
    )
    max_trajectory_distance: float = Field(
        0.0,
        ge=0,
        le=1,
        description=(
            "Additionally, the cosine distance of the tool n-grams alone must be at most this. "
            "0 means the tool path (names and statuses, in order) must be identical; raise it to "
            "merge runs whose paths differ by a step or two."
        ),
    )
    weights: FeatureWeights = Field(
        default_factory=FeatureWeights, description="Weight of each feature view."
    )
    tool_ngram_max: int = Field(
        3, ge=1, le=6, description="Longest tool n-gram used as a trajectory feature."
    )
    text_word_ngrams: tuple[int, int] = Field(
        (1, 2), description="Word n-gram range (min, max) over the normalised request."
    )
    text_char_ngrams: tuple[int, int] | None = Field(
        None,
        description=(
            "Character n-gram range within word boundaries, e.g. [3, 4] (catches typos and "
            "inflections, at about 4x the text-feature cost); null: word n-grams only. CJK text "
            "is split into characters either way."
        ),
    )
    hash_features: int = Field(
        2**18,
        ge=2**10,
        le=2**24,
        description="Width of the hashed feature space per view (HashingVectorizer n_features).",
    )
    large_block_size: int = Field(
        2000,
        ge=2,
        description=(
            "Blocks with more distinct runs than this are first split with MiniBatchKMeans "
            "(SemDeDup-style) so that pairwise distances are only computed inside partitions."
        ),
    )
    partition_size: int = Field(
        500,
        ge=2,
        description="Target distinct runs per MiniBatchKMeans partition of a large block.",
    )
    projection_dims: int = Field(
        64, ge=2, description="Random-projection width used only to partition large blocks."
    )
    random_state: int = Field(
        0, description="Seed of the partitioning models (results are deterministic given it)."
    )
    pairwise_chunk_rows: int = Field(
        1024, ge=1, description="Rows per chunk of the pairwise similarity computation (memory)."
    )
    keep_per_cluster: int = Field(
        1,
        ge=1,
        description=(
            "Representatives kept per cluster: the best by value_score, then most distinct "
            "tools, then earliest; extra ones are taken from different exact-duplicate groups "
            "first, for variety."
        ),
    )
    report_largest: int = Field(
        10, ge=0, description="How many of the largest clusters the report lists."
    )
    text_placeholders: list[
        Literal["email", "url", "phone", "date", "pseudonym", "id", "currency", "number", "name"]
    ] = Field(
        default_factory=lambda: [
            "email",
            "url",
            "date",
            "phone",
            "pseudonym",
            "id",
            "currency",
            "number",
            "name",
        ],
        description=(
            "Token kinds replaced by a placeholder in the user text before comparing, applied "
            "in this order. 'name' uses Faker's bundled first/last-name lists (no download)."
        ),
    )
