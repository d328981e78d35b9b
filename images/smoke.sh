#!/usr/bin/env bash
# Smoke checks of the images images/build.sh makes: each is started with
# "docker run" (ports mapped on 127.0.0.1 only) and must answer.
#
# Usage: images/smoke.sh [postgres|redis|minio|storage-job|workspace-agent ...]
#
# Image names come from the CONVERGE_*_IMAGE variables (see images/env.sh),
# defaulting to the local converge/* names (CONVERGE_IMAGE_PREFIX replaces
# "converge/", as in build.sh). Every container, volume and
# network started here is removed on exit, whatever happens.
set -euo pipefail

P="${CONVERGE_IMAGE_PREFIX:-converge/}"
POSTGRES_IMAGE="${CONVERGE_POSTGRES_IMAGE:-${P}postgres:15}"
REDIS_IMAGE="${CONVERGE_REDIS_IMAGE:-${P}redis:7}"
MINIO_IMAGE="${CONVERGE_MINIO_IMAGE:-${P}minio:latest}"
STORAGE_JOB_IMAGE="${CONVERGE_STORAGE_JOB_IMAGE:-${P}storage-job:dev}"
WORKSPACE_AGENT_IMAGE="${CONVERGE_WORKSPACE_AGENT_IMAGE:-${P}workspace-agent:dev}"

