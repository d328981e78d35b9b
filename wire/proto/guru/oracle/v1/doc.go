// Package oraclev1 is the Go code generated from the guru.oracle.v1 .proto
// files: the request documents, submissions and aggregates, the module's
// transaction messages and its queries (ORACLE-SPEC 2.1-2.3, 6.5, 6.6).
package oraclev1
