// Package realtier runs the spec's scenarios on real services: PostgreSQL
// (pgstore), Redis (redisbus), MinIO (s3objects) and Docker (dockerprov),
// started with testcontainers from local images. Coordinators run in
// process under the production runner on a scaled clock; every port is
// wrapped by sim/workspace/recorded, so each run's history is judged by the
// same checkers as the simulator's. User data is written and read through
// the workspace agent's HTTP API inside the real workspace container.
//
// The tests skip (saying so) without a Docker engine, and fail instead
// under CONVERGE_REQUIRE_REAL=1, which `make test` sets when one answers.
package realtier
