#!/usr/bin/env bash
# Prints the export lines the tests use:   eval "$(images/env.sh)"
#
# Each image variable keeps a value already set in the environment; else it
# names the local image images/build.sh made, when it exists; else the
# official image, for machines that can pull from a registry.
set -euo pipefail

have_docker=0
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
	have_docker=1
fi

# pick VAR LOCAL OFFICIAL
pick() {
	local var="$1" local_image="$2" official="$3" value
	if [[ -n ${!var:-} ]]; then
		value="${!var}"
	elif [[ $have_docker == 1 ]] && docker image inspect "$local_image" >/dev/null 2>&1; then
		value="$local_image"
	else
		value="$official"
	fi
	printf 'export %s=%q\n' "$var" "$value"
}

pick CONVERGE_POSTGRES_IMAGE converge/postgres:15 postgres:15
pick CONVERGE_REDIS_IMAGE converge/redis:7 redis:7
pick CONVERGE_MINIO_IMAGE converge/minio:latest minio/minio:latest
# The project's own images exist only where they were built.
pick CONVERGE_STORAGE_JOB_IMAGE converge/storage-job:dev converge/storage-job:dev
pick CONVERGE_WORKSPACE_AGENT_IMAGE converge/workspace-agent:dev converge/workspace-agent:dev
# Ryuk's image cannot be pulled without a registry, and testcontainers
# misjudges the Docker host on machines with a /.dockerenv file.
printf 'export TESTCONTAINERS_RYUK_DISABLED=%q\n' "${TESTCONTAINERS_RYUK_DISABLED:-true}"
printf 'export TESTCONTAINERS_HOST_OVERRIDE=%q\n' "${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}"
