// Package wire is the driver protocol's encoding (versions 1 to 3): the
// messages the harness (package driver) and a child process exchange as
// newline-delimited JSON, and the JSON forms of the contracts' types a
// port call carries — rows, patches, conditions, writers, filters, change
// notifications, API requests and typed errors.
//
// Both ends of the protocol written in Go use it: the harness and the Go
// client (package client). docs/driver-protocol.md is the specification;
// this package is its executable form, and its tests pin the examples the
// specification shows.
//
// Every form is lossless for what a history records: times keep their
// nanoseconds (RFC 3339 with a fractional second, UTC), a patch keeps the
// difference between "not assigned" (absent) and "assigned null", and an
// error keeps its exact text beside its stable name, so a Go system run
// through the protocol records byte for byte the history it records in
// process. Decoding is strict: unknown fields, unknown enum values and
// malformed times are errors that name what was wrong.
package wire
