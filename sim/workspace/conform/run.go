package conform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// Options configure a Run.
type Options struct {
	Config Config
	// Command is the implementation's command line (SplitCommand), run
	// once per instance with its placeholders substituted.
	Command []string
	// Dir keeps the evidence: each instance's log, the history, the
	// reports.
	Dir string
	// Services to run on (nil: StartServices, stopped at the end).
	Services *Services
	// Faults replaces the seeded schedule (--from-replay); Skipped lists
	// what of the replayed plan has no real counterpart.
	Faults  []Fault
	Skipped []string
	// Replay names the replayed file, for the report.
	Replay string
	// Progress receives one line per phase (nil: none).
	Progress io.Writer
	// Allow names the judged checkers whose obligation may stay unmet
	// (--allow-unexercised); nil: those the configuration cannot reach
	// (Config.Unreached).
	Allow []string
}

// stamped is an event the run recorded, with the wall time it happened.
type stamped struct {
	wall time.Time
	e    history.Event
}

type run struct {
	opts      Options
	cfg       Config
	sb        *sandbox
	pool      *pgxpool.Pool
	instances []*instance
	lock      *lockSampler
	users     *users
	origin    time.Time
	managed   string

	mu         sync.Mutex
	events     []stamped
	faultCount map[FaultKind]int
	problems   []string
	apiCalls   int
	statuses   map[int]int
	enders     map[int]func()
	nextEnder  int
	enderWG    sync.WaitGroup
	// engine follows the engine's events (nil when it could not:
	// engineErr says why).
	engine    *engineWatch
	engineErr error
	engineOwn int
	// armed are the object faults waiting for the tour's workspace to
	// come to rest in ARCHIVED (Fault.Archived).
	armed []Fault
}

type querier = *pgxpool.Conn

// vt maps a wall time onto the implementation's declared clock:
// origin + (wall − origin)·K.
func (r *run) vt(wall time.Time) time.Time {
	return r.origin.Add(time.Duration(float64(wall.Sub(r.origin)) * r.cfg.TimeScale)).UTC()
}

func (r *run) add(e history.Event) {
	now := time.Now()
	e.At = r.vt(now)
	r.mu.Lock()
	r.events = append(r.events, stamped{wall: now, e: e})
	r.mu.Unlock()
}

func (r *run) note(method, args string) {
	r.add(history.Event{Kind: history.KindNote, Method: method, Args: args})
}

func (r *run) problem(format string, args ...any) {
	r.mu.Lock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *run) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "conform: "+format+"\n", args...)
	}
}

// later runs end after d (a fault's length: the fault itself, not a
// wait for a condition), or at once when the quiet phase heals the world.
func (r *run) later(d time.Duration, end func()) {
	r.mu.Lock()
	id := r.nextEnder
	r.nextEnder++
	r.enders[id] = end
	r.mu.Unlock()
	r.enderWG.Add(1)
	go func() {
		defer r.enderWG.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		<-t.C
		r.runEnder(id)
	}()
}

func (r *run) runEnder(id int) {
	r.mu.Lock()
	end, ok := r.enders[id]
	delete(r.enders, id)
	r.mu.Unlock()
	if ok {
		end()
	}
}

// healAll ends every fault still in effect.
func (r *run) healAll() {
	r.mu.Lock()
	var ids []int
	for id := range r.enders {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	sort.Ints(ids)
	for _, id := range ids {
		r.runEnder(id)
	}
}

func (r *run) admin(ctx context.Context, fn func(q querier) error) error {
	c, err := r.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c)
}

func (r *run) rows(ctx context.Context) ([]contracts.Workspace, error) {
	return r.sb.store.List(ctx, contracts.FilterAll)
}

