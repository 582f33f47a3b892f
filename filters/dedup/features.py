"""Feature vectors for near-duplicate search: one sparse row per distinct normalised run.

Three views, each hashed with scikit-learn's ``HashingVectorizer`` (stateless: a run's vector
does not depend on which other runs are in the batch, so shards, orders and batch sizes cannot
change a distance) and L2-normalised:

* trajectory: n-grams (1..``tool_ngram_max``) of the ``name:status:W|R`` tokens, with start and
  end markers, as counts, so a repeated lookup or an extra retry changes the vector;
* text: word n-grams and character n-grams (within word boundaries) of the normalised request;
* argument shapes: one token per ``name(shape)``.

The combined row is ``[sqrt(w_t) T, sqrt(w_x) X, sqrt(w_s) S] / sqrt(w_t + w_x + w_s)``, so the
dot product of two rows is the weighted mean of the per-view cosine similarities, and
``1 - dot`` is the combined cosine distance the config threshold applies to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

# scipy / scikit-learn are imported where used: a shard or redact worker unpickles the flow
# (and so imports this module) but never clusters; it need not carry ~100 MB of them.
if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

from golden_distill.filters.dedup.config import DedupConfig

#: Stand-in token so an empty view still has a direction (empty == empty, empty != anything).
EMPTY = "_empty_"


@dataclass(frozen=True, slots=True)
class RunFeatures:
    """Row-aligned matrices: ``combined`` for the threshold, ``trajectory`` for the path gate."""

    combined: sp.csr_matrix
    trajectory: sp.csr_matrix


def _vectorizer(cfg: DedupConfig, **kwargs: object) -> HashingVectorizer:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        n_features=cfg.hash_features,
        alternate_sign=False,
        norm="l2",
        lowercase=False,
        dtype=np.float32,
        **kwargs,  # type: ignore[arg-type]
    )


def _or_empty(values: list[str]) -> list[str]:
    return [v if v else EMPTY for v in values]


def _per_distinct(values: list[str], transform: Callable[[list[str]], sp.csr_matrix]):
    """``transform`` applied once per distinct value, rows gathered back in input order.

    Runs of one group usually share their tool path and argument shapes, so this turns
    hundreds of thousands of analyzer calls into a few thousand.
    """
    distinct, inverse = np.unique(np.asarray(values, dtype=object), return_inverse=True)
    return transform(list(distinct))[inverse]


def trajectory_matrix(trajectories: list[str], cfg: DedupConfig) -> sp.csr_matrix:
    vec = _vectorizer(cfg, token_pattern=r"\S+", ngram_range=(1, cfg.tool_ngram_max))
    return _per_distinct(trajectories, lambda ts: vec.transform([f"^ {t} $" for t in ts]).tocsr())


class WordNgrams:
    """Analyzer: word n-grams of an already normalised text (lower-case, words split by spaces).

    Equivalent to HashingVectorizer's own word analyzer on normalised text (which has no
    punctuation left), without its regex tokenizer and general-purpose n-gram loop: the text
    features were the largest cost of the global step. A class, not a closure, so it pickles.
    """

    def __init__(self, ngram_range: tuple[int, int]) -> None:
        self.low, self.high = ngram_range

    def __call__(self, doc: str) -> list[str]:
        tokens = doc.split()
        grams = tokens[:] if self.low == 1 else []
        for n in range(max(2, self.low), self.high + 1):
            grams.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
        return grams


def text_matrix(texts: list[str], cfg: DedupConfig) -> sp.csr_matrix:
    docs = _or_empty(texts)
    words = _vectorizer(cfg, analyzer=WordNgrams(tuple(cfg.text_word_ngrams))).transform(docs)
    if cfg.text_char_ngrams is None:
        return words.tocsr()
    chars = _vectorizer(cfg, analyzer="char_wb", ngram_range=tuple(cfg.text_char_ngrams)).transform(
        docs
    )
    import scipy.sparse as sp

    half = np.float32(np.sqrt(0.5))
    return sp.hstack([words * half, chars * half], format="csr")


def shapes_matrix(shapes: list[str], cfg: DedupConfig) -> sp.csr_matrix:
    vec = _vectorizer(cfg, token_pattern=r"\S+", ngram_range=(1, 1))
    return _per_distinct(_or_empty(shapes), lambda ss: vec.transform(ss).tocsr())


def run_features(
    trajectories: list[str], texts: list[str], shapes: list[str], cfg: DedupConfig
) -> RunFeatures:
    """Features for aligned lists of normalised runs (see the module docstring)."""
    w = cfg.weights
    total = w.trajectory + w.text + w.argument_shapes
    traj = trajectory_matrix(trajectories, cfg)
    parts = []
    if w.trajectory > 0:
        parts.append(traj * np.float32(np.sqrt(w.trajectory / total)))
    if w.text > 0:
        parts.append(text_matrix(texts, cfg) * np.float32(np.sqrt(w.text / total)))
    if w.argument_shapes > 0:
        parts.append(shapes_matrix(shapes, cfg) * np.float32(np.sqrt(w.argument_shapes / total)))
    import scipy.sparse as sp

    return RunFeatures(combined=sp.hstack(parts, format="csr"), trajectory=traj)
