// Package refimpl is the reference coordinator: the implementation of the
// spec that converge's checkers are calibrated on. NewSystem exposes it as a
// ports.System, the same interface the simulator, the mutants and third-party
// implementations go through.
//
// Sub-packages: api (the API service layer, the only writer of
// desired_state), coordinator (leader election and the five components as
// synchronous ticks), runner (the production loop on a real clock),
// httpapi (the HTTP API, SSE and metrics), and the real adapters pgstore
// (PostgreSQL), redisbus (Redis), s3objects (MinIO/S3) and dockerprov
// (Docker), with testenv starting those services for tests.
package workspace
