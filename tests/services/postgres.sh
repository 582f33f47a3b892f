# PostgreSQL for the evidence-table tests: a throwaway server on a private data directory and a
# free loopback port, stopped (and its directory removed) when the test run ends.
# Sourced by tests/run_tests.sh; exports GOLDEN_TEST_POSTGRES_URL and registers its stop in
# cleanup_hooks. Installs Debian's postgresql with apt-get when no server binaries are found.
# An already-set GOLDEN_TEST_POSTGRES_URL is used as is (an external server).
# Usable on its own too:  cleanup_hooks=(); source tests/services/postgres.sh

_golden_pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$dir" ] && command -v pg_ctl >/dev/null 2>&1; then
    dir=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  fi
  echo "$dir"
}

_golden_pg_start() {
  local bin datadir port runas=() log
  bin=$(_golden_pg_bin)
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "postgres.sh: installing Debian postgresql (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; } \
        || { echo "postgres.sh: apt-get install postgresql failed" >&2; return 1; }
    else
      sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null \
        || { echo "postgres.sh: cannot install postgresql (not root, no sudo)" >&2; return 1; }
    fi
    bin=$(_golden_pg_bin)
  fi
  datadir=$(mktemp -d "${TMPDIR:-/tmp}/golden-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    # The server refuses to run as root: run it as the postgres system user.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$datadir"
    runas=(runuser -u postgres --)
  fi
  port=$("${BIN:-.venv/bin}/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  log="$datadir/server.log"
  "${runas[@]}" "$bin/initdb" -D "$datadir/data" -U golden -A trust -E UTF8 --no-sync >/dev/null \
    || { echo "postgres.sh: initdb failed" >&2; return 1; }
  "${runas[@]}" "$bin/pg_ctl" -D "$datadir/data" -l "$log" -w -t 60 \
    -o "-p $port -k $datadir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { echo "postgres.sh: server did not start (see $log)" >&2; return 1; }
  cleanup_hooks+=("${runas[*]} $bin/pg_ctl -D $datadir/data -m fast -w stop >/dev/null; rm -rf $datadir")
  "$bin/psql" -h 127.0.0.1 -p "$port" -U golden -d postgres -q -c "CREATE DATABASE golden_test" \
    || { echo "postgres.sh: cannot create the test database" >&2; return 1; }
  export GOLDEN_TEST_POSTGRES_URL="postgresql://golden@127.0.0.1:$port/golden_test"
  echo "postgres.sh: PostgreSQL on 127.0.0.1:$port (data in $datadir)" >&2
}

if [ -z "${GOLDEN_TEST_POSTGRES_URL:-}" ]; then
  _golden_pg_start || echo "postgres.sh: no PostgreSQL; tests that need it fail in CI" >&2
fi
