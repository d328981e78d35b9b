// Package s3objects is ports.Objects on an S3 bucket (MinIO) with
// minio-go v7: the archive bucket of the storage jobs.
//
// A missing key is contracts.ErrNotFound. Every other failure is wrapped
// with the operation and key; one that is not an answer of the server (the
// endpoint did not answer, the connection broke) also wraps
// contracts.ErrUnavailable. List is recursive (a prefix is a string
// prefix, not a directory) and ordered by key.
package s3objects
