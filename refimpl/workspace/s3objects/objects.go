package s3objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Objects is one bucket (ports.Objects). It is safe for concurrent use.
type Objects struct {
	client *minio.Client
	bucket string
}

var _ ports.Objects = (*Objects)(nil)

// Option configures New.
type Option func(*minio.Options)

// WithMaxRetries sets how many times minio-go tries a request (default
// minio-go's, 10; 1 disables retries).
func WithMaxRetries(n int) Option { return func(o *minio.Options) { o.MaxRetries = n } }

// WithRegion sets the bucket's region (default: asked of the server).
func WithRegion(r string) Option { return func(o *minio.Options) { o.Region = r } }

// New connects to the S3 endpoint (host:port) with static credentials and
// creates bucket when it is missing.
func New(ctx context.Context, endpoint, accessKey, secretKey, bucket string, secure bool, opts ...Option) (*Objects, error) {
	mo := &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Secure: secure}
	for _, opt := range opts {
		opt(mo)
	}
	client, err := minio.New(endpoint, mo)
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", endpoint, err)
	}
	x := &Objects{client: client, bucket: bucket}
	if err := x.ensureBucket(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

// Bucket is the bucket's name.
func (x *Objects) Bucket() string { return x.bucket }

func (x *Objects) ensureBucket(ctx context.Context) error {
	ok, err := x.client.BucketExists(ctx, x.bucket)
	if err != nil {
		return wrap("bucket exists", x.bucket, err)
	}
	if ok {
		return nil
	}
	err = x.client.MakeBucket(ctx, x.bucket, minio.MakeBucketOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != minio.BucketAlreadyOwnedByYou {
		return wrap("make bucket", x.bucket, err)
	}
	return nil
}

// Put stores data under key, replacing what was there (ports.Objects).
func (x *Objects) Put(ctx context.Context, key string, data []byte) error {
	_, err := x.client.PutObject(ctx, x.bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return wrap("put", key, err)
	}
	return nil
}

// Get returns key's data, or contracts.ErrNotFound (ports.Objects).
func (x *Objects) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := x.client.GetObject(ctx, x.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, wrap("get", key, err)
	}
	defer func() { _ = obj.Close() }()
	// GetObject is lazy: a missing key shows on the first read.
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, wrap("get", key, err)
	}
	return data, nil
}

// Head reports whether key exists (ports.Objects).
func (x *Objects) Head(ctx context.Context, key string) (bool, error) {
	_, err := x.client.StatObject(ctx, x.bucket, key, minio.StatObjectOptions{})
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, wrap("head", key, err)
}

// List returns every object under prefix, ordered by key (ports.Objects).
func (x *Objects) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine on an early return
	var out []ports.ObjectInfo
	for obj := range x.client.ListObjects(ctx, x.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, wrap("list", prefix, obj.Err)
		}
		out = append(out, ports.ObjectInfo{Key: obj.Key, Size: obj.Size})
	}
	// S3 lists in UTF-8 binary order already; sort in case a gateway
	// does not.
	slices.SortFunc(out, func(a, b ports.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Delete removes key; absent is success (ports.Objects).
func (x *Objects) Delete(ctx context.Context, key string) error {
	err := x.client.RemoveObject(ctx, x.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return wrap("delete", key, err)
	}
	return nil
}

func isNotFound(err error) bool {
	return minio.ToErrorResponse(err).Code == minio.NoSuchKey
}

// wrap names the operation and key of a failed call: a missing key is
// contracts.ErrNotFound, a failure without an answer of the server is
// contracts.ErrUnavailable.
func wrap(op, key string, err error) error {
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == minio.NoSuchKey:
		return fmt.Errorf("s3 %s %s: %w: %w", op, key, contracts.ErrNotFound, err)
	case resp.Code != "", errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("s3 %s %s: %w", op, key, err)
	}
	return fmt.Errorf("s3 %s %s: %w: %w", op, key, contracts.ErrUnavailable, err)
}
