"""`golden review serve`: a local review page over one published version.

Thin by design: ``source.py`` reads the published version and the review log, ``pages.py``
renders server-side HTML (every value escaped: transcripts are untrusted text), ``app.py``
routes requests behind a per-run token, ``serve.py`` binds 127.0.0.1. What a case shows and how
a decision becomes a log entry live in ``filters/review_case.py``, ``filters/review_queue.py``
and ``filters/review.py``; decisions are appended by ``flows/review_log.py``, as
`golden review import` appends them.
"""
