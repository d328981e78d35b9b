package oracle

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// LogDir is where the daemon's log files go inside home.
const LogDir = "logs"

// openLog opens <home>/logs/oracled.<start time>.log (appending) and
// returns a logger writing text lines to it and, when stdout is not nil,
// to stdout too.
func openLog(home string, stdout io.Writer, level slog.Level, start time.Time) (*slog.Logger, string, io.Closer, error) {
	dir := filepath.Join(home, LogDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", nil, fmt.Errorf("logs: %w", err)
	}
	p := filepath.Join(dir, fmt.Sprintf("oracled.%s.log", start.UTC().Format("20060102T150405Z")))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, "", nil, fmt.Errorf("logs: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(f, opts)
	if stdout != nil {
		h = slog.NewMultiHandler(h, slog.NewTextHandler(stdout, opts))
	}
	return slog.New(h), p, f, nil
}
