"""Free-text findings per distinct string, for one ``redact_table`` / ``redact_many`` call.

Why a separate object owned by the call, not a dict on the ``Redactor``: the redactor is
shared (one per worker process, used by several task threads at once, and reused across
shards), so per-call state on it leaks between calls. A shared cache that one call clears while
another is between filling it and reading it raised ``KeyError`` (a ``redaction_error`` refusal,
and the flow then published another cluster member: runs differed by scheduling).

What may be cached: findings are a pure function of (string, analyzer config, threshold), so
reusing them for every case of the call is safe. Nothing that depends on a batch's known
values (propagation, name dictionary) belongs here. Memory is bounded by one call's strings.
"""

from __future__ import annotations

from golden_distill.redaction.analyzer import Finding, TextAnalyzer
from golden_distill.redaction.normalise import Normalised


class FindingsCache:
    """Findings per distinct text: from memory, else one batched analyzer call.

    ``verify`` gives the verifier's findings: the scrubber's (same strings, same detectors,
    cached) plus those of ``extra``, the verifier's own further recognizers (the floor the
    config dropped, Presidio's predefined ones)."""

    def __init__(
        self, analyzer: TextAnalyzer, threshold: float, extra: TextAnalyzer | None = None
    ) -> None:
        self.analyzer = analyzer
        self.threshold = threshold
        self.extra = extra
        self._found: dict[str, list[Finding]] = {}
        self._extra_found: dict[str, list[Finding]] = {}
        #: ``normalise`` per text, shared by both analyzers (a pure function of the text)
        self._normalised: dict[str, Normalised | None] = {}

    def verify(self, texts: list[str]) -> dict[str, list[Finding]]:
        found = self(texts)
        if self.extra is None:
            return found
        missing = [t for t in found if t not in self._extra_found]
        if missing:
            self._extra_found.update(
                self.extra.analyze_many(missing, self.threshold, self._normalised)
            )
        return {t: [*f, *self._extra_found[t]] for t, f in found.items()}

    def __call__(self, texts: list[str]) -> dict[str, list[Finding]]:
        distinct = list(dict.fromkeys(texts))
        missing = [t for t in distinct if t not in self._found]
        if missing:
            self._found.update(
                self.analyzer.analyze_many(missing, self.threshold, self._normalised)
            )
        return {t: self._found[t] for t in distinct}

    def __len__(self) -> int:
        return len(self._found)
