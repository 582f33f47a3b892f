#!/usr/bin/env bash
# Runs the whole suite with the real servers it needs, started here and stopped on exit.
# Called by `make test` (and so by CI through .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export PREFECT_HOME="${PREFECT_HOME:-$(mktemp -d)}"
export DO_NOT_TRACK=1
cleanup_hooks=()
cleanup() { for h in "${cleanup_hooks[@]}"; do eval "$h" || true; done; }
trap cleanup EXIT

# Services: each script under tests/services/ starts one server, exports its URL and registers
# its stop command in cleanup_hooks.
for svc in tests/services/*.sh; do
  [ -e "$svc" ] || continue
  # shellcheck source=/dev/null
  source "$svc"
done

set +e
"$BIN/python" -m pytest -n 2 --dist loadfile -p no:cacheprovider "$@"
rc=$?
set -e
# pytest exit 5 means "no tests collected": that is a failure for us, never a silent pass.
exit $rc
