#!/usr/bin/env bash
# A restore drill: restores a backup made with `pg_dump -Fc` into a scratch database on the same
# server, checks that every table and every applied migration came back, prints each table's row
# count, and drops the scratch database (also when a step fails).
#
#   DATABASE_URL=postgresql://user:password@host:5432/vpn scripts/restore-drill.sh [backup.dump]
#
# Without a file it first takes a backup of DATABASE_URL as the nightly one is taken. Needs
# PostgreSQL's client programs (pg_dump, pg_restore, psql) of the server's major version or newer,
# and a role that may create databases. Exit code 0 only when the restore is complete.
set -euo pipefail

: "${DATABASE_URL:?set DATABASE_URL to the database the backup was taken from}"
for program in pg_dump pg_restore psql node; do
  command -v "$program" >/dev/null || { echo "restore drill: $program is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
scratch="restore_drill_$(date +%s)_$$"
scratch_url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.href)' "$DATABASE_URL" "$scratch")
# shellcheck disable=SC2317 # run by the trap
cleanup() {
  psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS \"$scratch\" WITH (FORCE)" >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

backup=${1:-}
if [ -z "$backup" ]; then
  backup="$work/backup.dump"
  pg_dump --format=custom --no-owner --file="$backup" "$DATABASE_URL"
fi

psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$scratch\""
pg_restore --no-owner --exit-on-error --dbname="$scratch_url" "$backup"

# The tables, each table with its row count, and the applied migrations, of a database.
read -r -d '' tables <<'SQL' || true
SELECT table_name FROM information_schema.tables
 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1
SQL
read -r -d '' counts <<'SQL' || true
SELECT table_name || ' ' || (xpath('/row/c/text()',
         query_to_xml(format('SELECT count(*) AS c FROM %I', table_name), false, true, '')))[1]::text
  FROM information_schema.tables
 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1
SQL
migrations='SELECT name FROM migrations ORDER BY id'

status=0
if [ -n "${1:-}" ]; then
  # A given file may be older than the database: check it restored, and that it has migrations.
  if [ -z "$(psql "$scratch_url" -At -c "$migrations" | tail -n 1)" ]; then
    echo 'restore drill: the restored database has no applied migrations' >&2
    status=1
  fi
else
  if ! diff <(psql "$DATABASE_URL" -At -c "$tables") <(psql "$scratch_url" -At -c "$tables"); then
    echo 'restore drill: the restored tables differ from the source (< source, > restored)' >&2
    status=1
  fi
  if ! diff <(psql "$DATABASE_URL" -At -c "$migrations") <(psql "$scratch_url" -At -c "$migrations"); then
    echo 'restore drill: the restored migrations differ from the source' >&2
    status=1
  fi
fi

echo "restored $(psql "$scratch_url" -At -c "$tables" | wc -l) tables; newest migration: $(psql "$scratch_url" -At -c "$migrations" | tail -n 1)"
psql "$scratch_url" -At -c "$counts" | sed 's/^/  /'
[ "$status" -eq 0 ] && echo 'restore drill: complete'
exit "$status"
