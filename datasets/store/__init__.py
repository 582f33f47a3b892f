"""The golden-set store: immutable, versioned sets published atomically to a directory or S3.

Small modules, one concern each: ``layout`` (paths and names), ``fs`` (the few filesystem
primitives atomicity rests on), ``versions`` (listing and allocating version ids), ``aliases``
(refs such as ``latest``), ``manifest``, ``case_files`` (writing the Parquet files),
``recorded_calls`` (a case's recorded calls looked up as a replay does, and the check that every
step can be), ``publish``, ``verify``, ``diff`` and ``gc``.
Replay jobs use ``golden_distill.datasets.reader`` instead.
"""
