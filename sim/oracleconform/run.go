package oracleconform

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wsconverge/converge/contracts/judge"
	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/abciquery"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/invariant"
	"github.com/wsconverge/converge/contracts/oracle/keys"
	"github.com/wsconverge/converge/fakes/chain"
)

// Options configure a Run.
type Options struct {
	Profile Profile
	// Dir is the sandbox's parent directory (the home is Dir/home).
	Dir string
	// Seed names the key, the moderator and the peers, and seeds the data
	// sources.
	Seed uint64
	// Script is the scenario (zero: DefaultScript).
	Script Script
	Log    *slog.Logger
}

// Script is a black-box scenario on the wall clock. Its times are after
// the first launch.
type Script struct {
	// Period is every request's period.
	Period time.Duration
	// Update, Drop, Kill, MempoolFull, Disable and Term are when each step
	// happens (0: skipped, except Term, which ends every run).
	Update      time.Duration // the moderator updates request 2 (same fields, a reason)
	Bogus       time.Duration // the moderator sends an update of request 1 carrying a nonce 5 ahead (D10)
	Drop        time.Duration // F1: the façade closes every WebSocket and refuses new ones for DropFor
	DropFor     time.Duration
	Kill        time.Duration // F17: SIGKILL, restart after Downtime
	Downtime    time.Duration
	MempoolFull time.Duration // F10: the mempool is full for FullFor
	FullFor     time.Duration
	Disable     time.Duration // the moderator disables request 2
	Term        time.Duration // SIGTERM; the run ends at the exit (SIGKILL after T_sd + 5 s)
}

// DefaultScript is the scenario of `converge oracle conform`: three
// requests (self at index 1 of two endpoints, self at index 0, and one
// self is not assigned to) with a 5 s period, an update, an update with a
// bogus nonce, a WebSocket drop,
// a crash and restart, a full mempool, a disable, and SIGTERM at 55 s.
func DefaultScript() Script {
	return Script{Period: 5 * time.Second, Update: 12 * time.Second, Bogus: 14 * time.Second, Drop: 16 * time.Second, DropFor: 2 * time.Second,
		Kill: 24 * time.Second, Downtime: 2 * time.Second, MempoolFull: 36 * time.Second, FullFor: 3 * time.Second,
		Disable: 44 * time.Second, Term: 55 * time.Second}
}

// ShortScript has the same requests, a crash and restart and SIGTERM at
// 25 s: enough for a broken daemon to show itself, in half the time.
func ShortScript() Script {
	return Script{Period: 5 * time.Second, Kill: 12 * time.Second, Downtime: 2 * time.Second, Term: 25 * time.Second}
}

// workerTimeout is the config's worker.timeout_sec: T_sd = 15 s.
const workerTimeout = 5

// Result is a judged run.
type Result struct {
	Report   *judge.Report
	Coverage map[string]map[string]int
	Events   []history.Event
	Genesis  time.Time
	Self     string
	// Problems are the harness's own findings about the daemon that no
	// checker covers (a wrong provider address).
	Problems []string
	// Output is the last lines the daemon wrote, per lifetime.
	Output   [][]string
	Duration time.Duration
}

// requests are the scenario's requests.
func requests(period time.Duration) []Request {
	return []Request{
		{ID: 1, Period: period, SelfIndex: 1, Endpoints: 2, Status: oracle.StatusEnabled},
		{ID: 2, Period: period, SelfIndex: 0, Endpoints: 1, Status: oracle.StatusEnabled},
		{ID: 3, Period: period, SelfIndex: -1, Endpoints: 1, Status: oracle.StatusEnabled},
	}
}

