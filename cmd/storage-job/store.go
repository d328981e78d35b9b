package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// objectStore is the little of S3 the job uses, on one bucket.
type objectStore interface {
	// Exists reports whether the object exists.
	Exists(ctx context.Context, key string) (bool, error)
	// Get writes the object's bytes to w; a missing object is
	// errObjectNotFound. An error of w is returned as it is.
	Get(ctx context.Context, key string, w io.Writer) error
	// Put stores size bytes read from r as the object.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
}

// errObjectNotFound: the object does not exist.
var errObjectNotFound = errors.New("object not found")

// storeError is a failed S3 call; transient ones are worth retrying.
type storeError struct {
	op, key   string
	transient bool
	err       error
}

func (e *storeError) Error() string {
	kind := "permanent"
	if e.transient {
		kind = "transient"
	}
	return fmt.Sprintf("s3 %s %s (%s): %v", e.op, e.key, kind, e.err)
}

func (e *storeError) Unwrap() error { return e.err }

// isTransient reports whether err is a store error worth retrying.
func isTransient(err error) bool {
	var se *storeError
	return errors.As(err, &se) && se.transient
}

// s3Store is objectStore on an S3 endpoint through minio-go. The client
// never retries by itself: the job's retry policy does.
type s3Store struct {
	client *minio.Client
	bucket string
}

func newS3Store(cfg config) (objectStore, error) {
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       cfg.Secure,
		Transport:    newTransport(cfg.Secure),
		Region:       "us-east-1", // skips the bucket-location lookup
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, fmt.Errorf("S3_ENDPOINT: client for %q: %w", cfg.Endpoint, err)
	}
	return &s3Store{client: client, bucket: cfg.Bucket}, nil
}

// newTransport bounds the phases of a request that can hang silently; the
// body transfer itself is bounded only by the job's own timeout.
func newTransport(secure bool) *http.Transport {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   8,
	}
	if secure {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return t
}

func (s *s3Store) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if notFound, _ := classifyS3(ctx, err); notFound {
		return false, nil
	}
	return false, s.fail(ctx, "stat", key, err)
}

func (s *s3Store) Get(ctx context.Context, key string, w io.Writer) error {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return s.fail(ctx, "get", key, err)
	}
	defer obj.Close()
	tw := &trackedWriter{w: w}
	if _, err := io.Copy(tw, obj); err != nil {
		if tw.err != nil && errors.Is(err, tw.err) {
			return err // a local write error, not S3's
		}
		return s.fail(ctx, "get", key, err)
	}
	return nil
}

func (s *s3Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return s.fail(ctx, "put", key, err)
	}
	return nil
}

func (s *s3Store) fail(ctx context.Context, op, key string, err error) error {
	notFound, transient := classifyS3(ctx, err)
	if notFound {
		return fmt.Errorf("s3 %s %s: %w", op, key, errObjectNotFound)
	}
	return &storeError{op: op, key: key, transient: transient, err: err}
}

// permanentS3Codes are answers that retrying cannot change.
var permanentS3Codes = map[string]bool{
	"AccessDenied":          true,
	"InvalidAccessKeyId":    true,
	"SignatureDoesNotMatch": true,
	"NoSuchBucket":          true,
	"InvalidBucketName":     true,
	"AllAccessDisabled":     true,
	"AccountProblem":        true,
	"InvalidArgument":       true,
	"EntityTooLarge":        true,
	"XMinioStorageFull":     true,
}

// classifyS3 sorts a minio-go error: a missing object, or a failure that is
// transient (network trouble, throttling, 5xx) or permanent (credentials,
// missing bucket, other 4xx). A cancelled job is never transient.
func classifyS3(ctx context.Context, err error) (notFound, transient bool) {
	if ctx.Err() != nil {
		return false, false
	}
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) {
		// No S3 answer at all: connection refused or reset, DNS, timeout.
		return false, true
	}
	switch {
	case resp.Code == "NoSuchKey":
		return true, false
	case permanentS3Codes[resp.Code]:
		return false, false
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusRequestTimeout:
		return false, true
	case resp.Code == "RequestTimeout", resp.Code == "SlowDown", resp.Code == "InternalError",
		resp.Code == "ServiceUnavailable", resp.Code == "Throttling", resp.Code == "RequestError":
		return false, true
	}
	return false, false
}

// trackedWriter remembers the error its writer returned.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}
