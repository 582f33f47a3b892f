"""Every run checks the raw cases it is about to publish against the set's erasure log.

What survives a pseudonym-key rotation is the log's raw digests (``datasets/store/
erasure_key.py``): the erased values as HMACs under the erasure key. Only the flow sees raw
values, so the check is here, on each redaction round's chosen cases (read again from the shard
candidates; only when the log holds raw digests). A match is refused like a case redaction
refuses: marked ``erased`` in its task's refusals, so the next member of its cluster takes its
place and the case is never gathered. Fails closed: a log with raw digests and no (or another)
erasure key stops the run.
"""

from __future__ import annotations

from golden_distill.datasets.store.erasure_key import ERASURE_KEY_ENV, erasure_key_from_env
from golden_distill.datasets.store.erasure_log import erased_raw_case_ids, erased_raw_digests
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.flows.errors import StageError, describe
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks.jobs import RedactJob, RedactResult
from golden_distill.flows.work_folder import WorkFolder

ERASED = "erased"


class ErasedCheck:
    """The set's raw digests and the erasure key, read once per run."""

    def __init__(self, resolved: ResolvedRun) -> None:
        store = StoreFS(resolved.store_url, resolved.config.publish.storage_options or None)
        try:
            self.digests, key_ids = erased_raw_digests(store, SetLayout(resolved.set_name))
        except Exception as exc:
            raise StageError("redact", f"reading the erasure log: {describe(exc)}") from None
        self.key = None
        if not self.digests:
            return
        try:
            self.key = erasure_key_from_env()
        except Exception as exc:
            raise StageError("redact", describe(exc)) from None
        if self.key is None or self.key.key_id not in key_ids:
            have = "no erasure key" if self.key is None else f"erasure key {self.key.key_id}"
            raise StageError(
                "redact",
                f"the erasure log of {resolved.set_name} was written with erasure key(s) "
                f"{', '.join(sorted(key_ids))} and this run has {have}: set {ERASURE_KEY_ENV} "
                "to that key (without it an erased subject could be published again)",
            )

    def mark(self, work: WorkFolder, jobs: list[RedactJob], found: dict[int, RedactResult]) -> int:
        """Mark the erased cases of a round's results as refused; returns how many."""
        if not self.digests or self.key is None:
            return 0
        marked = 0
        for job in jobs:
            result = found.get(job.index)
            if result is None or not job.case_ids:
                continue
            raw = work.read_cases(job.candidates_path, job.case_ids)
            for case_id in erased_raw_case_ids(raw, self.digests, self.key.digest):
                if case_id not in result.quarantined:
                    result.quarantined[case_id] = ERASED
                    marked += 1
        return marked