// Run performs one conformance run: services, instances, the fault phase
// with the workload, the quiet phase, the evidence, the verdict.
func Run(ctx context.Context, opts Options) (res *Result, err error) {
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(opts.Command) == 0 {
		return nil, errors.New("no command to run")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	r := &run{opts: opts, cfg: cfg, faultCount: map[FaultKind]int{}, statuses: map[int]int{}, enders: map[int]func(){}}
	r.users = newUsers(r)
	wallStart := time.Now()
	svc := opts.Services
	if svc == nil {
		r.progress("starting PostgreSQL, Redis and MinIO (the local images when there is no registry)")
		svc, err = StartServices(ctx)
		if err != nil {
			return nil, fmt.Errorf("start the services: %w (is a Docker engine running? bash images/build.sh builds the images)", err)
		}
		defer func() { _ = svc.Close(context.WithoutCancel(ctx)) }()
	}
	r.sb, err = newSandbox(ctx, svc, cfg.Instances)
	if err != nil {
		return nil, err
	}
	defer r.sb.close(context.WithoutCancel(ctx))
	r.managed = strings.ReplaceAll(r.sb.name, "_", "-")
	defer r.cleanupDocker(context.WithoutCancel(ctx))
	r.pool, err = pgxpool.New(ctx, r.sb.adminDSN)
	if err != nil {
		return nil, err
	}
	defer r.pool.Close()

	r.engine, r.engineErr = r.watchEngine(ctx)
	if r.engine != nil {
		defer r.engine.close()
	}

	r.origin = time.Now().UTC()
	for i := range cfg.Instances {
		px, err := newProxy("postgres", r.sb.pgAddr)
		if err != nil {
			return nil, err
		}
		defer px.Close()
		dsn, err := r.sb.instanceDSN(i, px)
		if err != nil {
			return nil, err
		}
		listen, err := freeAddr()
		if err != nil {
			return nil, err
		}
		env := map[string]string{
			EnvDatabaseURL: dsn, EnvRedisURL: "redis://" + r.sb.redisPx.Addr() + "/0",
			EnvS3Endpoint: "http://" + r.sb.s3Px.Addr(), EnvS3AccessKey: svc.S3Access, EnvS3SecretKey: svc.S3Secret,
			EnvS3Bucket: r.sb.bucket, EnvDockerHost: dockerHost(), EnvListen: listen,
			EnvTokens: cfg.TokensValue(), EnvTimeScale: strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64),
			EnvTimeOrigin: r.origin.Format(time.RFC3339Nano), EnvPerUser: strconv.Itoa(cfg.MaxRunningPerUser),
			EnvGlobal: strconv.Itoa(cfg.MaxRunningGlobal), EnvManaged: r.managed, EnvJobNetwork: "host", EnvImage: cfg.Image,
		}
		in, err := newInstance(i, opts.Command, env, opts.Dir)
		if err != nil {
			return nil, err
		}
		in.pg = px
		for _, kv := range cfg.Env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("env %q: want NAME=VALUE", kv)
			}
			if v, err = expand(v, env); err != nil {
				return nil, err
			}
			env[k] = v
		}
		r.instances = append(r.instances, in)
	}
	defer func() {
		for _, in := range r.instances {
			in.stop(10 * time.Second)
			_ = in.log.Close()
		}
	}()
	r.lock = newLockSampler(r)
	lockCtx, stopLock := context.WithCancel(ctx)
	lockDone := make(chan struct{})
	go func() { r.lock.run(lockCtx); close(lockDone) }()
	defer func() { stopLock(); <-lockDone }()

	r.progress("launching %d instances of %s (logs in %s)", cfg.Instances, opts.Command[0], opts.Dir)
	for _, in := range r.instances {
		if err := in.start(); err != nil {
			return nil, err
		}
	}
	for _, in := range r.instances {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.StartTimeout))
		err := in.waitHealthy(wctx, cfg.HealthPath)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if err := r.lock.waitHolder(ctx, time.Duration(cfg.StartTimeout)); err != nil {
		r.problem("no instance took the leader lock (SPEC 3.1, key 0x636f6e7665726765) within %s", time.Duration(cfg.StartTimeout))
	}

	faults := opts.Faults
	if faults == nil {
		var kinds []FaultKind
		for _, k := range cfg.Faults {
			kinds = append(kinds, FaultKind(k))
		}
		faults = GenerateFaults(cfg.Seed, kinds, time.Duration(cfg.FaultPhase))
	}
	r.progress("fault phase: %s, %d faults, %d workspaces", time.Duration(cfg.FaultPhase), len(faults), cfg.Workspaces)
	var timed []Fault
	for _, f := range faults {
		if f.Archived && (f.Kind == FaultObjectCorrupt || f.Kind == FaultObjectRemove) {
			r.arm(f)
			continue
		}
		timed = append(timed, f)
	}
	faultStart := time.Now()
	w := newWorkload(r)
	phaseCtx, endPhase := context.WithTimeout(ctx, time.Duration(cfg.FaultPhase))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.run(phaseCtx) }()
	go func() {
		defer wg.Done()
		for _, f := range timed {
			t := time.NewTimer(time.Until(faultStart.Add(f.At)))
			select {
			case <-phaseCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			r.progress("fault at %s: %s", f.At.Round(time.Millisecond), f)
			r.inject(ctx, f)
		}
	}()
	wg.Wait()
	endPhase()
	r.disarm()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// The quiet phase: every fault ends, dead instances come back, and
	// every workspace must converge.
	r.progress("quiet phase: faults healed; waiting up to %s for every workspace to converge", time.Duration(cfg.QuietPhase))
	r.healAll()
	r.enderWG.Wait()
	for _, in := range r.instances {
		if !in.running() {
			if err := in.start(); err != nil {
				r.problem("restart %s: %v", in.name, err)
			}
		}
	}
	quietWall := time.Now()
	r.add(history.Event{Kind: history.KindFault, Method: wsjudge.FQuiet, Result: wsjudge.ConvergeBound.String()})
	conv := r.waitConverged(ctx, quietWall, time.Duration(cfg.QuietPhase), cfg.convergeHold())
	endWall := time.Now()

	r.progress("stopping the instances; collecting the evidence")
	for _, in := range r.instances {
		in.stop(10 * time.Second)
	}
	stopLock()
	<-lockDone
	ev, err := r.collect(ctx)
	if err != nil {
		return nil, fmt.Errorf("collect the evidence: %w", err)
	}
	r.progress("reading the users' data in the volumes and archives")
	final, problems := r.final(ctx, ev.rows, r.vt(endWall))
	for _, p := range problems {
		r.problem("%s", p)
	}
	res = r.judge(ev, final, conv, faults, endWall)
	res.Wall = time.Since(wallStart)
	res.FaultPhaseWall = quietWall.Sub(faultStart)
	res.QuietWall = endWall.Sub(quietWall)
	res.Detections = r.detections(ev, faults, faultStart)
	if err := res.writeFiles(opts.Dir); err != nil {
		return res, err
	}
	return res, nil
}

