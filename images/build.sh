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
# Third-party images are built when missing, or when their recipe (entrypoint
# scripts, image settings) changed; --force rebuilds everything from scratch.
# The project's images are rebuilt whenever their binary's SHA-256 differs
# from the one recorded in the image's label. Build contexts and logs live in
# images/.build/ (git-ignored). Every image is made with "docker import" of a
# tar stream, so neither a registry nor a Dockerfile builder is needed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
BUILD="$HERE/.build"
LOGS="$BUILD/logs"

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
DEB_PACKAGES=postgresql-15,redis-server
# Pinned for reproducible builds (the version the images were first built and
# tested with); MINIO_VERSION=latest (or any version) overrides it.
MINIO_MODULE="github.com/minio/minio@${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"

POSTGRES_IMAGE=converge/postgres:15
REDIS_IMAGE=converge/redis:7
MINIO_IMAGE=converge/minio:latest
STORAGE_JOB_IMAGE=converge/storage-job:dev
WORKSPACE_AGENT_IMAGE=converge/workspace-agent:dev

LABEL_RECIPE=org.wsconverge.recipe
LABEL_BINARY=org.wsconverge.binary-sha256

ALL=(postgres redis minio storage-job workspace-agent)

FORCE=0
WANT=()
for arg in "$@"; do
	case "$arg" in
	--force) FORCE=1 ;;
	-h | --help)
		sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	postgres | redis | minio | storage-job | workspace-agent) WANT+=("$arg") ;;
	*)
		echo "build.sh: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done
