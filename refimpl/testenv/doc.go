// Package testenv starts the real services the real-service test tier runs
// against (PostgreSQL, Redis, MinIO) with testcontainers-go, or points at
// services that already run.
//
// Each service is found in this order:
//
//  1. an existing service named by an environment variable
//     (CONVERGE_POSTGRES_DSN, CONVERGE_REDIS_URL, CONVERGE_MINIO_ENDPOINT with
//     CONVERGE_MINIO_ACCESS_KEY and CONVERGE_MINIO_SECRET_KEY);
//  2. a container started from the image named by CONVERGE_POSTGRES_IMAGE,
//     CONVERGE_REDIS_IMAGE or CONVERGE_MINIO_IMAGE;
//  3. a container from the official image (postgres:15, redis:7,
//     minio/minio:latest) when it is present locally or can be pulled, else
//     from the image images/build.sh makes (converge/postgres:15, …) when
//     that one is present (CONVERGE_IMAGE_PREFIX replaces "converge/", as
//     in images/build.sh and images/env.sh).
//
// Without a Docker engine a test is skipped with a message that says so
// ("no Docker engine: real tier skipped"); with CONVERGE_REQUIRE_REAL=1 it
// fails instead. A real-service test therefore never passes silently.
//
// Before the first testcontainers call the package sets
// TESTCONTAINERS_RYUK_DISABLED=true (there is no registry to pull Ryuk from)
// and TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 (the machines carry a
// /.dockerenv file that misleads testcontainers' host detection), each only
// when it is unset. Containers are terminated by t.Cleanup, or for the
// shared server at the end of Run. Without Ryuk, a test binary killed by
// its timeout leaves its containers running: each carries its owner's pid,
// boot id and host name (LabelOwnerPID, …), and the first Docker probe of
// every later process removes those whose owner has ended (Reap).
//
// Postgres, Redis and MinIO start one container per call. PostgresDB gives
// each test a fresh database; when the package's TestMain calls Run, the
// databases of the whole test binary live on one shared server:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
package testenv
