package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/wsconverge/converge/contracts/archive"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := run(ctx, os.Args[1:], environ(os.Environ()), os.Stdout, os.Stderr)
	stop()
	os.Exit(status)
}

// environ turns "K=V" pairs into a map.
func environ(pairs []string) map[string]string {
	env := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// deps are the parts of a run that tests replace.
type deps struct {
	newStore func(config) (objectStore, error)
	retry    retryPolicy
}

var defaultDeps = deps{newStore: newS3Store, retry: defaultRetry}

// run is the whole job: it returns the process exit status.
func run(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, env, stdout, stderr, defaultDeps)
}

func runWith(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer, d deps) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := parseConfig(args, env)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\nUSAGE\n", err)
		return archive.ExitUsage
	}
	store, err := d.newStore(cfg)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\nUSAGE\n", err)
		return archive.ExitUsage
	}
	j := &job{cfg: cfg, store: store, retry: d.retry, log: log}
	log.Info("storage job starting", "mode", cfg.Mode, "archive", cfg.archiveURL(), "endpoint", cfg.Endpoint, "data_dir", cfg.DataDir)
	var summary string
	switch cfg.Mode {
	case modeArchive:
		summary, err = j.archive(ctx)
	case modeRestore:
		summary, err = j.restore(ctx)
	}
	if err != nil {
		code, ok := codeOf(err)
		token := string(code)
		status := archive.ExitCode(code)
		if !ok || ctx.Err() != nil {
			// No code of its own, or stopped from outside (SIGTERM): the
			// failure says nothing about S3 or the data.
			token, status = "FAILED", archive.ExitFailed
		}
		log.Error("storage job failed", "mode", cfg.Mode, "code", token, "err", err)
		fmt.Fprintf(stdout, "error: %s\n%s\n", oneLine(err.Error()), token)
		return status
	}
	log.Info("storage job done", "mode", cfg.Mode, "result", summary)
	fmt.Fprintln(stdout, summary)
	return archive.ExitOK
}

// oneLine keeps a message on one line, so the code stays the last line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
