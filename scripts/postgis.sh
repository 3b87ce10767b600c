#!/usr/bin/env bash
# Install (if needed) and start a throwaway PostgreSQL + PostGIS cluster for the tests and the
# screening benchmark; print, as the only stdout line, the shell line that exports its URL:
#
#   eval "$(bash scripts/postgis.sh)"     # -> export GEOCONSTRAINTS_PG_URL='postgresql://...'
#   bash scripts/postgis.sh --url         # just the URL
#   bash scripts/postgis.sh stop          # stop the cluster (data stays in $GC_PG_DIR)
#
# Idempotent and fast when already installed and running: it only checks and prints the URL.
# Settings (environment): GC_PG_DIR (default /tmp/gc-pg), GC_PG_PORT (55432), GC_PG_DB
# (geoconstraints), PG_MAJOR (15). Needs root (apt-get, su) the first time on Debian/Ubuntu.
# The cluster listens on 127.0.0.1 only, with trust auth: for tests, never for real data.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
DIR="${GC_PG_DIR:-/tmp/gc-pg}"
PORT="${GC_PG_PORT:-55432}"
DB="${GC_PG_DB:-geoconstraints}"
BIN="/usr/lib/postgresql/${PG_MAJOR}/bin"
URL="postgresql://postgres@127.0.0.1:${PORT}/${DB}"

log() { echo "postgis.sh: $*" >&2; }

as_pg() {  # run a command as the postgres OS user (initdb/postgres refuse to run as root)
    if [ "$(id -un)" = "postgres" ]; then "$@"; else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
}

if [ "${1:-}" = "stop" ]; then
    if [ -f "$DIR/postmaster.pid" ]; then as_pg "$BIN/pg_ctl" -D "$DIR" -m fast -w stop >&2; fi
    exit 0
fi

# 1. packages ---------------------------------------------------------------------------------
ext_dir="/usr/share/postgresql/${PG_MAJOR}/extension"
if [ ! -x "$BIN/postgres" ] || ! ls "$ext_dir"/postgis--*.sql >/dev/null 2>&1; then
    if [ "$(id -u)" != "0" ]; then
        log "PostgreSQL ${PG_MAJOR} with PostGIS 3 is not installed; run this script as root once" \
            "(it runs: apt-get install -y postgresql-${PG_MAJOR} postgresql-${PG_MAJOR}-postgis-3)"
        exit 1
    fi
    log "installing postgresql-${PG_MAJOR} and postgresql-${PG_MAJOR}-postgis-3 (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "postgresql-${PG_MAJOR}" \
        "postgresql-${PG_MAJOR}-postgis-3" >&2
fi

# 2. cluster ----------------------------------------------------------------------------------
if [ ! -f "$DIR/PG_VERSION" ]; then
    log "creating a throwaway cluster in $DIR (port $PORT, trust auth on 127.0.0.1)"
    mkdir -p "$DIR"
    chown postgres:postgres "$DIR" 2>/dev/null || true
    chmod 700 "$DIR"
    as_pg "$BIN/initdb" -D "$DIR" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
    {
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $PORT"
        echo "unix_socket_directories = '$DIR'"
        echo "fsync = off"
        echo "synchronous_commit = off"
        echo "full_page_writes = off"
        echo "shared_buffers = 256MB"
        echo "work_mem = 64MB"
        echo "max_parallel_workers_per_gather = 0"
    } >> "$DIR/postgresql.conf"
fi

if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
    log "starting the cluster"
    as_pg "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 start >/dev/null
fi

# 3. database with postgis --------------------------------------------------------------------
psql_q() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres "$@"; }
if [ "$(psql_q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
    psql_q -d postgres -c "CREATE DATABASE \"$DB\"" >&2
fi
psql_q -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS postgis" >/dev/null 2>&1 \
    || { log "CREATE EXTENSION postgis failed; see $DIR/server.log"; exit 1; }

if [ "${1:-}" = "--url" ]; then
    echo "$URL"
else
    echo "export GEOCONSTRAINTS_PG_URL='$URL'"
fi
