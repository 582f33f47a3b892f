"""The adapters `golden ingest` knows, by `--format` name. Adding a format is one line here."""

from __future__ import annotations

from golden_distill.datasets.sources.base import SourceAdapter
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.evidence import EvidenceAdapter
from golden_distill.datasets.sources.native import NativeAdapter
from golden_distill.datasets.sources.otel import OtelAdapter

ADAPTERS: dict[str, type[SourceAdapter]] = {}
ADAPTERS["native"] = NativeAdapter
ADAPTERS["chat"] = ChatAdapter
ADAPTERS["evidence"] = EvidenceAdapter
ADAPTERS["otel"] = OtelAdapter
