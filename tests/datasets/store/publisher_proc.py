"""A publisher in its own process, for the kill and concurrency tests.

Usage: python publisher_proc.py '<json spec>' with url, set, options, start, n (and optionally
max_rows). Prints the result as one JSON line. ``GOLDEN_PUBLISH_PAUSE_AFTER`` (set by the test)
makes it stop at a chosen point so the test can kill it there.
"""

from __future__ import annotations

import json
import sys

import factory  # this script's folder is sys.path[0]

from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.store.publish import publish_version


def main() -> None:
    spec = json.loads(sys.argv[1])
    result = publish_version(
        spec["url"],
        spec["set"],
        cases=factory.make_table(spec["n"], spec["start"]),
        report_html="<html><body>report</body></html>",
        storage_options=spec.get("options"),
        config=PublishConfig(max_rows_per_file=spec.get("max_rows", 100_000)),
    )
    print(json.dumps({"version": result.version, "deduplicated_of": result.deduplicated_of}))


if __name__ == "__main__":
    main()
