#!/bin/sh
# Entrypoint of converge/redis:7, a registry-free stand-in for the official
# redis:7 image. Debian's redis-server starts in protected mode, which refuses
# clients coming through a mapped port; like the official image, this one
# listens on every interface with protected mode off unless the arguments say
# otherwise.
set -eu

# "docker run IMAGE --port 7000" or "docker run IMAGE /x/redis.conf" mean redis-server.
case "${1:-}" in
-* | *.conf) set -- redis-server "$@" ;;
esac

if [ "${1:-}" = redis-server ]; then
	protected=no
	bind=no
	for arg in "$@"; do
		case "$arg" in
		--protected-mode) protected=yes ;;
		--bind) bind=yes ;;
		esac
	done
	if [ "$protected" = no ]; then
		set -- "$@" --protected-mode no
	fi
	if [ "$bind" = no ]; then
		set -- "$@" --bind 0.0.0.0
	fi
fi

exec "$@"
