#!/usr/bin/env bash
# Builds the images the tests use, with no image registry:
#
#   converge/postgres:15           Debian bookworm root (debootstrap) + entrypoint
#   converge/redis:7               the same root, another entrypoint
#   converge/minio:latest          MinIO built from source, FROM scratch
#   converge/storage-job:dev       ./cmd/storage-job, FROM scratch
#   converge/workspace-agent:dev   ./cmd/workspace-agent, FROM scratch
#
# Usage: images/build.sh [--force] [postgres|redis|minio|storage-job|workspace-agent ...]
#
# Without names it builds what the tests will use: a third-party image whose
# CONVERGE_*_IMAGE variable names another image is skipped (env.sh keeps it).
# Three jobs run at once: MinIO's compile, the Debian root (download-bound)
# with PostgreSQL and Redis, and the project's two binaries; the first that
# fails stops the others. CONVERGE_IMAGE_JOBS=1 runs them one after another.
#
# Each image carries the hash of what defines it (label org.wsconverge.recipe)
# and is rebuilt only when that changes: the recipe (entrypoints, image
# settings, the functions below that shape it, the host's CA bundle), the
# pinned versions (Debian suite and packages, MinIO module), the binary's
# SHA-256. --force rebuilds everything from scratch (Debian root and MinIO
# binary included).
#
# CONVERGE_IMAGE_PREFIX (default converge/) replaces the names' "converge/",
# and CONVERGE_IMAGE_BUILD_DIR (default images/.build) the work directory, so
# a second set can be built beside the images tests are using (env.sh and the
# tests honour the same prefix). Build contexts and logs live in the work
# directory (logs/). Every image is made with "docker import" of a tar
# stream, so neither a registry nor a Dockerfile builder is needed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
BUILD="${CONVERGE_IMAGE_BUILD_DIR:-$HERE/.build}"
LOGS="$BUILD/logs"

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
DEB_PACKAGES=postgresql-15,redis-server
# Pinned for reproducible builds (the version the images were first built and
# tested with); MINIO_VERSION=latest (or any version) overrides it.
MINIO_MODULE="github.com/minio/minio@${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
# How the MinIO binary is compiled; part of its cache key.
MINIO_GOENV=(CGO_ENABLED=0 GOWORK=off GOFLAGS=-trimpath)

PREFIX="${CONVERGE_IMAGE_PREFIX:-converge/}"
POSTGRES_IMAGE=${PREFIX}postgres:15
REDIS_IMAGE=${PREFIX}redis:7
MINIO_IMAGE=${PREFIX}minio:latest
STORAGE_JOB_IMAGE=${PREFIX}storage-job:dev
WORKSPACE_AGENT_IMAGE=${PREFIX}workspace-agent:dev

LABEL_RECIPE=org.wsconverge.recipe
LABEL_BINARY=org.wsconverge.binary-sha256
LABEL_MINIO_VERSION=org.wsconverge.minio-version
LABEL_MINIO_BUILD=org.wsconverge.minio-build

ALL=(postgres redis minio storage-job workspace-agent)

FORCE=0
WANT=()
for arg in "$@"; do
	case "$arg" in
	--force) FORCE=1 ;;
	-h | --help)
		sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	postgres | redis | minio | storage-job | workspace-agent) WANT+=("$arg") ;;
	*)
		echo "build.sh: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

# The variable env.sh and the tests read for a third-party image.
image_var() {
	case "$1" in
	postgres) echo CONVERGE_POSTGRES_IMAGE ;;
	redis) echo CONVERGE_REDIS_IMAGE ;;
	minio) echo CONVERGE_MINIO_IMAGE ;;
	esac
}
image_of() {
	case "$1" in
	postgres) echo "$POSTGRES_IMAGE" ;;
	redis) echo "$REDIS_IMAGE" ;;
	minio) echo "$MINIO_IMAGE" ;;
	storage-job) echo "$STORAGE_JOB_IMAGE" ;;
	workspace-agent) echo "$WORKSPACE_AGENT_IMAGE" ;;
	esac
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
report() { printf '%-30s %-11s %s\n' "$1" "$2" "$3"; }