ALL=(postgres redis minio storage-job workspace-agent)
WANT=("$@")
if [[ ${#WANT[@]} -eq 0 ]]; then
	WANT=("${ALL[@]}")
fi

PREFIX="converge-smoke-$$"
CONTAINERS=()
VOLUMES=()
NETWORKS=()
FAILED=0

cleanup() {
	local c
	for c in "${CONTAINERS[@]}"; do
		docker rm -f "$c" >/dev/null 2>&1 || true
	done
	for c in "${VOLUMES[@]}"; do
		docker volume rm -f "$c" >/dev/null 2>&1 || true
	done
	for c in "${NETWORKS[@]}"; do
		docker network rm "$c" >/dev/null 2>&1 || true
	done
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# start NAME DOCKER-RUN-ARGS...: runs a detached container, remembered for cleanup.
start() {
	local name="$1"
	shift
	CONTAINERS+=("$name")
	docker run -d --name "$name" "$@" >/dev/null
}

host_port() { # CONTAINER PORT → the 127.0.0.1 port docker mapped
	docker port "$1" "$2/tcp" | awk -F: 'NR == 1 { print $NF }'
}

# retry SECONDS CMD...: runs CMD every 0.3 s until it succeeds or time runs out.
retry() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			return 1
		fi
		sleep 0.3
	done
}

fail() {
	echo "smoke: $*" >&2
	return 1
}

show_logs() {
	echo "--- logs of $1:" >&2
	docker logs --tail 30 "$1" 2>&1 | sed 's/^/    /' >&2
}

smoke_postgres() {
	local c port url
	c="$PREFIX-postgres"
	start "$c" -p 127.0.0.1::5432 -e POSTGRES_USER=smoke -e POSTGRES_PASSWORD=smoke-pw \
		-e POSTGRES_DB=smokedb "$POSTGRES_IMAGE" postgres -c fsync=off
	port="$(host_port "$c" 5432)"
	url="postgresql://smoke:smoke-pw@127.0.0.1:$port/smokedb"
	retry 60 psql "$url" -tAc 'select 1' || { show_logs "$c"; fail "postgres did not answer on port $port"; }
	local got
	got="$(psql "$url" -tAc "select current_user || ' ' || current_database() || ' ' || current_setting('lc_collate') || ' ' || current_setting('fsync')")"
	[[ $got == "smoke smokedb C.UTF-8 off" ]] || fail "postgres: unexpected session settings: $got"
	if PGCONNECT_TIMEOUT=5 psql "postgresql://smoke:wrong@127.0.0.1:$port/smokedb" -tAc 'select 1' >/dev/null 2>&1; then
		fail "postgres accepted a wrong password"
	fi
	local ready
	ready="$(docker logs "$c" 2>&1 | grep -c 'database system is ready to accept connections' || true)"
	[[ $ready == 2 ]] || fail "postgres: expected the ready line twice on first start, saw it $ready times"
	[[ "$(docker exec "$c" id -un)" == postgres ]] || fail "postgres does not run as user postgres"
}

redis_ping() { # PORT
	# A subshell: a failed "exec" redirection ends the shell it runs in.
	(
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		printf 'PING\r\n' >&3
		reply=""
		IFS= read -r -t 3 reply <&3 || true
		[[ $reply == $'+PONG\r' ]]
	)
}

smoke_redis() {
	local c port
	c="$PREFIX-redis"
	start "$c" -p 127.0.0.1::6379 "$REDIS_IMAGE"
	port="$(host_port "$c" 6379)"
	retry 30 redis_ping "$port" || { show_logs "$c"; fail "redis did not answer PING on port $port"; }
	docker logs "$c" 2>&1 | grep -q 'Ready to accept connections' || fail "redis did not log readiness"
}

smoke_minio() {
	local c port
	c="$PREFIX-minio"
	start "$c" -p 127.0.0.1::9000 "$MINIO_IMAGE" server /data
	port="$(host_port "$c" 9000)"
	retry 60 curl -fsS "http://127.0.0.1:$port/minio/health/live" ||
		{ show_logs "$c"; fail "minio is not live on port $port"; }
}

# smoke_storage_job archives a volume through a MinIO container and restores
# it into another volume, then compares the two trees.
smoke_storage_job() {
	local out rc
	set +e
	out="$(docker run --rm "$STORAGE_JOB_IMAGE" 2>&1)"
	rc=$?
	set -e
	[[ $rc == 2 && $out == *JOB_MODE* ]] ||
		fail "storage-job without settings: want exit 2 naming JOB_MODE, got $rc: $out"

	local net="$PREFIX-net" minio port key=smoke-key secret=smoke-secret-key
	docker network create "$net" >/dev/null
	NETWORKS+=("$net")
	minio="$PREFIX-storage-minio"
	start "$minio" --network "$net" -p 127.0.0.1::9000 -e MINIO_ROOT_USER=$key \
		-e MINIO_ROOT_PASSWORD=$secret "$MINIO_IMAGE" server /data
	port="$(host_port "$minio" 9000)"
	retry 60 curl -fsS "http://127.0.0.1:$port/minio/health/live" ||
		{ show_logs "$minio"; fail "minio is not live"; }
	curl -fsS -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
		"http://127.0.0.1:$port/smoke" >/dev/null || fail "cannot create the bucket"

	local src="$PREFIX-src" dst="$PREFIX-dst"
	VOLUMES+=("$src" "$dst")
	docker volume create "$src" >/dev/null
	docker volume create "$dst" >/dev/null
	# Fill the source volume through a helper that only copies files in.
	local fill="$PREFIX-fill" tree
	tree="$(mktemp -d)"
	mkdir -p "$tree/data/project/sub"
	printf 'hello\n' >"$tree/data/a.txt"
	head -c 300000 /dev/urandom >"$tree/data/project/sub/blob.bin"
	printf '#!/bin/sh\n' >"$tree/data/project/run.sh"
	chmod 0755 "$tree/data/project/run.sh"
	CONTAINERS+=("$fill")
	docker create --name "$fill" -v "$src:/data" "$STORAGE_JOB_IMAGE" >/dev/null
	tar -C "$tree" --owner=1000 --group=1000 -c data | docker cp - "$fill:/"
	docker rm "$fill" >/dev/null

	local url="s3://smoke/archives/ws-smoke/op-1/home.tar.zst"
	local env=(-e "ARCHIVE_URL=$url" -e "S3_ENDPOINT=$minio:9000" -e "S3_ACCESS_KEY=$key" -e "S3_SECRET_KEY=$secret")
	out="$(docker run --rm --network "$net" -v "$src:/data" "${env[@]}" "$STORAGE_JOB_IMAGE" archive 2>&1)" ||
		fail "archive failed: $out"
	# A stale file in the target must disappear on restore.
	CONTAINERS+=("$fill")
	docker create --name "$fill" -v "$dst:/data" "$STORAGE_JOB_IMAGE" >/dev/null
	mkdir -p "$tree/stale/data"
	printf 'old\n' >"$tree/stale/data/stale.txt"
	tar -C "$tree/stale" --owner=1000 --group=1000 -c data | docker cp - "$fill:/"
	docker rm "$fill" >/dev/null
	out="$(docker run --rm --network "$net" -v "$dst:/data" "${env[@]}" "$STORAGE_JOB_IMAGE" restore 2>&1)" ||
		fail "restore failed: $out"

	local want got
	want="$(volume_listing "$src")"
	got="$(volume_listing "$dst")"
	[[ -n $want && $want == "$got" ]] || fail "restored volume differs:"$'\n'"want:"$'\n'"$want"$'\n'"got:"$'\n'"$got"

	# Restoring a missing archive exits with ARCHIVE_NOT_FOUND's code.
	set +e
	out="$(docker run --rm --network "$net" -v "$dst:/data" -e "ARCHIVE_URL=s3://smoke/archives/ws-smoke/op-missing/home.tar.zst" \
		-e "S3_ENDPOINT=$minio:9000" -e "S3_ACCESS_KEY=$key" -e "S3_SECRET_KEY=$secret" "$STORAGE_JOB_IMAGE" restore 2>&1)"
	rc=$?
	set -e
	[[ $rc != 0 && "$(tail -n 1 <<<"$out")" == ARCHIVE_NOT_FOUND ]] ||
		fail "restore of a missing archive: want ARCHIVE_NOT_FOUND last, got exit $rc: $out"
	rm -rf "$tree"
}

# volume_listing VOLUME: "mode size sha256 path" of every entry, via docker cp.
volume_listing() {
	local helper="$PREFIX-list" dir
	dir="$(mktemp -d)"
	CONTAINERS+=("$helper")
	docker create --name "$helper" -v "$1:/data" "$STORAGE_JOB_IMAGE" >/dev/null
	docker cp "$helper:/data/." - | tar -C "$dir" -x
	docker rm "$helper" >/dev/null
	(cd "$dir" && find . -mindepth 1 -printf '%M %s %p\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
	rm -rf "$dir"
}

smoke_workspace_agent() {
	local c port
	c="$PREFIX-agent"
	start "$c" -p 127.0.0.1::8080 "$WORKSPACE_AGENT_IMAGE"
	port="$(host_port "$c" 8080)"
	retry 30 curl -fsS "http://127.0.0.1:$port/healthz" || { show_logs "$c"; fail "agent not healthy"; }
	curl -fsS -X PUT --data-binary 'hi there' "http://127.0.0.1:$port/files/notes/a.txt" >/dev/null ||
		fail "agent: PUT failed"
	[[ "$(curl -fsS "http://127.0.0.1:$port/files/notes/a.txt")" == "hi there" ]] || fail "agent: GET returned other bytes"
	local code
	code="$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary x --path-as-is "http://127.0.0.1:$port/files/../etc/x")"
	[[ $code == 400 ]] || fail "agent: path escape answered $code, want 400"
	docker stop -t 10 "$c" >/dev/null
	[[ "$(docker inspect --format '{{ .State.ExitCode }}' "$c")" == 0 ]] || fail "agent did not stop cleanly on SIGTERM"
}

for want in "${WANT[@]}"; do
	t="$(now)"
	case "$want" in
	postgres) image="$POSTGRES_IMAGE" ;;
	redis) image="$REDIS_IMAGE" ;;
	minio) image="$MINIO_IMAGE" ;;
	storage-job) image="$STORAGE_JOB_IMAGE" ;;
	workspace-agent) image="$WORKSPACE_AGENT_IMAGE" ;;
	*)
		echo "smoke: unknown image '$want'" >&2
		exit 2
		;;
	esac
	# A subshell per image: errexit stays in force inside it (it would not
	# under "if"), and its EXIT trap removes what it started.
	set +e
	(
		set -e
		trap cleanup EXIT
		"smoke_${want//-/_}"
	)
	rc=$?
	set -e
	if [[ $rc == 0 ]]; then
		printf '%-30s ok      %s\n' "$image" "$(elapsed "$t")"
	else
		printf '%-30s FAILED  %s\n' "$image" "$(elapsed "$t")"
		FAILED=1
	fi
done
exit "$FAILED"
