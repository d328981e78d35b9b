package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// SelfTestTimeout is the read timeout of a self-test (Options.Timeout
// when none is given): a healthy child answers in microseconds.
const SelfTestTimeout = 10 * time.Second

// SelfCheck is one check of SelfTest: what was checked, what was found,
// and the problem (nil when it passed).
type SelfCheck struct {
	What  string
	Found string
	Err   error
}

// SelfTest checks, in a few seconds, a child command meant for the
// driver protocol, in the order a newcomer meets the problems, and stops
// at the first problem: it starts and answers hello as a coordinator and
// as an API; a short run with one workspace and no faults (SelfTestRun)
// sends only valid messages — known types and methods, arguments that
// decode, enum values that exist — and breaks no checker; in it the child
// takes the leader lock, listens to the change feed, creates the
// workspace through the API, observes it, claims an operation, publishes
// its changes and brings it to its desired state; the same run again
// records the same history; and, when rows went as their changes
// (version 3), the same run with whole rows (version 2) records it too.
// each receives every check as it is done; ok reports whether all
// passed.
func SelfTest(ctx context.Context, opts Options, each func(SelfCheck)) (ok bool) {
	if opts.Timeout == 0 {
		opts.Timeout = SelfTestTimeout
	}
	check := func(c SelfCheck) bool {
		each(c)
		return c.Err == nil
	}
	for _, role := range []string{"coordinator", "API"} {
		if !check(selfHello(opts, role)) {
			return false
		}
	}
	sys, err := New(opts)
	if err != nil {
		return check(SelfCheck{What: "the command", Err: err})
	}
	defer sys.Close()
	cfg := SelfTestRun(sys)
	s, r, err := wssim.Execute(ctx, Judged(cfg))
	what := fmt.Sprintf("a run of %d workspace, %s and %s quiet, no faults: every message valid (types, methods, arguments, enum values)",
		cfg.Workspaces, cfg.Duration, cfg.Quiet)
	if first := sys.firstFailure(); first != "" {
		err = errors.New(first) // the child's own first failure
	} else if err == nil && len(r.Failures) > 0 {
		err = errors.New(r.Failures[0])
	}
	if !check(SelfCheck{What: what, Found: plural(sys.Messages(), "message"), Err: err}) {
		return false
	}
	for _, m := range milestones {
		found, err := m.find(s)
		if !check(SelfCheck{What: m.what, Found: found, Err: err}) {
			return false
		}
	}
	if r.Report != nil && len(r.Report.Violations) > 0 {
		v := r.Report.Violations[0]
		return check(SelfCheck{What: "every checker passes", Err: fmt.Errorf("%s\n%s", v, strings.Join(s.Evidence(v), "\n"))})
	}
	if !check(SelfCheck{What: "every checker passes"}) {
		return false
	}
	wake := "the harness took " + plural(sys.QuietSteps(), "quiet step") + " for it"
	if sys.QuietSteps() == 0 {
		wake = "it declares no wake-up: every step crosses the pipe (docs/driver-protocol.md, \"Wake-ups\")"
	}
	hash := r.Hash
	r2, err := wssim.Run(ctx, Judged(cfg))
	switch {
	case err != nil:
	case r2.Hash != hash:
		err = fmt.Errorf("the two runs recorded different histories (%.12s, %.12s): %s", hash, r2.Hash, sys.Divergence())
	case len(r2.Failures) > 0:
		err = errors.New(r2.Failures[0])
	}
	if !check(SelfCheck{What: "deterministic: the same run again records the same history", Found: wake, Err: err}) {
		return false
	}
	if sys.RowChanges() == 0 {
		return true // a child of version 2 or lower: no row went as changes, nothing to compare
	}
	return check(selfRowChanges(ctx, opts, sys.RowChanges(), hash))
}

// selfRowChanges checks that a child sent rows as their changes
// (version 3) reads them as the rows they stand for: the same run at
// version 2, where rows come whole, records the same history (hash).
func selfRowChanges(ctx context.Context, opts Options, changes int, hash string) SelfCheck {
	c := SelfCheck{What: "rows as their changes (version 3): the same run with whole rows (version 2) records the same history",
		Found: plural(changes, "row") + " went as changes"}
	opts.Protocol = 2
	sys, err := New(opts)
	if err != nil {
		c.Err = err
		return c
	}
	defer sys.Close()
	r, err := wssim.Run(ctx, Judged(SelfTestRun(sys)))
	switch {
	case err != nil:
		c.Err = err
	case len(r.Failures) > 0:
		c.Err = errors.New(r.Failures[0])
	case r.Hash != hash:
		c.Err = fmt.Errorf("with whole rows the run recorded another history (%.12s, %.12s): the child reads a row's changes otherwise than the row (docs/driver-protocol.md, section 3)", r.Hash, hash)
	}
	return c
}

