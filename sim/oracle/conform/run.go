package conform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
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
	// AdmitUnverified is the diagnostic mode: the chain admits the
	// daemon's txs that fail only the message and signature checks
	// (chain.Params.AdmitUnverified), so that what the daemon does after
	// admission is exercised. Such a run is no conformance claim: its
	// Result says so (Diagnostic) and never passes.
	AdmitUnverified bool
	// Allow names the checkers that may stay unexercised without the
	// claim failing (nil: the script's Unreached; empty: none).
	Allow []string
	Log   *slog.Logger
}

// workerTimeout is the config's worker.timeout_sec: T_sd = 15 s.
const workerTimeout = 5

// shutdownWait is how long a stop waits for the exit: T_sd and 5 s more;
// then the harness kills the daemon.
const shutdownWait = workerTimeout*time.Second + 10*time.Second + 5*time.Second

// downtime is how long a crashed daemon stays down before its restart.
const downtime = time.Second

// Result is a judged run.
type Result struct {
	Report *judge.Report
	// Claim is the run's verdict against every checker's obligation
	// (MinExercised), under Allowed; Why says why the script cannot reach
	// each checker it declares (Script.Unreached).
	Claim    *judge.Claim
	Why      map[string]string
	Coverage map[string]map[string]int
	Events   []history.Event
	Genesis  time.Time
	Self     string
	// Problems are the harness's own findings about the daemon that no
	// checker covers (a wrong provider address).
	Problems []string
	// Output is the last lines the daemon wrote, per lifetime; Lifetimes
	// the files that keep each lifetime's output whole, and how it ended.
	Output    [][]string
	Lifetimes []Lifetime
	// Command is the first lifetime's command line, as launched;
	// ConfigPath and KeyFiles what the harness wrote for the daemon.
	Command    []string
	ConfigPath string
	KeyFiles   []string
	// Diagnostic: the run admitted what the chain would have rejected
	// (Options.AdmitUnverified); Waived is what it let in.
	Diagnostic bool
	Waived     []chain.WaiverCount
	// Summary is what happened, counted from the records.
	Summary Summary
	// SandboxRemoved is set by a caller that removes the sandbox after
	// the report: the report then does not name the output files.
	SandboxRemoved bool
	Duration       time.Duration
	// Unmet lists the script's waits the daemon did not satisfy in time
	// (the run went on without them; what they were for may then be "not
	// exercised").
	Unmet []string
	// QuietFrom is when the quiet phase began (zero: the script had none).
	QuietFrom time.Time
	// Steps are the script's steps as they ran.
	Steps []StepRun
	// MaxStall is the longest the harness's own 10 ms timer fired late
	// during the run, and StallAt when (see Stalled).
	MaxStall time.Duration
	StallAt  time.Time
	// MaxWait is the longest the machine kept one of the daemon's threads
	// runnable without a CPU within a reading of the scheduler's
	// statistics (every 100 ms, Linux), and WaitAt when (see Starved).
	MaxWait time.Duration
	WaitAt  time.Time
}

// Stalled reports whether the machine kept the harness itself later than
// the checkers' timing tolerance at some point of the run: a timing
// verdict may then be the machine's, not the daemon's.
func (r *Result) Stalled() bool { return r.MaxStall > oraclejudge.TolBlackBox }

// Starved reports whether the machine kept one of the daemon's threads
// waiting for a CPU longer than the checkers' timing tolerance at some
// point of the run, while the harness may have kept time: a timing verdict
// may then be the machine's, not the daemon's.
func (r *Result) Starved() bool { return r.MaxWait > oraclejudge.TolBlackBox }

// StepRun is one step of a run: when it began (after the first launch's
// setup) and how long it took.
type StepRun struct {
	Name        string
	Start, Took time.Duration
	Unmet       bool
}

