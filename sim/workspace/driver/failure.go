package driver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultCrashLoop is how many children of a run may fail the same way in
// a row before the run stops (Options.CrashLoop).
const DefaultCrashLoop = 3

// ErrCrashLoop marks a run stopped because its children kept failing the
// same way: at start-up, or at the same message. Every later request of
// the run fails at once with an error wrapping it, without a child.
var ErrCrashLoop = errors.New("driver: crash loop")

// failure is one kind of protocol failure of a run: the report of its
// first occurrence and every child it happened to.
type failure struct {
	kind   string
	report string
	labels []string
}

// addFailure records child s's protocol failure pe (tail: the end of its
// standard error). The same kind of failure K times in a row (Options.
// CrashLoop) stops the run: the loop's report replaces the kind's, later
// requests fail at once, and a run under Check is cancelled.
func (r *run) addFailure(s *session, pe *ProtocolError, tail string) {
	kind := failureKind(pe)
	report := pe.Error()
	if tail != "" {
		report += "\n  its standard error ends:\n    " + indentLines(tail, "    ")
	}
	r.sys.mu.Lock()
	defer r.sys.mu.Unlock()
	var f *failure
	for _, g := range r.failures {
		if g.kind == kind {
			f = g
			break
		}
	}
	if f == nil {
		f = &failure{kind: kind, report: report}
		r.failures = append(r.failures, f)
	}
	f.labels = append(f.labels, s.label)
	if kind == r.lastKind {
		r.streak = append(r.streak, s.label)
	} else {
		r.lastKind, r.streak = kind, []string{s.label}
	}
	k := r.sys.opts.CrashLoop
	if k <= 0 || len(r.streak) < k || r.loop != nil {
		return
	}
	cmd, sent := s.reproduce()
	r.loop = &crashLoop{kind: kind, labels: r.streak, report: report, reproduce: cmd, sent: sent,
		at: s.deps.Clock.Now(), child: s.label, command: commandString(r.sys.opts.Command)}
	if r.sys.loop == nil {
		r.sys.loop = r.loop
	}
	if r.sys.cancel != nil {
		r.sys.cancel()
	}
}

// failureKind is what makes two failures the same: the error without the
// child's label and without the message it was about (which holds times
// and ids).
func failureKind(pe *ProtocolError) string {
	kind := pe.Err.Error()
	var bm *badMessageError
	if errors.As(pe.Err, &bm) {
		kind = strings.TrimSuffix(kind, " in "+bm.line)
	}
	return kind
}

// crashLoop is the report of a run stopped by a crash loop.
type crashLoop struct {
	kind      string
	labels    []string
	report    string
	reproduce string
	sent      int
	at        time.Time
	child     string
	command   string
}

func (l *crashLoop) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d children in a row failed the same way (%s); the run stops at %s of virtual time instead of restarting it again:\n  %s",
		ErrCrashLoop, len(l.labels), strings.Join(l.labels, ", "), l.at.UTC().Format(time.RFC3339Nano), indentLines(l.report, "  "))
	switch {
	case l.reproduce != "":
		fmt.Fprintf(&b, "\n  reproduce it without converge: give the child what the harness gave %s (%s):\n    %s",
			l.child, plural(l.sent, "message"), l.reproduce)
	default:
		fmt.Fprintf(&b, "\n  the harness had sent %s %s before it failed: rerun the seed to reproduce it", l.child, plural(l.sent, "message"))
	}
	return b.String()
}

func indentLines(s, prefix string) string { return strings.ReplaceAll(s, "\n", "\n"+prefix) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// stopped is the error every request of a run stopped by a crash loop
// fails with (nil while it runs).
func (r *run) stopped() error {
	r.sys.mu.Lock()
	defer r.sys.mu.Unlock()
	if r.loop == nil {
		return nil
	}
	return fmt.Errorf("%w: the run was stopped after %d children in a row failed the same way", ErrCrashLoop, len(r.loop.labels))
}

// reports renders the run's failures: each kind once, in the order they
// first happened, with how many children it happened to; a crash loop's
// report first. s.mu is held.
func (r *run) reports() []string {
	var out []string
	if r.loop != nil {
		out = append(out, r.loop.String())
	}
	for _, f := range r.failures {
		if r.loop != nil && f.kind == r.loop.kind {
			continue
		}
		report := f.report
		if n := len(f.labels); n > 1 {
			report += fmt.Sprintf("\n  the same failure happened to %d children: %s", n, strings.Join(f.labels, ", "))
		}
		out = append(out, report)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// firstFailure is the report of the run's first protocol failure (the
// crash loop's, with its reproduction, when it is of that kind), or "".
func (s *System) firstFailure() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || len(s.cur.failures) == 0 {
		return ""
	}
	f := s.cur.failures[0]
	if l := s.cur.loop; l != nil && l.kind == f.kind {
		return l.String()
	}
	return f.report
}
