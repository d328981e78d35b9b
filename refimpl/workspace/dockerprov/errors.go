package dockerprov

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts"
)

// CodeStorageJobFailed is the code of a storage job that failed without an
// error code of its own: it exited 1 (FAILED) or 2 (USAGE), was killed, or
// ran past its timeout. contracts.Classify reads an unknown code as a
// retried ActionFailed, which is what such a failure is.
const CodeStorageJobFailed contracts.ErrorCode = "STORAGE_JOB_FAILED"

// timeoutError is the cause of a context this package cancels when one of
// its own time limits (startup, health, job) runs out. Whatever step was
// under way, the failure is reported with the limit's code: a create that
// ran out of startup time is CONTAINER_START_FAILED (retried), not
// CONTAINER_CREATE_FAILED (terminal).
type timeoutError struct {
	what  string
	limit time.Duration
	code  contracts.ErrorCode
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s timed out after %v", e.what, e.limit)
}

// withTimeout derives a context that ends after d with a timeoutError as
// its cause; code is the error code of running out of time.
func withTimeout(ctx context.Context, code contracts.ErrorCode, what string, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, &timeoutError{what: what, limit: d, code: code})
}

// ownTimeout returns the timeoutError that ended ctx, or nil when ctx is
// alive or was ended by the caller.
func ownTimeout(ctx context.Context) *timeoutError {
	if ctx.Err() == nil {
		return nil
	}
	var te *timeoutError
	if errors.As(context.Cause(ctx), &te) {
		return te
	}
	return nil
}

// isUnreachable reports whether err says the daemon did not answer (as
// opposed to answering with an error).
func isUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if client.IsErrConnectionFailed(err) || cerrdefs.IsUnavailable(err) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue)
}

// providerErr builds a ProviderError with a context object.
func providerErr(code contracts.ErrorCode, ctxInfo map[string]any, format string, args ...any) *contracts.ProviderError {
	pe := contracts.NewProviderError(code, format, args...)
	pe.Context = ctxInfo
	return pe
}

// unreachableErr is DOCKER_UNREACHABLE (SPEC 1.5's context shape).
func unreachableErr(format string, args ...any) *contracts.ProviderError {
	return providerErr(contracts.CodeDockerUnreachable, map[string]any{"endpoint": "docker"}, format, args...)
}

// fail turns the error of a Docker call made under ctx into a
// ProviderError: one of this package's time limits running out is the
// limit's code (with the limit in its context), a daemon that did not answer or a caller
// that gave up is DOCKER_UNREACHABLE, and any other refusal is code.
func fail(ctx context.Context, code contracts.ErrorCode, err error, format string, args ...any) *contracts.ProviderError {
	what := fmt.Sprintf(format, args...)
	if te := ownTimeout(ctx); te != nil {
		return providerErr(te.code, map[string]any{"timeout_seconds": te.limit.Seconds()}, "%s: %v", what, te)
	}
	if isUnreachable(err) || ctx.Err() != nil {
		return unreachableErr("%s: %v", what, err)
	}
	return providerErr(code, nil, "%s: %v", what, err)
}

// jobError maps a storage job's exit status and standard output to its
// error (nil for status 0). The status decides the code
// (archive.CodeOfExit); the job prints the code as its last line and a
// one-line "error: …" message before it, which becomes the message.
func jobError(mode, key string, status int, stdout string, codeOfExit func(int) (contracts.ErrorCode, bool)) *contracts.ProviderError {
	if status == 0 {
		return nil
	}
	lines := outputLines(stdout)
	last := ""
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	detail := last
	for i := len(lines) - 1; i >= 0; i-- {
		if m, ok := strings.CutPrefix(lines[i], "error: "); ok {
			detail = m
			break
		}
	}
	if detail == "" {
		detail = "no output"
	}
	code, ok := codeOfExit(status)
	if !ok {
		code = CodeStorageJobFailed
	}
	info := map[string]any{"action": mode, "exit_code": status, "last_line": last}
	if reason, _ := contracts.Classify(code); reason == contracts.ReasonDataLost {
		info = map[string]any{"archive_key": key, "detail": detail, "exit_code": status}
	}
	return providerErr(code, info, "storage job %s of %s exited with status %d: %s", mode, key, status, detail)
}

// outputLines splits output into its non-empty lines, trimmed.
func outputLines(out string) []string {
	var lines []string
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
