package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
)

func TestClassifyS3(t *testing.T) {
	ctx := context.Background()
	resp := func(code string, status int) error {
		return fmt.Errorf("wrapped: %w", minio.ErrorResponse{Code: code, StatusCode: status})
	}
	for _, tc := range []struct {
		name                string
		err                 error
		notFound, transient bool
	}{
		{"missing key", resp("NoSuchKey", http.StatusNotFound), true, false},
		{"missing bucket", resp("NoSuchBucket", http.StatusNotFound), false, false},
		{"access denied", resp("AccessDenied", http.StatusForbidden), false, false},
		{"bad key id", resp("InvalidAccessKeyId", http.StatusForbidden), false, false},
		{"bad signature", resp("SignatureDoesNotMatch", http.StatusForbidden), false, false},
		{"server error", resp("InternalError", http.StatusInternalServerError), false, true},
		{"unavailable", resp("503 Service Unavailable", http.StatusServiceUnavailable), false, true},
		{"slow down", resp("SlowDown", http.StatusServiceUnavailable), false, true},
		{"throttled", resp("", http.StatusTooManyRequests), false, true},
		{"request timeout", resp("RequestTimeout", http.StatusBadRequest), false, true},
		{"other 4xx", resp("InvalidRange", http.StatusRequestedRangeNotSatisfiable), false, false},
		{"storage full", resp("XMinioStorageFull", http.StatusInsufficientStorage), false, false},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notFound, transient := classifyS3(ctx, tc.err)
			require.Equal(t, tc.notFound, notFound, "notFound")
			require.Equal(t, tc.transient, transient, "transient")
		})
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, transient := classifyS3(cancelled, errors.New("context canceled"))
	require.False(t, transient, "a cancelled job does not retry")
}

func TestStoreFailWraps(t *testing.T) {
	s := &s3Store{bucket: "b"}
	err := s.fail(context.Background(), "get", "k", minio.ErrorResponse{Code: "NoSuchKey", StatusCode: 404})
	require.ErrorIs(t, err, errObjectNotFound)
	require.False(t, isTransient(err))

	err = s.fail(context.Background(), "put", "k", minio.ErrorResponse{Code: "InternalError", StatusCode: 500})
	require.True(t, isTransient(err))
	var se *storeError
	require.ErrorAs(t, err, &se)
	require.Contains(t, err.Error(), "s3 put k (transient)")
}

func TestRetryPolicyStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	p := retryPolicy{delays: testDelays, sleep: func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}}
	err := p.do(ctx, discardLogger(), "op", func(context.Context) error {
		attempts++
		return &storeError{transient: true, err: errors.New("reset")}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, attempts)
}
