#!/usr/bin/env bash
# Measures a fresh-machine image build beside the images in use: build.sh
# runs under another name prefix, with an empty work directory, GOCACHE and
# GOMODCACHE, under /usr/bin/time -v; the load is sampled every 15 s.
#
# Usage: images/measure.sh [--keep] [--check] [BUILD_SH]
#
#   BUILD_SH   the build.sh to measure (default: this directory's), e.g. an
#              older commit's, checked out with git worktree
#   --check    afterwards, run smoke.sh and go test ./refimpl/testenv/
#              against the images built (with the usual Go caches)
#   --keep     keep the images and caches (the command that removes them is
#              printed); by default both are removed at the end
#
# MEASURE_PREFIX (default fresh-<pid>/) names the images; it may not be
# converge/. Prints a summary: wall time, CPU time (user + sys of build.sh
# and everything it waited for; docker import's work in dockerd is not in
# it), peak memory, and the load before, during and after.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
KEEP=0
CHECK=0
BUILD_SH="$HERE/build.sh"
for arg in "$@"; do
	case "$arg" in
	--keep) KEEP=1 ;;
	--check) CHECK=1 ;;
	-h | --help)
		sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "measure.sh: unknown option '$arg'" >&2
		exit 2
		;;
	*) BUILD_SH="$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")" ;;
	esac
done
[[ -f $BUILD_SH ]] || {
	echo "measure.sh: no $BUILD_SH" >&2
	exit 2
}
[[ -x /usr/bin/time ]] || {
	echo "measure.sh: /usr/bin/time is missing (apt-get install time)" >&2
	exit 2
}

PREFIX="${MEASURE_PREFIX:-fresh-$$/}"
if [[ $PREFIX == converge/ ]]; then
	echo "measure.sh: refusing to build under converge/, the images in use" >&2
	exit 2
fi
NAMES=(postgres:15 redis:7 minio:latest storage-job:dev workspace-agent:dev)
# Names already taken under the prefix would make the build look warm.
for n in "${NAMES[@]}"; do
	if docker image inspect "$PREFIX$n" >/dev/null 2>&1; then
		echo "measure.sh: $PREFIX$n exists; pick another MEASURE_PREFIX" >&2
		exit 2
	fi
done
WORK="$(mktemp -d /tmp/converge-measure.XXXXXX)"
SAMPLER=""

remove_all() {
	local n
	for n in "${NAMES[@]}"; do
		docker rmi "$PREFIX$n" >/dev/null 2>&1 || true
	done
	# The module cache is read-only; findmnt guards against a live /proc
	# left in a half-made Debian root.
	chmod -R u+w "$WORK" 2>/dev/null || true
	if findmnt -rn -o TARGET | grep -qF "$WORK/"; then
		echo "measure.sh: something is still mounted under $WORK; not removing it" >&2
		return 0
	fi
	rm -rf --one-file-system "$WORK"
}
cleanup() {
	if [[ -n $SAMPLER ]]; then
		kill -- "-$SAMPLER" 2>/dev/null || true
		wait "$SAMPLER" 2>/dev/null || true
	fi
	if [[ $KEEP == 0 ]]; then
		remove_all
	fi
}
trap cleanup EXIT

mkdir -p "$WORK/gocache" "$WORK/gomodcache" "$WORK/build"
load() { cut -d' ' -f1-3 /proc/loadavg; }
set -m # the sampler in a process group of its own, so its sleep stops with it
(
	while sleep 15; do
		cut -d' ' -f1 /proc/loadavg >>"$WORK/load"
	done
) </dev/null &
SAMPLER=$!
set +m

echo "measuring $BUILD_SH as ${PREFIX}* ($(nproc) cores, $(go version | awk '{ print $3 }'), $(date -u +%FT%TZ))"
LOAD_BEFORE="$(load)"
rc=0
CONVERGE_IMAGE_PREFIX="$PREFIX" CONVERGE_IMAGE_BUILD_DIR="$WORK/build" \
	GOCACHE="$WORK/gocache" GOMODCACHE="$WORK/gomodcache" \
	/usr/bin/time -v -o "$WORK/time" bash "$BUILD_SH" 2>&1 | tee "$WORK/out" || rc=$?
LOAD_AFTER="$(load)"

field() { awk -F': ' -v k="$1" 'index($0, k) { print $2; exit }' "$WORK/time"; }
user="$(field 'User time (seconds)')"
sys="$(field 'System time (seconds)')"
echo
echo "build.sh exit:     $rc"
echo "wall:              $(field 'Elapsed (wall clock)') (h:mm:ss or m:ss)"
awk -v u="$user" -v s="$sys" 'BEGIN { printf "CPU:               %.0f s (user %.0f s, sys %.0f s), %.1f CPU minutes\n", u + s, u, s, (u + s) / 60 }'
echo "peak memory:       $(($(field 'Maximum resident set size (kbytes)') / 1024)) MB (largest single process)"
echo "load before:       $LOAD_BEFORE (1, 5, 15 min)"
if [[ -s $WORK/load ]]; then
	sort -n "$WORK/load" | awk '{ a[NR] = $1; s += $1 } END { printf "load during:       1-min average %.1f mean, %.1f median, %.1f-%.1f (%d samples, 15 s apart)\n", s / NR, a[int((NR + 1) / 2)], a[1], a[NR], NR }'
fi
echo "load after:        $LOAD_AFTER"
[[ $rc == 0 ]] || exit "$rc"

if [[ $CHECK == 1 ]]; then
	echo
	echo "checking the images built:"
	CONVERGE_IMAGE_PREFIX="$PREFIX" bash "$HERE/smoke.sh"
	(
		cd "$REPO"
		export CONVERGE_IMAGE_PREFIX="$PREFIX"
		unset CONVERGE_POSTGRES_IMAGE CONVERGE_REDIS_IMAGE CONVERGE_MINIO_IMAGE \
			CONVERGE_STORAGE_JOB_IMAGE CONVERGE_WORKSPACE_AGENT_IMAGE
		eval "$(bash "$HERE/env.sh")"
		env | grep '^CONVERGE_.*IMAGE' | sort
		CONVERGE_REQUIRE_REAL=1 go test -count=1 ./refimpl/testenv/
	)
fi
if [[ $KEEP == 1 ]]; then
	echo
	echo "kept: images ${PREFIX}*, work directory $WORK; to remove them:"
	printf '  docker rmi'
	printf ' %s' "${NAMES[@]/#/$PREFIX}"
	printf '; chmod -R u+w %s && rm -rf %s\n' "$WORK" "$WORK"
fi
