"""Selection funnels (score, then decide), quotas and sampling, and deduplication."""