// SelfTestRun is SelfTest's run: one workspace created in the first
// minute, 10 minutes without faults or deletions, a 5-minute quiet phase.
func SelfTestRun(sys ports.System) wssim.Config {
	return wssim.Config{Seed: 1, Workspaces: 1, Duration: 10 * time.Minute, Quiet: 5 * time.Minute, System: sys,
		Workload: wssim.Workload{CreateWindow: time.Minute, DeletesPerDay: -1}}
}

// selfHello starts the command as one role and reads its ready.
func selfHello(opts Options, role string) SelfCheck {
	c := SelfCheck{What: "starts and answers hello as " + map[string]string{"coordinator": "a coordinator", "API": "an API"}[role]}
	opts.CrashLoop = -1
	sys, err := New(opts)
	if err != nil {
		c.Err = err
		return c
	}
	defer sys.Close()
	clock := wsfakes.NewClock(wssim.DefaultStart)
	world := wsfakes.NewWorld(clock, history.NewRecorder())
	deps := world.Deps("coord-1")
	deps.Limits = contracts.DefaultLimits
	var sess *session
	if role == "API" {
		deps.Instance = "api"
		var a ports.API
		if a, c.Err = sys.NewAPI(deps); c.Err == nil {
			sess = a.(*api).idle[0]
		}
	} else {
		sys.beginRun()
		var co ports.Coordinator
		if co, c.Err = sys.NewCoordinator(deps); c.Err == nil {
			sess = co.(*coordinator).s
		}
	}
	if sess == nil {
		if fs := sys.Failures(); len(fs) > 0 {
			c.Err = errors.New(fs[0])
		}
		return c
	}
	c.Found = fmt.Sprintf("protocol version %d, name %q", sess.version, sess.name)
	if !sess.stderrOK {
		c.Found += ", no stderr_sync (its standard error is noted only when it exits)"
	}
	return c
}

// milestone is what a working coordinator and API do in SelfTestRun.
type milestone struct {
	what string
	// find looks for it in the run, and says what it found.
	find func(s *wssim.Sim) (string, error)
}

// first finds the first event of the run matching match.
func first(what string, match func(e *history.Event) bool) func(s *wssim.Sim) (string, error) {
	return func(s *wssim.Sim) (string, error) {
		for _, e := range s.History().Events() {
			if match(&e) {
				return "at " + history.Offset(e.At.Sub(s.Start())), nil
			}
		}
		return "", errors.New("never: " + what)
	}
}

var milestones = []milestone{
	{"takes the leader lock (leadership.try_acquire)", first("no coordinator took the lock", func(e *history.Event) bool {
		return e.Kind == history.KindLeader && e.Method == "acquire"
	})},
	{"listens to the change feed (feed.listen)", first("the leader never listened", func(e *history.Event) bool {
		return e.Kind == history.KindCall && e.Method == "feed.Listen" && e.Err == ""
	})},
	{"creates the workspace through the API (api create)", first("no create succeeded", func(e *history.Event) bool {
		return e.Kind == history.KindAPI && e.Method == "api.Create" && e.Err == ""
	})},
	{"observes it: a HealthMonitor pass (store.mark_observed)", first("no HealthMonitor pass was recorded", func(e *history.Event) bool {
		return e.Kind == history.KindNote && e.Method == history.NoteHealthPass
	})},
	{"claims an operation (store.update by the state_reconciler)", first("no operation was claimed", func(e *history.Event) bool {
		return e.Kind == history.KindWrite && e.Applied && e.Component == contracts.CompStateReconciler &&
			e.Patch != nil && e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone
	})},
	{"publishes its changes (bus.publish on workspace:{id})", first("nothing was published on workspace:{id}", func(e *history.Event) bool {
		return e.Kind == history.KindCall && e.Method == "bus.Publish" && strings.HasPrefix(e.Args, "workspace:") && e.Err == ""
	})},
	{"brings it to its desired state by the end", func(s *wssim.Sim) (string, error) {
		for _, w := range s.Snapshot() {
			if w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted {
				continue
			}
			if string(w.ObservedStatus) != string(w.DesiredState) || w.Operation != contracts.OpNone {
				return "", fmt.Errorf("workspace %s ends observed %s, desired %s, operation %s, health %s",
					w.ID, w.ObservedStatus, w.DesiredState, w.Operation, w.HealthStatus)
			}
			return "observed " + string(w.ObservedStatus), nil
		}
		return "", errors.New("no workspace at the end")
	}},
}
