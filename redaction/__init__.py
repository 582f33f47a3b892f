"""Privacy: PII scrubbing with Presidio, keyed pseudonyms for primary keys, verification."""
