"""Synthetic enterprise agent traffic with planted truths (``golden generate``).

``generate_corpus`` writes native JSONL recordings (ERP/MES/CRM/finance/KB/HR/WMS tools, multi-turn
sessions, failures and retries, hand-offs, near-duplicate families, skewed tenants, English and
Chinese personal data, and a handful of deliberately broken lines) plus ``_truth.json`` saying
what was planted; ``load_truth`` reads the truth back for tests. See docs/generator.md.
"""

from golden_distill.synthetic.generate import GenerateSummary, generate_corpus
from golden_distill.synthetic.truth import RecordTruth, Truth, load_truth

__all__ = ["GenerateSummary", "RecordTruth", "Truth", "generate_corpus", "load_truth"]
