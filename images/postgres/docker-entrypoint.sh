#!/bin/sh
# Entrypoint of converge/postgres:15, a registry-free stand-in for the official
# postgres:15 image. It honours the variables testcontainers' postgres module
# sets (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB) plus POSTGRES_INITDB_ARGS,
# POSTGRES_HOST_AUTH_METHOD and /docker-entrypoint-initdb.d/*.sql|*.sh. Like the
# official image, a first start initialises the cluster with a temporary
# socket-only server, so "database system is ready to accept connections" is
# logged twice then and once on later starts.
set -eu

if [ "$(id -u)" = 0 ]; then
	echo "docker-entrypoint: run as user postgres (initdb and postgres refuse root)" >&2
	exit 1
fi

# "docker run IMAGE -c fsync=off" means "postgres -c fsync=off".
case "${1:-}" in
-*) set -- postgres "$@" ;;
esac

if [ "${1:-}" != postgres ]; then
	exec "$@"
fi

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
POSTGRES_PASSWORD="${POSTGRES_PASSWORD:-}"
POSTGRES_HOST_AUTH_METHOD="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		echo "docker-entrypoint: POSTGRES_PASSWORD is empty; set it, or set POSTGRES_HOST_AUTH_METHOD=trust" >&2
		exit 1
	fi
	mkdir -p "$PGDATA"
	chmod 0700 "$PGDATA"

	pwfile=""
	if [ -n "$POSTGRES_PASSWORD" ]; then
		pwfile="$(mktemp)"
		printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	fi
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list.
	initdb --username="$POSTGRES_USER" ${pwfile:+--pwfile="$pwfile"} \
		--locale=C.UTF-8 --encoding=UTF8 --auth-local=trust \
		--auth-host="$POSTGRES_HOST_AUTH_METHOD" ${POSTGRES_INITDB_ARGS:-}
	if [ -n "$pwfile" ]; then rm -f "$pwfile"; fi

	{
		echo
		echo "listen_addresses = '*'"
	} >>"$PGDATA/postgresql.conf"
	{
		echo
		echo "host all all all $POSTGRES_HOST_AUTH_METHOD"
	} >>"$PGDATA/pg_hba.conf"

	# Temporary server on the Unix socket only, for CREATE DATABASE and init scripts.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
	psql_() { psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" "$@"; }
	if [ "$POSTGRES_DB" != postgres ]; then
		psql_ --dbname postgres --set db="$POSTGRES_DB" <<-'EOSQL'
			CREATE DATABASE :"db";
		EOSQL
	fi
	if [ -d /docker-entrypoint-initdb.d ]; then
		for f in /docker-entrypoint-initdb.d/*; do
			case "$f" in
			*.sh)
				echo "docker-entrypoint: running $f"
				. "$f"
				;;
			*.sql)
				echo "docker-entrypoint: running $f"
				psql_ --dbname "$POSTGRES_DB" -f "$f"
				;;
			*) ;;
			esac
		done
	fi
	pg_ctl -D "$PGDATA" -m fast -w stop
	echo "docker-entrypoint: PostgreSQL init process complete; ready for start up."
fi

exec "$@"
