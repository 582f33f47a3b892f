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

# Supported Pythons (pyproject.toml): the suite runs on the venv's (3.11); the wheel installed
# from the runtime lock runs on a 3.12 (tests/packaging/test_wheel_install.py). CI must have it.
if [ -z "${GOLDEN_WHEEL_PYTHON:-}" ]; then
  for candidate in python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      export GOLDEN_WHEEL_PYTHON="$candidate"
      break
    fi
  done
fi
if [ -z "${GOLDEN_WHEEL_PYTHON:-}" ] && [ "${CI:-}" = "true" ]; then
  echo "no Python 3.12 found (python3.12 or pyenv's versions/3.12*): CI tests 3.11 and 3.12" >&2
  exit 1
fi

set +e
"$BIN/python" -m pytest -n 2 --dist loadfile -p no:cacheprovider "$@"
rc=$?
set -e
# pytest exit 5 means "no tests collected": that is a failure for us, never a silent pass.
exit $rc
