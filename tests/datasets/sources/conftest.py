"""Shared fixtures for the source adapter tests."""

from __future__ import annotations

from pg_schema import pg_url

__all__ = ["pg_url"]