// Run judges the daemon of opts.Profile: it starts the world, provisions
// the sandbox, launches the daemon, drives the script, stops it and runs
// the checkers. An error is an infrastructure failure (the façade, the
// sandbox, a launch); a daemon that misbehaves is a report with
// violations.
func Run(ctx context.Context, opts Options) (*Result, error) {
	sc := opts.Script
	if len(sc.Steps) == 0 {
		sc = DefaultScript()
	}
	if sc.Period < time.Second || sc.PoolSize < 1 || sc.Limit <= 0 {
		return nil, fmt.Errorf("conform: script period %s, pool size %d, limit %s: at least 1 s, 1 and more than 0",
			sc.Period, sc.PoolSize, sc.Limit)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := keys.PrivKeyFromSeed(fmt.Sprintf("conform-sut-%d", opts.Seed))
	self := key.PubKey().Address()
	p := chain.DefaultParams()
	p.AdmitUnverified = opts.AdmitUnverified
	w, err := NewWorld(p, self, opts.Seed, log)
	if err != nil {
		return nil, err
	}
	r := &runner{w: w, opts: opts, key: key, reqs: requests(sc.Period), pool: sc.PoolSize, log: log}
	defer r.cleanup()
	for _, q := range r.reqs {
		if err := w.Register(q); err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
	}
	home := filepath.Join(opts.Dir, "home")
	cfg := oracle.DefaultConfig(home)
	cfg.Chain.Endpoint, cfg.Chain.ID = w.Facade.URL(), p.ChainID
	cfg.Worker.TimeoutSec, cfg.Worker.PoolSize = workerTimeout, sc.PoolSize
	if r.sb, err = Provision(ctx, home, cfg, key, opts.Profile); err != nil {
		return nil, err
	}
	// The registers commit in the next block; the daemon starts after.
	if err := sleep(ctx, 2*p.BlockInterval); err != nil {
		return nil, err
	}
	lagCtx, stopLag := context.WithCancel(ctx)
	lag := watchLag(lagCtx)
	defer func() { stopLag(); <-lag.done }()
	start := time.Now()
	limit := start.Add(sc.Limit)
	for _, st := range sc.Steps {
		r.deadline = time.Now().Add(st.Budget)
		if !st.final {
			if r.exited() {
				r.unmet = append(r.unmet, fmt.Sprintf("%s: skipped, the daemon had exited", st.Name))
				continue
			}
			if !time.Now().Before(limit) {
				r.unmet = append(r.unmet, fmt.Sprintf("%s: skipped, the script's limit of %s had passed", st.Name, sc.Limit))
				continue
			}
			r.deadline = earlier(r.deadline, limit)
		}
		log.Info("conform: step", "step", st.Name)
		began := time.Now()
		err := st.run(ctx, r)
		var u *unmet
		r.steps = append(r.steps, StepRun{Name: st.Name, Start: began.Sub(start), Took: time.Since(began), Unmet: errors.As(err, &u)})
		switch {
		case errors.As(err, &u):
			r.unmet = append(r.unmet, fmt.Sprintf("%s: %v", st.Name, err))
			log.Warn("conform: step unmet", "step", st.Name, "err", err)
		case err != nil:
			return nil, fmt.Errorf("conform: step %q: %w", st.Name, err)
		}
	}
	if r.proc != nil && !r.proc.Exited() {
		if err := r.stop(syscall.SIGKILL, 10*time.Second); err != nil {
			return nil, err
		}
	}
	// Frames and answers still in flight settle, then the world stops.
	_ = sleep(ctx, p.BlockInterval)
	r.cleanup()
	evs := w.Events()
	res := &Result{Events: evs, Genesis: w.Genesis(), Self: self, Output: r.outputs, Duration: time.Since(start),
		Unmet: r.unmet, QuietFrom: r.quietFrom, Steps: r.steps,
		ConfigPath: r.sb.ConfigPath, KeyFiles: r.sb.KeyFiles, Diagnostic: opts.AdmitUnverified, Waived: w.Chain.Waived()}
	res.Command, _ = r.sb.Argv(opts.Profile)
	for i, p := range r.procs {
		res.Lifetimes = append(res.Lifetimes, Lifetime{Life: i + 1, Stdout: p.Stdout, Stderr: p.Stderr})
	}

	res.MaxStall, res.StallAt = lag.worst()
	for _, p := range r.procs {
		if !p.Exited() {
			continue
		}
		if wait, at := p.starve.worst(); wait > res.MaxWait {
			res.MaxWait, res.WaitAt = wait, at
		}
	}
	res.Problems = checkProvider(evs, self)
	params := oraclejudge.Params{Self: self, PoolSize: cfg.Worker.PoolSize, BlockInterval: p.BlockInterval,
		Mode: oraclejudge.ModeBlackBox, External: true, WorkerTimeout: time.Duration(workerTimeout) * time.Second,
		GasLimit: cfg.Gas.Limit, GasAdjustment: cfg.Gas.Adjustment, GasPrices: cfg.Gas.Prices, MaxDelay: time.Duration(cfg.Retry.MaxDelaySec) * time.Second,
		MaxAttempts: cfg.Retry.MaxAttempts,
		QuietFrom:   r.quietFrom}
	st, err := oraclejudge.NewStream(params)
	if err != nil {
		return nil, err
	}
	for i := range evs {
		st.Step(&evs[i])
	}
	res.Report, res.Coverage = st.Finish(), st.Coverage()
	res.Claim, res.Why = claim(res.Report, allowList(opts, sc)), sc.Unreached
	res.Summary = summarize(res)
	return res, nil
}

// runner is a Run in progress: the world, the daemon's current lifetime
// and what the steps leave for the judging.
type runner struct {
	w    *World
	opts Options
	key  keys.PrivKey
	sb   *Sandbox
	reqs []Request
	pool int
	log  *slog.Logger

	proc     *Process
	life     int
	lifeFrom int // the first record of the current lifetime
	outputs  [][]string
	procs    []*Process // every lifetime's, for their CPU waits

	deadline      time.Time // the current step's
	quietFrom     time.Time
	sourceFailing bool
	unmet         []string
	steps         []StepRun
	closed        bool
}

// launch starts the next lifetime.
func (r *runner) launch() error {
	r.life++
	r.lifeFrom = r.w.watch.mark()
	p, err := launch(r.w, r.life, r.sb, r.opts.Profile)
	if err != nil {
		return err
	}
	r.proc = p
	r.procs = append(r.procs, p)
	return nil
}

// stop sends sig and waits up to wait for the exit (SIGKILL after that),
// keeping the lifetime's output. A daemon that already exited is left as
// it is.
func (r *runner) stop(sig syscall.Signal, wait time.Duration) error {
	p := r.proc
	if p == nil {
		return nil
	}
	if !p.Exited() {
		p.sendSignal(r.w, sig)
		if !p.wait(wait) && sig != syscall.SIGKILL {
			p.sendSignal(r.w, syscall.SIGKILL)
			p.wait(10 * time.Second)
		}
		if !p.Exited() {
			return fmt.Errorf("conform: the daemon did not die of SIGKILL")
		}
	}
	r.outputs = append(r.outputs, p.output.get())
	r.proc = nil
	return nil
}

// await waits, within what is left of the step's budget, until cond holds
// for a record from index from on. A daemon that exits meanwhile ends the
// wait: the step is then unmet.
func (r *runner) await(ctx context.Context, from int, what string, cond func(*history.Event) bool) error {
	life, exited := r.life, false
	budget := max(0, time.Until(r.deadline))
	_, err := r.w.watch.await(ctx, from, budget, what, func(e *history.Event) bool {
		if e.Proc != nil && e.Proc.Action == history.ProcExit && e.Life == life && r.proc != nil {
			exited = true
			return true
		}
		return cond(e)
	})
	if err == nil && exited {
		return &unmet{what: what + " (the daemon exited first)", budget: budget}
	}
	return err
}

// exited reports whether the current lifetime's process has ended.
func (r *runner) exited() bool { return r.proc != nil && r.proc.Exited() }

// inject queues F11 codes for request q's next broadcasts and records the
// fault.
func (r *runner) inject(q uint64, codes ...uint32) {
	for _, c := range codes {
		r.w.Fault("F11", history.FaultPoint, time.Time{}, history.Param{Key: "request", Value: strconv.FormatUint(q, 10)},
			history.Param{Key: "code", Value: strconv.FormatUint(uint64(c), 10)})
	}
	r.w.Inject(q, codes...)
}

// healSource ends the F8 of the fetch-failure step.
func (r *runner) healSource() error {
	if !r.sourceFailing {
		return nil
	}
	r.sourceFailing = false
	err := r.w.HealSource(reqFetch)
	r.w.Fault("F8", history.FaultEnd, time.Time{})
	return err
}

// admitted turns a moderator tx that was not admitted into an error.
func (r *runner) admitted(a chain.Admission, err error) (chain.Admission, error) {
	if err == nil && !a.Admitted() {
		err = fmt.Errorf("moderator tx not admitted: code %d %s", a.Code, a.Log)
	}
	return a, err
}

// cleanup kills a daemon still running and stops the world (once).
func (r *runner) cleanup() {
	if r.closed {
		return
	}
	if r.proc != nil && !r.proc.Exited() {
		r.proc.kill(r.w)
	}
	if r.w.Stalled() {
		r.w.Resume()
	}
	r.closed = true
	if err := r.w.Close(); err != nil {
		r.log.Warn("conform: close", "err", err)
	}
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

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
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
