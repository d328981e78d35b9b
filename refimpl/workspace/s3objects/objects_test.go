package s3objects_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/s3objects"
)

// TestMinIO runs everything against one MinIO container, a fresh bucket
// per test.
func TestMinIO(t *testing.T) {
	endpoint, access, secret := testenv.MinIO(t)
	waitReady(t, endpoint, access, secret)
	n := 0
	fresh := func(t *testing.T) *s3objects.Objects {
		t.Helper()
		n++
		x, err := s3objects.New(t.Context(), endpoint, access, secret, fmt.Sprintf("contract-%d", n), false)
		require.NoError(t, err)
		return x
	}

	t.Run("Contract", func(t *testing.T) {
		contracttest.Objects(t, func(t *testing.T) ports.Objects { return fresh(t) })
	})

	t.Run("NewKeepsAnExistingBucket", func(t *testing.T) {
		x := fresh(t)
		ctx := t.Context()
		require.NoError(t, x.Put(ctx, "k", []byte("v")))
		again, err := s3objects.New(ctx, endpoint, access, secret, x.Bucket(), false)
		require.NoError(t, err)
		got, err := again.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v", string(got))
	})

	t.Run("WrongCredentialsAreNotUnavailable", func(t *testing.T) {
		_, err := s3objects.New(t.Context(), endpoint, access, "wrong-secret", "contract-denied", false,
			s3objects.WithMaxRetries(1))
		require.Error(t, err)
		require.NotErrorIs(t, err, contracts.ErrUnavailable, "an answer of the server is not an outage")
		require.NotErrorIs(t, err, contracts.ErrNotFound)
	})
}

func TestUnreachableEndpointIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = s3objects.New(ctx, addr, "a", "b", "bucket", false, s3objects.WithMaxRetries(1), s3objects.WithRegion("us-east-1"))
	require.ErrorIs(t, err, contracts.ErrUnavailable)
}

// waitReady waits until MinIO serves requests: its liveness check, which
// testenv waits for, passes before the object layer is up ("Server not
// initialized yet").
func waitReady(t *testing.T, endpoint, access, secret string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s3objects.New(t.Context(), endpoint, access, secret, "contract-ready", false, s3objects.WithMaxRetries(1))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinIO not ready within 30 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
