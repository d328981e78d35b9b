package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/wsconverge/converge/contracts"
)

// codedError carries the SPEC 1.5 error code of a failure.
type codedError struct {
	code contracts.ErrorCode
	err  error
}

func (e *codedError) Error() string { return fmt.Sprintf("%s: %v", e.code, e.err) }
func (e *codedError) Unwrap() error { return e.err }

func withCode(code contracts.ErrorCode, err error) error {
	return &codedError{code: code, err: err}
}

// codeOf is the error code a failure exits with: DISK_FULL whenever the
// file system ran out of space or quota, else the code attached to it, else
// S3_ACCESS_ERROR for a store failure; false when none applies.
func codeOf(err error) (contracts.ErrorCode, bool) {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return contracts.CodeDiskFull, true
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code, true
	}
	var se *storeError
	if errors.As(err, &se) {
		return contracts.CodeS3AccessError, true
	}
	return "", false
}
