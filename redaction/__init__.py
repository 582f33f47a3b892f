"""Privacy: PII scrubbing with Presidio, keyed pseudonyms for primary keys, verification.

Importing this package keeps tldextract offline, before any module here imports Presidio:
Presidio's e-mail recognizer calls ``tldextract``, whose module-level extractor reads
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` once, when it is created on first import, and otherwise
fetches the public suffix list from the network. An empty value makes it use the snapshot that
ships with it. This is the only place the project sets it (a value the user exported wins).
"""

import os

#: The tldextract setting that names where to fetch the public suffix list ("" = nowhere).
TLDEXTRACT_URLS_ENV = "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"

os.environ.setdefault(TLDEXTRACT_URLS_ENV, "")
