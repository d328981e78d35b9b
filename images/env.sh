#!/usr/bin/env bash
# Prints the export lines the tests use:   eval "$(images/env.sh)"
#
# Each image variable keeps a value already set in the environment; else it
# names the local image images/build.sh made, when it exists; else the
# official image, for machines that can pull from a registry.
# CONVERGE_IMAGE_PREFIX (default converge/) names the local images, as in
# build.sh.
set -euo pipefail

prefix="${CONVERGE_IMAGE_PREFIX:-converge/}"

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

pick CONVERGE_POSTGRES_IMAGE "${prefix}postgres:15" postgres:15
pick CONVERGE_REDIS_IMAGE "${prefix}redis:7" redis:7
pick CONVERGE_MINIO_IMAGE "${prefix}minio:latest" minio/minio:latest
# The project's own images exist only where they were built.
pick CONVERGE_STORAGE_JOB_IMAGE "${prefix}storage-job:dev" "${prefix}storage-job:dev"
pick CONVERGE_WORKSPACE_AGENT_IMAGE "${prefix}workspace-agent:dev" "${prefix}workspace-agent:dev"
# Ryuk's image cannot be pulled without a registry, and testcontainers
# misjudges the Docker host on machines with a /.dockerenv file.
printf 'export TESTCONTAINERS_RYUK_DISABLED=%q\n' "${TESTCONTAINERS_RYUK_DISABLED:-true}"
printf 'export TESTCONTAINERS_HOST_OVERRIDE=%q\n' "${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}"
