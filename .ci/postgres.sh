#!/usr/bin/env bash
# Starts a throwaway PostgreSQL for lf-store's postgres test target.
#
# Usage (run it, don't source it):
#
#   eval "$(.ci/postgres.sh)"                      # sets LENSERFIGHT_TEST_POSTGRES_URL
#   cargo test -p lf-store --test postgres
#   .ci/postgres.sh stop                           # when done (optional)
#
# The LAST line on stdout is always
#   export LENSERFIGHT_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:54329/lenserfight_test
# and nothing else is printed on stdout; progress goes to stderr. Under GitHub
# Actions the variable is also appended to $GITHUB_ENV.
#
# What it does: installs Debian's postgresql package with apt-get when no
# server binaries are found under /usr/lib/postgresql (needs root), creates a
# cluster in a temporary directory owned by the postgres user (initdb refuses
# to run as root), starts it on 127.0.0.1 only with trust authentication (a
# disposable test server: fsync off), and creates the database
# lenserfight_test. Running it again reuses a running server and an existing
# database, so it is safe to call twice.
#
# Environment: LF_PG_PORT (default 54329), LF_PG_DIR (default
# ${TMPDIR:-/tmp}/lenserfight-pg-$LF_PG_PORT), LF_PG_DB (default
# lenserfight_test).

set -euo pipefail

PORT="${LF_PG_PORT:-54329}"
DIR="${LF_PG_DIR:-${TMPDIR:-/tmp}/lenserfight-pg-$PORT}"
DB="${LF_PG_DB:-lenserfight_test}"
URL="postgres://postgres@127.0.0.1:$PORT/$DB"

log() { echo ".ci/postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

find_bin() {
    # The newest installed major version.
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

# Runs a server binary as the cluster's owner: postgres when we are root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

BIN="$(find_bin || true)"

if [ "${1:-}" = "stop" ]; then
    [ -n "$BIN" ] || die "PostgreSQL is not installed"
    if [ -f "$DIR/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
        as_owner "$BIN/pg_ctl" -D "$DIR" -m fast -w stop >&2
    else
        log "no server running in $DIR"
    fi
    exit 0
fi

if [ -z "$BIN" ]; then
    [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not installed and installing it needs root (apt-get)"
    log "installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql postgresql-client >&2
    BIN="$(find_bin || true)"
    [ -n "$BIN" ] || die "apt-get installed postgresql but no initdb is under /usr/lib/postgresql/*/bin"
fi
log "using $BIN"

if [ ! -f "$DIR/PG_VERSION" ]; then
    log "creating a cluster in $DIR"
    mkdir -p "$DIR"
    chmod 700 "$DIR"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres:postgres "$DIR"
    fi
    # UTF-8 and a UTF-8 locale: full-text search lowercases with it.
    as_owner "$BIN/initdb" -D "$DIR" --username=postgres --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 >&2
fi

if as_owner "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
    log "a server is already running in $DIR"
else
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
        die "something else listens on 127.0.0.1:$PORT; set LF_PG_PORT to a free port"
    fi
    log "starting the server on 127.0.0.1:$PORT"
    # The socket lives in the cluster directory: /var/run/postgresql may not
    # exist or be writable. fsync off: this server holds test data only.
    as_owner "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >&2 \
        || { cat "$DIR/server.log" >&2 || true; die "the server did not start"; }
fi

PSQL=("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -X -q -v ON_ERROR_STOP=1)
if [ "$("${PSQL[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
    log "creating the database $DB"
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE \"$DB\" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8'" >&2
fi
"${PSQL[@]}" -d "$DB" -tAc "SELECT 1" >/dev/null || die "the database $DB does not answer"

if [ -n "${GITHUB_ENV:-}" ]; then
    echo "LENSERFIGHT_TEST_POSTGRES_URL=$URL" >>"$GITHUB_ENV"
fi
log "ready: $URL"
echo "export LENSERFIGHT_TEST_POSTGRES_URL=$URL"
