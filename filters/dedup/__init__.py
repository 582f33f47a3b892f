"""Deduplication: exact duplicates by normalised content, near duplicates by clustering."""