if [[ ${#WANT[@]} -eq 0 ]]; then
	WANT=("${ALL[@]}")
fi

CURRENT=""
on_exit() {
	local rc=$?
	if [[ $rc != 0 ]]; then
		echo "build.sh: FAILED${CURRENT:+ building $CURRENT} (exit $rc); logs in $LOGS" >&2
	fi
}
trap on_exit EXIT

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

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
report() { printf '%-30s %-11s %s\n' "$1" "$2" "$3"; }

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

command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "cannot reach the Docker daemon (is it running, may this user use it?)"
mkdir -p "$BUILD" "$LOGS"

# One build at a time: concurrent runs would share images/.build.
exec 9>"$BUILD/.lock"
if command -v flock >/dev/null && ! flock -n 9; then
	echo "build.sh: waiting for another build.sh to finish" >&2
	flock 9
fi

# ---------------------------------------------------------------- Debian root

ROOT_DIR="$BUILD/debroot"
ROOTFS="$ROOT_DIR/rootfs"
ROOT_STAMP="$ROOT_DIR/complete-$(printf '%s %s' "$SUITE" "$DEB_PACKAGES" | sha256sum | cut -c1-12)"
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

# ensure_root makes the shared bookworm root with PostgreSQL 15 and Redis.
ensure_root() {
	if [[ $ROOT_FRESH == 1 ]] || [[ $FORCE == 0 && -f $ROOT_STAMP ]]; then
		return 0
	fi
	[[ $EUID == 0 ]] || die "making the Debian root needs root (debootstrap, chown); run as root"
	ensure_debootstrap
	clear_root_dir
	mkdir -p "$ROOT_DIR"
	run "$LOGS/debootstrap.log" debootstrap --variant=minbase --include="$DEB_PACKAGES" \
		"$SUITE" "$ROOTFS" "$MIRROR"
	unmount_under "$ROOTFS"
	# Package caches, apt lists, and the cluster Debian's postinst creates.
	rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
		"$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/lib/postgresql/15 "$ROOTFS"/etc/postgresql/15 \
		"$ROOTFS"/var/log/postgresql/* "$ROOTFS"/var/log/redis/*
	touch "$ROOT_STAMP"
	ROOT_FRESH=1
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

# customise_root installs both entrypoints and the directories they need.
customise_root() {
	trim_root
	local pg redis
	pg="$(uid_in_root postgres)"
	redis="$(uid_in_root redis)"
	[[ -n $pg && -n $redis ]] || die "users postgres/redis missing from $ROOTFS/etc/passwd"
	install -m 0755 "$HERE/postgres/docker-entrypoint.sh" "$ROOTFS/usr/local/bin/postgres-entrypoint.sh"
	install -m 0755 "$HERE/redis/docker-entrypoint.sh" "$ROOTFS/usr/local/bin/redis-entrypoint.sh"
	mkdir -p "$ROOTFS/var/lib/postgresql/data" "$ROOTFS/run/postgresql" "$ROOTFS/data" \
		"$ROOTFS/docker-entrypoint-initdb.d"
	chown "$pg" "$ROOTFS/var/lib/postgresql" "$ROOTFS/var/lib/postgresql/data" "$ROOTFS/run/postgresql"
	chmod 0700 "$ROOTFS/var/lib/postgresql/data"
	chmod 2775 "$ROOTFS/run/postgresql"
	chown "$redis" "$ROOTFS/data"
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

# Bump when customise_root changes in a way the images must pick up.
ROOT_RECIPE_VERSION=2

# recipe_hash ENTRYPOINT CHANGES...: what the image is made of, besides the packages.
recipe_hash() {
	local entry="$1"
	shift
	{
		printf '%s\n' "$ROOT_RECIPE_VERSION" "$SUITE" "$DEB_PACKAGES" "$@"
		cat "$entry"
	} | sha256sum | cut -c1-64
}

# build_from_root NAME IMAGE ENTRYPOINT CHANGES...
build_from_root() {
	local name="$1" image="$2" entry="$3"
	shift 3
	local start recipe
	start="$(now)"
	CURRENT="$image"
	recipe="$(recipe_hash "$entry" "$@")"
	if [[ $FORCE == 0 && "$(image_label "$image" "$LABEL_RECIPE")" == "$recipe" ]]; then
		report "$image" "up to date" "($(elapsed "$start"))"
		return 0
	fi
	ensure_root
	customise_root
	local old args=()
	old="$(image_id "$image")"
	local c
	for c in "$@"; do
		args+=(--change "$c")
	done
	args+=(--change "LABEL $LABEL_RECIPE=$recipe")
	unmount_under "$ROOTFS"
	tar --numeric-owner --one-file-system -C "$ROOTFS" -c . |
		run "$LOGS/$name-import.log" docker import "${args[@]}" - "$image"
	drop_replaced "$old" "$image"
	report "$image" "built" "in $(elapsed "$start")"
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
	if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
		mkdir -p "$ctx/etc/ssl/certs"
		cp /etc/ssl/certs/ca-certificates.crt "$ctx/etc/ssl/certs/"
		echo "./etc ./etc/ssl ./etc/ssl/certs ./etc/ssl/certs/ca-certificates.crt"
	fi
}

build_minio() {
	local start bin ctx version
	start="$(now)"
	CURRENT="$MINIO_IMAGE"
	if [[ $FORCE == 0 ]] && image_exists "$MINIO_IMAGE"; then
		report "$MINIO_IMAGE" "up to date" "($(elapsed "$start"))"
		return 0
	fi
	bin="$BUILD/minio/bin"
	ctx="$BUILD/minio/ctx"
	mkdir -p "$bin"
	if [[ $FORCE == 1 || ! -x $bin/minio ]]; then
		rm -f "$bin/minio"
		(cd "$BUILD" && CGO_ENABLED=0 GOBIN="$bin" GOWORK=off GOFLAGS=-trimpath \
			run "$LOGS/minio-go-install.log" go install "$MINIO_MODULE")
	fi
	version="$(go version -m "$bin/minio" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')"
	rm -rf "$ctx"
	mkdir -p "$ctx/data" "$ctx/tmp"
	chmod 0755 "$ctx" "$ctx/data"
	chmod 1777 "$ctx/tmp"
	ln -f "$bin/minio" "$ctx/minio" 2>/dev/null || cp "$bin/minio" "$ctx/minio"
	local certs
	certs="$(add_ca_certs "$ctx")"
	import_scratch "$MINIO_IMAGE" "$ctx" "./minio ./data ./tmp $certs" "" \
		"ENV HOME=/tmp" "WORKDIR /data" "EXPOSE 9000" 'ENTRYPOINT ["/minio"]' \
		"LABEL org.wsconverge.minio-version=${version:-unknown}"
	report "$MINIO_IMAGE" "built" "in $(elapsed "$start") (minio ${version:-unknown})"
}

# build_own NAME IMAGE HOME CHANGES...: the project's static binary ./cmd/NAME
# in a scratch image running as 1000:1000, with HOME owned by that user.
build_own() {
	local name="$1" image="$2" home="$3"
	shift 3
	local start out ctx sum
	start="$(now)"
	CURRENT="$image"
	[[ -d $REPO/cmd/$name ]] || die "no source at $REPO/cmd/$name"
	out="$BUILD/$name"
	ctx="$out/ctx"
	rm -rf "$ctx"
	mkdir -p "$ctx"
	(cd "$REPO" && CGO_ENABLED=0 GOWORK=off run "$LOGS/$name-go-build.log" \
		go build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$ctx/$name" "./cmd/$name")
	sum="$(sha256sum "$ctx/$name" | cut -c1-64)"
	if [[ $FORCE == 0 && "$(image_label "$image" "$LABEL_BINARY")" == "$sum" ]]; then
		report "$image" "up to date" "($(elapsed "$start"))"
		return 0
	fi
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
	import_scratch "$image" "$ctx" "./$name ./tmp $parents $certs" ".$home" \
		"USER 1000:1000" "ENTRYPOINT [\"/$name\"]" "$@" \
		"LABEL $LABEL_BINARY=$sum"
	report "$image" "built" "in $(elapsed "$start")"
}

# ----------------------------------------------------------------------- main

for want in "${WANT[@]}"; do
	case "$want" in
	postgres)
		build_from_root postgres "$POSTGRES_IMAGE" "$HERE/postgres/docker-entrypoint.sh" "${POSTGRES_CHANGES[@]}"
		;;
	redis)
		build_from_root redis "$REDIS_IMAGE" "$HERE/redis/docker-entrypoint.sh" "${REDIS_CHANGES[@]}"
		;;
	minio)
		build_minio
		;;
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
CURRENT=""
