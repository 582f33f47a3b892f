"""The adapters `golden ingest` knows, by `--format` name. Adding a format is one line here.

Order matters when a file's format is recognised: the first adapter whose ``sniff`` says yes
reads it, so the narrow formats (Chronicle envelopes, tau2 results) come before chat, whose
transcripts they could resemble."""

from __future__ import annotations

from golden_distill.datasets.sources.base import SourceAdapter
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.chronicle import ChronicleAdapter
from golden_distill.datasets.sources.evidence import EvidenceAdapter
from golden_distill.datasets.sources.native import NativeAdapter
from golden_distill.datasets.sources.otel import OtelAdapter
from golden_distill.datasets.sources.tau2 import Tau2Adapter

ADAPTERS: dict[str, type[SourceAdapter]] = {}
ADAPTERS["native"] = NativeAdapter
ADAPTERS["chronicle"] = ChronicleAdapter
ADAPTERS["tau2"] = Tau2Adapter
ADAPTERS["chat"] = ChatAdapter
ADAPTERS["evidence"] = EvidenceAdapter
ADAPTERS["otel"] = OtelAdapter
