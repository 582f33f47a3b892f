# Chromium for the review page's browser test (tests/flows/review_app/): Debian's `chromium`
# package, driven by Playwright (its own browser download is not used). Sourced by
# tests/run_tests.sh; installs the package with apt-get when no chromium is found and exports
# GOLDEN_TEST_CHROMIUM. Without a browser the test fails (it never skips).
# Usable on its own too:  cleanup_hooks=(); source tests/services/chromium.sh

_golden_chromium_path() {
  local name
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return
    fi
  done
}

_golden_chromium_install() {
  echo "chromium.sh: installing Debian chromium (apt-get)" >&2
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } \
      || { echo "chromium.sh: apt-get install chromium failed" >&2; return 1; }
  else
    sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
      || { echo "chromium.sh: cannot install chromium (not root, no sudo)" >&2; return 1; }
  fi
}

if [ -z "${GOLDEN_TEST_CHROMIUM:-}" ]; then
  _chromium=$(_golden_chromium_path)
  if [ -z "$_chromium" ]; then
    _golden_chromium_install && _chromium=$(_golden_chromium_path)
  fi
  if [ -n "$_chromium" ]; then
    export GOLDEN_TEST_CHROMIUM="$_chromium"
    echo "chromium.sh: browser tests use $_chromium" >&2
  else
    echo "chromium.sh: no chromium; the browser test fails" >&2
  fi
fi
