package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// shutdownGrace bounds how long requests in flight may take after SIGTERM.
const shutdownGrace = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := run(ctx, os.Getenv, os.Stderr)
	stop()
	os.Exit(status)
}

// config is the agent's settings.
type config struct {
	Addr string
	Home string
}

func parseConfig(getenv func(string) string) (config, error) {
	cfg := config{Addr: ":8080", Home: "/home/coder"}
	if v := strings.TrimSpace(getenv("AGENT_ADDR")); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return config{}, fmt.Errorf("AGENT_ADDR: %q is not host:port: %w", v, err)
		}
		cfg.Addr = v
	}
	if v := strings.TrimSpace(getenv("HOME_DIR")); v != "" {
		if !filepath.IsAbs(v) {
			return config{}, fmt.Errorf("HOME_DIR: %q is not an absolute path", v)
		}
		cfg.Home = filepath.Clean(v)
	}
	return cfg, nil
}

// run serves until ctx ends; it returns the exit status.
func run(ctx context.Context, getenv func(string) string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := parseConfig(getenv)
	if err != nil {
		log.Error("bad settings", "err", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		log.Error("listen", "addr", cfg.Addr, "err", err)
		return 1
	}
	log.Info("workspace agent serving", "addr", ln.Addr().String(), "home", cfg.Home)
	if err := serve(ctx, ln, newAgent(cfg.Home, log), log); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("workspace agent stopped")
	return 0
}

// serve runs an HTTP server on ln until ctx ends, then shuts it down
// gracefully.
func serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