if [[ ${#WANT[@]} -eq 0 ]]; then
	# Only what the tests will use: env.sh keeps a CONVERGE_*_IMAGE already
	# set, so an image it names instead of ours need not be built.
	for name in "${ALL[@]}"; do
		var="$(image_var "$name")"
		if [[ -n $var && -n ${!var:-} && ${!var} != "$(image_of "$name")" ]]; then
			report "$(image_of "$name")" "skipped" "($var=${!var})"
			continue
		fi
		WANT+=("$name")
	done
fi

CURRENT=""  # the image(s) being built, for the failure line
JOBS_DIR="" # state shared with the background jobs
declare -A JOB_PID=()

on_exit() {
	local rc=$?
	stop_jobs
	[[ -z $JOBS_DIR ]] || rm -rf "$JOBS_DIR"
	if [[ $rc != 0 ]]; then
		echo "build.sh: FAILED${CURRENT:+ building $CURRENT} (exit $rc); logs in $LOGS" >&2
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "build.sh: $*" >&2
	exit 1
}

# run LOG CMD...: runs CMD with its output in LOG; on failure shows the log's tail.
run() {
	local log="$1"
	shift
	if ! "$@" >"$log" 2>&1; then
		echo "build.sh: command failed: $*" >&2
		tail -n 30 "$log" | sed 's/^/    /' >&2
		return 1
	fi
}

sha() { sha256sum | cut -c1-64; }

image_label() { # IMAGE LABEL: prints the label's value, or nothing when the image is missing
	docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true
}
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
image_id() { docker image inspect --format '{{ .Id }}' "$1" 2>/dev/null || true; }

# drop_replaced OLD_ID IMAGE: removes the image IMAGE used to name, now that a
# rebuild moved the tag (kept when a container still uses it).
drop_replaced() {
	local err
	if [[ -n $1 && "$1" != "$(image_id "$2")" ]]; then
		if ! err="$(docker rmi "$1" 2>&1 >/dev/null)"; then
			echo "build.sh: note: kept the image $2 replaced: ${err:-docker rmi failed}" >&2
		fi
	fi
}

# ----------------------------------------------------------------------- jobs
#
# Each job is a subshell in a process group of its own (set -m while it
# starts), so stopping it stops everything it started: go's compilers,
# debootstrap's dpkg, a docker import. Parallel jobs need bash >= 5.1
# (wait -n -p); older shells run them one after another.

PARALLEL=1
if [[ ${CONVERGE_IMAGE_JOBS:-} == 1 ]] || ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
	PARALLEL=0
fi

# start_job NAME FUNCTION ARGS...
start_job() {
	local name="$1"
	shift
	set -m
	(
		set +m
		# shellcheck disable=SC2064 # the name is fixed when the job starts
		trap "job_exit \$? $name" EXIT
		"$@"
	) </dev/null &
	JOB_PID[$name]=$!
	set +m
	if [[ $PARALLEL == 0 ]]; then
		wait_jobs
	fi
}

# job_exit RC NAME: records, for the failure line, which image the job was on.
job_exit() {
	if [[ $1 != 0 ]]; then
		printf '%s\n' "${CURRENT:-$2}" >"$JOBS_DIR/$2.failed"
	fi
}

# wait_jobs waits for every job; the first failure stops the others and
# ends the script.
wait_jobs() {
	local pid name rc
	while ((${#JOB_PID[@]} > 0)); do
		pid=""
		rc=0
		wait -n -p pid "${JOB_PID[@]}" || rc=$?
		[[ -n $pid ]] || continue # a signal; its trap ends the script
		for name in "${!JOB_PID[@]}"; do
			if [[ ${JOB_PID[$name]} == "$pid" ]]; then
				unset "JOB_PID[$name]"
				break
			fi
		done
		if [[ $rc != 0 ]]; then
			CURRENT="$(cat "$JOBS_DIR/$name.failed" 2>/dev/null || echo "$name")"
			stop_jobs
			exit 1
		fi
	done
}

# stop_jobs terminates every running job's process group and waits until
# nothing of it is left (SIGKILL after 10 s).
stop_jobs() {
	local name pid n
	((${#JOB_PID[@]} > 0)) || return 0
	for name in "${!JOB_PID[@]}"; do
		kill -TERM -- "-${JOB_PID[$name]}" 2>/dev/null || true
	done
	for name in "${!JOB_PID[@]}"; do
		pid="${JOB_PID[$name]}"
		wait "$pid" 2>/dev/null || true
		n=0
		while kill -0 -- "-$pid" 2>/dev/null && ((n < 150)); do
			if ((n == 100)); then
				kill -KILL -- "-$pid" 2>/dev/null || true
			fi
			sleep 0.1
			n=$((n + 1))
		done
		echo "build.sh: stopped the $name job" >&2
	done
	JOB_PID=()
}

command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "cannot reach the Docker daemon (is it running, may this user use it?)"
mkdir -p "$BUILD" "$LOGS"

# One build at a time: concurrent runs would share the work directory.
exec 9>"$BUILD/.lock"
if command -v flock >/dev/null && ! flock -n 9; then
	echo "build.sh: waiting for another build.sh to finish" >&2
	flock 9
fi
JOBS_DIR="$(mktemp -d "$BUILD/.jobs.XXXXXX")"

# The host's CA bundle goes into the scratch images, so it is part of their recipe.
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
CA_SUM=none
if [[ -f $CA_BUNDLE ]]; then
	CA_SUM="$(sha <"$CA_BUNDLE")"
fi

# ---------------------------------------------------------------- Debian root

ROOT_DIR="$BUILD/debroot"
ROOTFS="$ROOT_DIR/rootfs"
ROOT_FRESH=0 # set once this run has made the root, so --force makes it once

ensure_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	command -v apt-get >/dev/null || die "debootstrap is missing and apt-get is not available to install it"
	# apt-get update only when the package lists do not know debootstrap.
	if ! apt-get install -y --no-install-recommends debootstrap >"$LOGS/apt.log" 2>&1; then
		run "$LOGS/apt.log" apt-get update
		run "$LOGS/apt.log" apt-get install -y --no-install-recommends debootstrap
	fi
}

# clear_root_dir deletes the Debian root, first unmounting whatever an
# interrupted debootstrap left mounted in it (proc, sys, dev); rm never
# crosses into another file system.
clear_root_dir() {
	[[ -d $ROOT_DIR ]] || return 0
	unmount_under "$ROOT_DIR"
	rm -rf --one-file-system "$ROOT_DIR"
}

# unmount_under DIR: debootstrap sometimes leaves /proc mounted in the root
# (seen once here); tar and rm must never walk into a live /proc.
unmount_under() {
	local m
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done < <(findmnt -rn -o TARGET | grep -F "$1/" | sort -r)
	if findmnt -rn -o TARGET | grep -qF "$1/"; then
		die "cannot unmount everything under $1: $(findmnt -rn -o TARGET | grep -F "$1/" | tr '\n' ' ')"
	fi
}

# make_root: the bookworm root with PostgreSQL 15 and Redis, without package
# caches, apt lists, and the cluster Debian's postinst creates.
make_root() {
	run "$LOGS/debootstrap.log" debootstrap --variant=minbase --include="$DEB_PACKAGES" \
		"$SUITE" "$ROOTFS" "$MIRROR"
	unmount_under "$ROOTFS"
	rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
		"$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/lib/postgresql/15 "$ROOTFS"/etc/postgresql/15 \
		"$ROOTFS"/var/log/postgresql/* "$ROOTFS"/var/log/redis/*
}

uid_in_root() { awk -F: -v u="$1" '$1 == u { print $3 ":" $4 }' "$ROOTFS/etc/passwd"; }

# trim_root drops what a test database never uses: documentation, message
# translations, and PostgreSQL's optional LLVM JIT (with llvmjit.so gone the
# server silently runs without JIT): over 200 MB of the root.
trim_root() {
	rm -rf "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
		"$ROOTFS"/usr/lib/postgresql/15/lib/llvmjit.so "$ROOTFS"/usr/lib/postgresql/15/lib/llvmjit_types.bc \
		"$ROOTFS"/usr/lib/postgresql/15/lib/bitcode \
		"$ROOTFS"/usr/lib/x86_64-linux-gnu/libLLVM-*.so* "$ROOTFS"/usr/lib/x86_64-linux-gnu/libz3.so*
	find "$ROOTFS/usr/share/locale" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
}

# shape_root makes the directories both entrypoints need.
shape_root() {
	local pg redis
	pg="$(uid_in_root postgres)"
	redis="$(uid_in_root redis)"
	[[ -n $pg && -n $redis ]] || die "users postgres/redis missing from $ROOTFS/etc/passwd"
	mkdir -p "$ROOTFS/var/lib/postgresql/data" "$ROOTFS/run/postgresql" "$ROOTFS/data" \
		"$ROOTFS/docker-entrypoint-initdb.d"
	chown "$pg" "$ROOTFS/var/lib/postgresql" "$ROOTFS/var/lib/postgresql/data" "$ROOTFS/run/postgresql"
	chmod 0700 "$ROOTFS/var/lib/postgresql/data"
	chmod 2775 "$ROOTFS/run/postgresql"
	chown "$redis" "$ROOTFS/data"
}

# The root's key: the pinned suite and packages and the functions that make
# it. The root is kept between runs and remade only when this changes.
ROOT_KEY="$({
	printf '%s\n' "$SUITE" "$DEB_PACKAGES"
	declare -f make_root trim_root shape_root
} | sha)"
ROOT_STAMP="$ROOT_DIR/complete-${ROOT_KEY:0:16}"

# ensure_root makes the shared root unless it is there for this key.
ensure_root() {
	if [[ $ROOT_FRESH == 1 ]] || [[ $FORCE == 0 && -f $ROOT_STAMP ]]; then
		return 0
	fi
	[[ $EUID == 0 ]] || die "making the Debian root needs root (debootstrap, chown); run as root"
	ensure_debootstrap
	clear_root_dir
	mkdir -p "$ROOT_DIR"
	make_root
	trim_root
	shape_root
	touch "$ROOT_STAMP"
	ROOT_FRESH=1
}

# Both images carry both entrypoints (one root serves both).
ENTRYPOINTS=("$HERE/postgres/docker-entrypoint.sh" "$HERE/redis/docker-entrypoint.sh")
install_entrypoints() {
	install -m 0755 "${ENTRYPOINTS[0]}" "$ROOTFS/usr/local/bin/postgres-entrypoint.sh"
	install -m 0755 "${ENTRYPOINTS[1]}" "$ROOTFS/usr/local/bin/redis-entrypoint.sh"
}

PG_PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
POSTGRES_CHANGES=(
	"ENV PATH=$PG_PATH"
	"ENV LANG=C.UTF-8"
	"ENV PGDATA=/var/lib/postgresql/data"
	"USER postgres"
	"WORKDIR /var/lib/postgresql"
	"EXPOSE 5432"
	'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]'
	'CMD ["postgres"]'
)
REDIS_CHANGES=(
	"ENV LANG=C.UTF-8"
	"USER redis"
	"WORKDIR /data"
	"EXPOSE 6379"
	'ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]'
	'CMD ["redis-server"]'
)

# set_changes NAME: CHANGES=the image settings of postgres or redis.
set_changes() {
	case "$1" in
	postgres) CHANGES=("${POSTGRES_CHANGES[@]}") ;;
	redis) CHANGES=("${REDIS_CHANGES[@]}") ;;
	esac
}

# import_root LOGNAME IMAGE RECIPE CHANGES...
import_root() {
	local log="$1" image="$2" recipe="$3"
	shift 3
	local c args=()
	for c in "$@"; do
		args+=(--change "$c")
	done
	args+=(--change "LABEL $LABEL_RECIPE=$recipe")
	unmount_under "$ROOTFS"
	tar --numeric-owner --one-file-system -C "$ROOTFS" -c . |
		run "$LOGS/$log-import.log" docker import "${args[@]}" - "$image"
}

# root_recipe CHANGES...: what an image from the root is made of.
root_recipe() {
	{
		printf '%s\n' "$ROOT_KEY" "$@"
		cat "${ENTRYPOINTS[@]}"
		declare -f install_entrypoints import_root
	} | sha
}

# job_root NAME...: postgres and/or redis, from one root.
job_root() {
	local start name image todo=() recipes=()
	start="$(now)"
	for name in "$@"; do
		image="$(image_of "$name")"
		CURRENT="$image"
		set_changes "$name"
		local recipe
		recipe="$(root_recipe "${CHANGES[@]}")"
		if [[ $FORCE == 0 && "$(image_label "$image" "$LABEL_RECIPE")" == "$recipe" ]]; then
			report "$image" "up to date" "($(elapsed "$start"))"
		else
			todo+=("$name")
			recipes+=("$recipe")
		fi
	done
	((${#todo[@]} > 0)) || return 0
	CURRENT="$(image_of "${todo[0]}")"
	ensure_root
	install_entrypoints
	local i old
	for i in "${!todo[@]}"; do
		name="${todo[$i]}"
		image="$(image_of "$name")"
		CURRENT="$image"
		old="$(image_id "$image")"
		set_changes "$name"
		import_root "$name" "$image" "${recipes[$i]}" "${CHANGES[@]}"
		drop_replaced "$old" "$image"
		report "$image" "built" "in $(elapsed "$start")"
	done
}

# ------------------------------------------------------------ scratch images

# import_scratch IMAGE CTX_DIR ROOT_OWNED USER_OWNED CHANGES...: imports a
# FROM-scratch image from CTX_DIR. ROOT_OWNED and USER_OWNED are
# space-separated lists of paths relative to CTX_DIR, owned by 0:0 and
# 1000:1000. Timestamps and order are fixed, so equal inputs give equal layers.
import_scratch() {
	local image="$1" ctx="$2" root_owned="$3" user_owned="$4"
	shift 4
	local tarball="$ctx.tar" args=() c old
	old="$(image_id "$image")"
	for c in "$@"; do
		args+=(--change "$c")
	done
	local common=(--numeric-owner --sort=name --mtime=@0 --no-recursion -C "$ctx")
	# shellcheck disable=SC2086 # the path lists are word lists
	tar "${common[@]}" --owner=0 --group=0 -cf "$tarball" $root_owned
	# shellcheck disable=SC2086
	tar "${common[@]}" --owner=1000 --group=1000 -rf "$tarball" $user_owned
	local log="${image//[\/:]/-}"
	run "$LOGS/$log-import.log" docker import "${args[@]}" "$tarball" "$image"
	rm -f "$tarball"
	drop_replaced "$old" "$image"
}

# host CA certificates, so a static binary can talk TLS from a scratch image
add_ca_certs() {
	local ctx="$1"
	if [[ -f $CA_BUNDLE ]]; then
		mkdir -p "$ctx/etc/ssl/certs"
		cp "$CA_BUNDLE" "$ctx/etc/ssl/certs/"
		echo "./etc ./etc/ssl ./etc/ssl/certs ./etc/ssl/certs/ca-certificates.crt"
	fi
}

MINIO_CHANGES=("ENV HOME=/tmp" "WORKDIR /data" "EXPOSE 9000" 'ENTRYPOINT ["/minio"]')

# minio_ctx BIN CTX: lays out MinIO's image.
minio_ctx() {
	local bin="$1" ctx="$2"
	rm -rf "$ctx"
	mkdir -p "$ctx/data" "$ctx/tmp"
	chmod 0755 "$ctx" "$ctx/data"
	chmod 1777 "$ctx/tmp"
	ln -f "$bin" "$ctx/minio" 2>/dev/null || cp "$bin" "$ctx/minio"
	local certs
	certs="$(add_ca_certs "$ctx")"
	echo "./minio ./data ./tmp $certs"
}

# extract_minio IMAGE KEY DEST: copies /minio out of IMAGE when that binary
# was built from the same inputs: its build label is KEY, or (images made
# before the label existed, with the same compile settings) its version
# label is the pinned version.
extract_minio() {
	local image="$1" key="$2" dest="$3" built version cid
	image_exists "$image" || return 1
	built="$(image_label "$image" "$LABEL_MINIO_BUILD")"
	version="$(image_label "$image" "$LABEL_MINIO_VERSION")"
	[[ $built != "<no value>" ]] || built=""
	if [[ $built != "$key" ]] && ! [[ -z $built && $version == "${MINIO_MODULE#*@}" ]]; then
		return 1
	fi
	cid="$(docker create "$image" 2>/dev/null)" || return 1
	if ! docker cp "$cid:/minio" "$dest.part" >/dev/null 2>&1; then
		docker rm -f "$cid" >/dev/null 2>&1 || true
		rm -f "$dest.part"
		return 1
	fi
	docker rm -f "$cid" >/dev/null 2>&1 || true
	mv "$dest.part" "$dest"
}

job_minio() {
	local start key recipe dir bin ctx version gover from
	start="$(now)"
	CURRENT="$MINIO_IMAGE"
	# The binary is defined by the module version and how it is compiled.
	key="$({
		printf '%s\n' "$MINIO_MODULE" "${MINIO_GOENV[@]}"
		go env GOOS GOARCH GOAMD64
	} | sha)"
	recipe="$({
		printf '%s\n' "$key" "$CA_SUM" "${MINIO_CHANGES[@]}"
		declare -f minio_ctx add_ca_certs import_scratch
	} | sha)"
	if [[ $FORCE == 0 && "$(image_label "$MINIO_IMAGE" "$LABEL_RECIPE")" == "$recipe" ]]; then
		report "$MINIO_IMAGE" "up to date" "($(elapsed "$start"))"
		return 0
	fi
	dir="$BUILD/minio/${key:0:16}"
	bin="$dir/minio"
	ctx="$BUILD/minio/ctx"
	mkdir -p "$dir"
	if [[ $FORCE == 1 ]]; then
		rm -f "$bin"
	fi
	from="cached binary"
	if [[ ! -x $bin ]] && [[ $FORCE == 0 ]] && extract_minio "$MINIO_IMAGE" "$key" "$bin"; then
		from="binary taken from the image it replaces"
	elif [[ ! -x $bin ]]; then
		from="compiled"
		report "$MINIO_IMAGE" "compiling" "go install $MINIO_MODULE (the longest step; $LOGS/minio-go-install.log)"
		(cd "$BUILD" && run "$LOGS/minio-go-install.log" \
			env "${MINIO_GOENV[@]}" GOBIN="$dir" go install "$MINIO_MODULE")
	fi
	# Binaries of other keys (another version) are dropped; so is the old layout.
	find "$BUILD/minio" -mindepth 1 -maxdepth 1 ! -name "${key:0:16}" ! -name ctx -exec rm -rf {} +
	version="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')"
	gover="$(go version "$bin" 2>/dev/null | awk '{ print $2 }')"
	local paths
	paths="$(minio_ctx "$bin" "$ctx")"
	import_scratch "$MINIO_IMAGE" "$ctx" "$paths" "" "${MINIO_CHANGES[@]}" \
		"LABEL $LABEL_MINIO_VERSION=${version:-unknown}" \
		"LABEL $LABEL_MINIO_BUILD=$key" \
		"LABEL org.wsconverge.go-version=${gover:-unknown}" \
		"LABEL $LABEL_RECIPE=$recipe"
	rm -rf "$ctx"
	report "$MINIO_IMAGE" "built" "in $(elapsed "$start") (minio ${version:-unknown}, $from)"
}

# own_ctx NAME CTX HOME: lays out a project image around CTX/NAME; prints the
# root-owned paths (the user-owned one is HOME).
own_ctx() {
	local name="$1" ctx="$2" home="$3"
	mkdir -p "$ctx/tmp" "$ctx$home"
	chmod 0755 "$ctx" "$ctx/$name" "$ctx$home"
	chmod 1777 "$ctx/tmp"
	local certs parents="" p="$home"
	while [[ $(dirname "$p") != / ]]; do
		p="$(dirname "$p")"
		chmod 0755 "$ctx$p"
		parents=".$p $parents"
	done
	certs="$(add_ca_certs "$ctx")"
	echo "./$name ./tmp $parents $certs"
}

# build_own NAME IMAGE HOME CHANGES...: the project's static binary ./cmd/NAME
# in a scratch image running as 1000:1000, with HOME owned by that user.
build_own() {
	local name="$1" image="$2" home="$3"
	shift 3
	local start out ctx sum recipe
	start="$(now)"
	CURRENT="$image"
	[[ -d $REPO/cmd/$name ]] || die "no source at $REPO/cmd/$name"
	out="$BUILD/$name"
	ctx="$out/ctx"
	rm -rf "$ctx"
	mkdir -p "$ctx"
	(cd "$REPO" && CGO_ENABLED=0 GOWORK=off run "$LOGS/$name-go-build.log" \
		go build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$ctx/$name" "./cmd/$name")
	sum="$(sha <"$ctx/$name")"
	recipe="$({
		printf '%s\n' "$sum" "$home" "$CA_SUM" "$@"
		declare -f own_ctx add_ca_certs import_scratch
	} | sha)"
	if [[ $FORCE == 0 && "$(image_label "$image" "$LABEL_RECIPE")" == "$recipe" ]]; then
		report "$image" "up to date" "($(elapsed "$start"))"
		return 0
	fi
	local paths
	paths="$(own_ctx "$name" "$ctx" "$home")"
	import_scratch "$image" "$ctx" "$paths" ".$home" \
		"USER 1000:1000" "ENTRYPOINT [\"/$name\"]" "$@" \
		"LABEL $LABEL_BINARY=$sum" "LABEL $LABEL_RECIPE=$recipe"
	report "$image" "built" "in $(elapsed "$start")"
}

# job_own NAME...: the project's images, one after another (the second build
# reuses the first one's compiled packages).
job_own() {
	local name
	for name in "$@"; do
		case "$name" in
		storage-job)
			build_own storage-job "$STORAGE_JOB_IMAGE" /data \
				"ENV DATA_DIR=/data" "ENV TMPDIR=/tmp" "ENV HOME=/tmp" "WORKDIR /tmp"
			;;
		workspace-agent)
			build_own workspace-agent "$WORKSPACE_AGENT_IMAGE" /home/coder \
				"ENV HOME=/home/coder" "ENV HOME_DIR=/home/coder" "ENV AGENT_ADDR=:8080" \
				"WORKDIR /home/coder" "EXPOSE 8080"
			;;
		esac
	done
}

# ----------------------------------------------------------------------- main

MAIN_START="$(now)"
want_root=() want_minio=() want_own=()
for want in "${WANT[@]}"; do
	case "$want" in
	postgres | redis) [[ " ${want_root[*]} " == *" $want "* ]] || want_root+=("$want") ;;
	minio) want_minio=(minio) ;;
	storage-job | workspace-agent) [[ " ${want_own[*]} " == *" $want "* ]] || want_own+=("$want") ;;
	esac
done
# MinIO's compile is the longest: it starts first.
if ((${#want_minio[@]} > 0)); then
	start_job minio job_minio
fi
if ((${#want_root[@]} > 0)); then
	start_job debian-root job_root "${want_root[@]}"
fi
if ((${#want_own[@]} > 0)); then
	start_job project job_own "${want_own[@]}"
fi
wait_jobs
CURRENT=""
if ((${#WANT[@]} > 1)); then
	echo "build.sh: done in $(elapsed "$MAIN_START")"
fi
