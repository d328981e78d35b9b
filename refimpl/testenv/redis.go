package testenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
)

// Redis starts a Redis server for t and returns its URL
// (redis://host:port); the container is terminated when t ends. With
// CONVERGE_REDIS_URL set it returns that URL and starts nothing.
func Redis(t testing.TB) (redisURL string) {
	t.Helper()
	if v := os.Getenv(EnvRedisURL); v != "" {
		return v
	}
	needDocker(t, "redis")
	redisURL, ctr, err := startRedis(context.Background(), t)
	if ctr != nil {
		t.Cleanup(func() { terminate(t, ctr) })
	}
	if err != nil {
		t.Fatalf("start redis: %v", err)
	}
	return redisURL
}

// startRedis runs a Redis container and waits until it answers PING. t
// (nil outside tests) receives testcontainers' log.
func startRedis(ctx context.Context, t testing.TB) (string, testcontainers.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	image, note := imageFor(ctx, redisService)
	if note != "" && t != nil {
		t.Log(note)
	}
	// The module waits for "Ready to accept connections" and the port.
	// Protected mode would refuse clients coming through the mapped port
	// while the wait still passes.
	ctr, err := tcredis.Run(ctx, image,
		logger(t),
		labels(redisService),
		testcontainers.WithCmd("redis-server", "--protected-mode", "no"),
	)
	if ctr == nil {
		return "", nil, fmt.Errorf("run %s: %w", image, err)
	}
	if err != nil {
		return "", ctr, fmt.Errorf("run %s: %w", image, err)
	}
	redisURL, err := ctr.ConnectionString(ctx)
	if err != nil {
		return "", ctr, fmt.Errorf("redis connection string: %w", err)
	}
	if err := waitPong(ctx, redisURL); err != nil {
		return "", ctr, fmt.Errorf("redis (%s): %w", image, err)
	}
	return redisURL, ctr, nil
}

// waitPong retries a PING until the server answers PONG.
func waitPong(ctx context.Context, redisURL string) error {
	u, err := url.Parse(redisURL)
	if err != nil {
		return fmt.Errorf("parse redis URL: %w", err)
	}
	var last error
	for {
		if last = ping(ctx, u.Host); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis never answered PING: %w", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return fmt.Errorf("write PING: %w", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read PING reply: %w", err)
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
