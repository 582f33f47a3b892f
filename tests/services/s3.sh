# Sourced by tests/run_tests.sh: starts an S3-compatible server (moto_server, from PyPI) on a
# free loopback port for the store tests, exports GOLDEN_TEST_S3_ENDPOINT and registers its stop
# command. Without this script the tests start their own server (tests/datasets/store/conftest.py).
_s3_port="$("$BIN/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
_s3_log="$(mktemp)"
"$BIN/moto_server" -H 127.0.0.1 -p "$_s3_port" >"$_s3_log" 2>&1 &
_s3_pid=$!
cleanup_hooks+=("kill $_s3_pid 2>/dev/null; wait $_s3_pid 2>/dev/null")
for _ in $(seq 1 150); do
  if "$BIN/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$_s3_port/', timeout=1)" 2>/dev/null; then
    export GOLDEN_TEST_S3_ENDPOINT="http://127.0.0.1:$_s3_port"
    break
  fi
  sleep 0.2
done
if [ -z "${GOLDEN_TEST_S3_ENDPOINT:-}" ]; then
  echo "tests/services/s3.sh: moto_server did not start (log: $_s3_log)" >&2
fi
