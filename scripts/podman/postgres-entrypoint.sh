#!/bin/bash
# The official image's first start, in short: an empty PGDATA gets a cluster whose superuser is POSTGRES_USER with
# POSTGRES_PASSWORD, and the database POSTGRES_DB, made while the server listens on its socket alone (no client
# reaches it half made); then PostgreSQL runs as the postgres user, on every address, passwords checked (SCRAM).
set -euo pipefail
bin=/usr/lib/postgresql/15/bin
: "${POSTGRES_USER:?}" "${POSTGRES_PASSWORD:?}" "${POSTGRES_DB:=$POSTGRES_USER}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$password_file"
  chown postgres "$password_file"
  as_postgres "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  as_postgres "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
  fi
  as_postgres "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres-entrypoint: made the cluster in $PGDATA and the database $POSTGRES_DB"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
