"""The adapters `golden ingest` knows, by `--format` name. Adding a format is one line here."""

from __future__ import annotations

from golden_distill.datasets.sources.base import SourceAdapter

ADAPTERS: dict[str, type[SourceAdapter]] = {}