// waitConverged polls the rows until every workspace is at rest
// (wsjudge.Converged) once the quiet phase has lasted hold (0: at once),
// or limit passes; it returns when each workspace was last seen come to
// rest after the quiet phase began.
func (r *run) waitConverged(ctx context.Context, from time.Time, limit, hold time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	deadline := from.Add(limit)
	held := from.Add(hold)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		rows, err := r.rows(ctx)
		all := err == nil
		for i := range rows {
			ok, _ := wsjudge.Converged(&rows[i])
			switch {
			case ok:
				if _, seen := out[rows[i].ID]; !seen {
					out[rows[i].ID] = time.Since(from)
				}
			default:
				delete(out, rows[i].ID)
				all = false
			}
		}
		if (all && !time.Now().Before(held)) || time.Now().After(deadline) || ctx.Err() != nil {
			return out
		}
		<-tick.C
	}
}

// cleanupDocker removes what the implementation left on the engine: the
// containers and volumes of every workspace of the run (SPEC 1.4 names)
// and anything carrying the run's managed label.
func (r *run) cleanupDocker(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var names []string
	if rows, err := r.rows(ctx); err == nil {
		for _, w := range rows {
			names = append(names, contracts.ContainerName(w.ID))
		}
	}
	if out, err := exec.CommandContext(ctx, "docker", "ps", "-aq", "--filter", "label=org.wsconverge.managed="+r.managed).Output(); err == nil {
		names = append(names, strings.Fields(string(out))...)
	}
	if len(names) > 0 {
		_ = exec.CommandContext(ctx, "docker", append([]string{"rm", "-f"}, names...)...).Run()
	}
	var vols []string
	if rows, err := r.rows(ctx); err == nil {
		for _, w := range rows {
			vols = append(vols, contracts.VolumeName(w.ID))
		}
	}
	if out, err := exec.CommandContext(ctx, "docker", "volume", "ls", "-q", "--filter", "label=org.wsconverge.managed="+r.managed).Output(); err == nil {
		vols = append(vols, strings.Fields(string(out))...)
	}
	if len(vols) > 0 {
		_ = exec.CommandContext(ctx, "docker", append([]string{"volume", "rm", "-f"}, vols...)...).Run()
	}
}

func dockerHost() string {
	if v := os.Getenv("DOCKER_HOST"); v != "" {
		return v
	}
	return defaultDockerHost
}

func readAllLimit(rd io.Reader, n int64) ([]byte, error) { return io.ReadAll(io.LimitReader(rd, n)) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func sortStrings(s []string) { sort.Strings(s) }

// evidencePath is where a run keeps a file.
func evidencePath(dir, name string) string { return filepath.Join(dir, name) }