// Run judges the daemon of opts.Profile: it starts the world, provisions
// the sandbox, launches the daemon, drives the script, stops it and runs
// the checkers. An error is an infrastructure failure (the façade, the
// sandbox, a launch); a daemon that misbehaves is a report with
// violations.
func Run(ctx context.Context, opts Options) (*Result, error) {
	sc := opts.Script
	if sc.Term == 0 {
		sc = DefaultScript()
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := keys.PrivKeyFromSeed(fmt.Sprintf("conform-sut-%d", opts.Seed))
	self := key.PubKey().Address()
	p := chain.DefaultParams()
	w, err := NewWorld(p, self, opts.Seed, log)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = w.Close()
		}
	}()
	reqs := requests(sc.Period)
	for _, r := range reqs {
		if err := w.Register(r); err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
	}
	home := filepath.Join(opts.Dir, "home")
	cfg := oracle.DefaultConfig(home)
	cfg.Chain.Endpoint, cfg.Chain.ID = w.Facade.URL(), p.ChainID
	cfg.Worker.TimeoutSec = workerTimeout
	sb, err := Provision(ctx, home, cfg, key, opts.Profile)
	if err != nil {
		return nil, err
	}
	// The registers commit in the next block; the daemon starts after.
	if err := sleep(ctx, 2*p.BlockInterval); err != nil {
		return nil, err
	}
	start := time.Now()
	life := 1
	proc, err := launch(w, life, sb, opts.Profile)
	if err != nil {
		return nil, err
	}
	var outputs [][]string
	type step struct {
		at time.Duration
		do func() error
	}
	steps := []step{}
	if sc.Update > 0 {
		steps = append(steps, step{sc.Update, func() error { return w.Update(reqs[1], "conform: routine update") }})
	}
	if sc.Bogus > 0 {
		steps = append(steps, step{sc.Bogus, func() error {
			a, err := w.Chain.BogusNonceUpdate(1, w.Chain.Nonce(1)+5)
			if err == nil && !a.Admitted() {
				err = fmt.Errorf("conform: bogus-nonce update not admitted: code %d %s", a.Code, a.Log)
			}
			return err
		}})
	}
	if sc.Drop > 0 {
		steps = append(steps, step{sc.Drop, func() error {
			until := time.Now().Add(sc.DropFor)
			w.Fault("F1", history.FaultStart, until, history.Param{Key: "refuse", Value: sc.DropFor.String()})
			w.Facade.DropWS(true)
			return nil
		}}, step{sc.Drop + sc.DropFor, func() error {
			w.Facade.RefuseWS(false)
			w.Fault("F1", history.FaultEnd, time.Time{})
			return nil
		}})
	}
	if sc.Kill > 0 {
		steps = append(steps, step{sc.Kill, func() error {
			w.Fault("F17", history.FaultPoint, time.Time{})
			proc.sendSignal(w, syscall.SIGKILL)
			if !proc.wait(10 * time.Second) {
				return fmt.Errorf("conform: the daemon did not die of SIGKILL")
			}
			outputs = append(outputs, proc.output.get())
			return nil
		}}, step{sc.Kill + sc.Downtime, func() error {
			life++
			proc, err = launch(w, life, sb, opts.Profile)
			return err
		}})
	}
	if sc.MempoolFull > 0 {
		steps = append(steps, step{sc.MempoolFull, func() error {
			w.Fault("F10", history.FaultStart, time.Now().Add(sc.FullFor))
			w.Chain.SetMempoolFull(true)
			return nil
		}}, step{sc.MempoolFull + sc.FullFor, func() error {
			w.Chain.SetMempoolFull(false)
			w.Fault("F10", history.FaultEnd, time.Time{})
			return nil
		}})
	}
	if sc.Disable > 0 {
		steps = append(steps, step{sc.Disable, func() error {
			a, err := w.Chain.Disable(2, "conform: disabled")
			if err == nil && !a.Admitted() {
				err = fmt.Errorf("conform: disable not admitted: code %d %s", a.Code, a.Log)
			}
			return err
		}})
	}
	sortSteps(steps, func(s step) time.Duration { return s.at })
	for _, s := range steps {
		if s.at >= sc.Term {
			break
		}
		if err := sleep(ctx, time.Until(start.Add(s.at))); err != nil {
			proc.kill(w)
			return nil, err
		}
		if err := s.do(); err != nil {
			proc.kill(w)
			return nil, err
		}
	}
	if err := sleep(ctx, time.Until(start.Add(sc.Term))); err != nil {
		proc.kill(w)
		return nil, err
	}
	tsd := time.Duration(workerTimeout)*time.Second + 10*time.Second
	if !proc.Exited() {
		proc.sendSignal(w, syscall.SIGTERM)
		if !proc.wait(tsd + 5*time.Second) {
			proc.kill(w)
		}
	}
	outputs = append(outputs, proc.output.get())
	// Frames and answers still in flight settle, then the world stops.
	_ = sleep(ctx, p.BlockInterval)
	if err := w.Close(); err != nil {
		log.Warn("conform: close", "err", err)
	}
	closed = true
	evs := w.Events()
	res := &Result{Events: evs, Genesis: w.Genesis(), Self: self, Output: outputs, Duration: time.Since(start)}
	res.Problems = checkProvider(evs, self)
	params := invariant.Params{Self: self, PoolSize: cfg.Worker.PoolSize, BlockInterval: p.BlockInterval,
		Mode: invariant.ModeBlackBox, External: true, WorkerTimeout: time.Duration(workerTimeout) * time.Second,
		GasLimit: cfg.Gas.Limit, GasAdjustment: cfg.Gas.Adjustment, MaxDelay: time.Duration(cfg.Retry.MaxDelaySec) * time.Second}
	st, err := invariant.NewStream(params)
	if err != nil {
		return nil, err
	}
	for i := range evs {
		st.Step(&evs[i])
	}
	res.Report, res.Coverage = st.Finish(), st.Coverage()
	return res, nil
}

// checkProvider checks the first Account query against the provisioned
// key's address (§6.7): a daemon that signs as someone else was not set up
// by this run.
func checkProvider(evs []history.Event, self string) []string {
	for _, e := range evs {
		if e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == abciquery.PathAccount {
			if e.RPC.Query.Address != self {
				return []string{fmt.Sprintf("the first Account query asks for %s, not the provisioned key's address %s", e.RPC.Query.Address, self)}
			}
			return nil
		}
	}
	return []string{fmt.Sprintf("the daemon never queried its account %s", self)}
}

// kill ends the process at once (the harness's last resort).
func (p *Process) kill(w *World) {
	if p.Exited() {
		return
	}
	p.sendSignal(w, syscall.SIGKILL)
	p.wait(10 * time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("conform: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

func sortSteps[T any](s []T, key func(T) time.Duration) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && key(s[j]) < key(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
