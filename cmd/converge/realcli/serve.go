package realcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"

	"github.com/wsconverge/converge/cmd/converge/cli"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/coordinator"
	"github.com/wsconverge/converge/refimpl/workspace/dockerprov"
	"github.com/wsconverge/converge/refimpl/workspace/httpapi"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/redisbus"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
	"github.com/wsconverge/converge/refimpl/workspace/s3objects"
)

// defaultDockerHost is the Docker engine used when DOCKER_HOST is unset.
const defaultDockerHost = "unix:///var/run/docker.sock"

// maxHeaderBytes bounds a request's headers (net/http's default is 1 MiB;
// the API's requests carry a token and a few short headers).
const maxHeaderBytes = 64 << 10

// s3Config locates the archive bucket.
type s3Config struct {
	endpoint, accessKey, secretKey, bucket string
}

// serveConfig is the serve command's validated configuration.
type serveConfig struct {
	listen          string
	instance        string
	fake            bool
	fakeFaults      []fakeFault
	dev             bool
	logFormat       string
	logLevel        slog.Level
	shutdownTimeout time.Duration
	// leaderIdleTimeout is the leader session's idle_session_timeout.
	leaderIdleTimeout time.Duration
	// timeScale is K and timeOrigin the wall time from which the clock
	// runs K times faster (zero: the start); see clockOf.
	timeScale  float64
	timeOrigin time.Time
	limits     contracts.Limits
	// maxStreamsPerUser, maxStreams and maxConnections bound the event
	// streams and the connections open at once.
	maxStreamsPerUser, maxStreams, maxConnections int

	databaseURL string
	redisURL    string
	s3          s3Config
	dockerHost  string
	// jobNetwork is the network storage-job containers run on, so that they
	// reach S3_ENDPOINT (CONVERGE_JOB_NETWORK: "", "host" or a network).
	jobNetwork string
	// managed is the value of the managed label on everything this
	// process's Docker provider creates and lists (CONVERGE_MANAGED_VALUE,
	// default "true"): separate control planes on one engine use their own.
	managed string
	// storageJobImage is the storage job's image; pullImages lets the
	// Docker provider pull an image that is not present locally.
	storageJobImage string
	pullImages      bool
	// restoreMaxBytes and restoreMaxEntries bound what one restore may
	// write (0: the storage job's defaults).
	restoreMaxBytes, restoreMaxEntries int64

	tokens map[string]string
	admins map[string]bool
}

// serveEnv is what the serve command runs against; tests replace parts.
type serveEnv struct {
	getenv   func(string) string
	hostname func() (string, error)
	// terminal reports whether stderr is a terminal (text logs in auto).
	terminal bool
	// backends picks the ports' builder for a configuration.
	backends func(serveConfig) backends
	// listening, if set, is told the API's address once it listens.
	listening func(addr string)
}

// chooseBackends is the production choice: fakes with --fake, else the
// real services.
func chooseBackends(cfg serveConfig) backends {
	if cfg.fake {
		return &fakeBackends{}
	}
	return realBackends{}
}

// bendStack, when set, bends the opened ports before anything runs on
// them. Only a binary built with the conformmutants tag sets it
// (serve_mutant.go): a catalogue mutant run as a process for `converge
// conform`'s demonstration. The shipped binary has no such switch.
var bendStack func(st *stack) error

func runServe(ctx context.Context, cfg serveConfig, stderr io.Writer, env serveEnv) int {
	base := newServeLogger(stderr, cfg, env.terminal)
	log := base.With("instance", cfg.instance)
	if cfg.fake {
		for _, s := range serveSettings {
			if s.realOnly && env.getenv(s.env) != "" {
				log.Warn("ignored with --fake", "variable", s.env)
			}
		}
	}
	b := env.backends(cfg)
	st, err := b.open(ctx, cfg, log)
	if err != nil {
		log.Error("cannot start", "backends", b.name(), "err", err)
		fmt.Fprintf(stderr, "converge serve: %v\n", err)
		return cli.ExitFailed
	}
	if bendStack != nil {
		if err := bendStack(st); err != nil {
			log.Error("cannot start", "err", err)
			fmt.Fprintf(stderr, "converge serve: %v\n", err)
			_ = st.close(context.WithoutCancel(ctx))
			return cli.ExitFailed
		}
	}
	code := serve(ctx, cfg, st, base, env)
	if st.removeWorkspaces != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), devRemoveTimeout)
		if err := st.removeWorkspaces(rctx); err != nil {
			label := dockerprov.DefaultLabelPrefix + "managed=" + cfg.managed
			log.Error("removing the workspaces of this --dev process failed; remove what is left with: "+
				"docker rm -f $(docker ps -aq --filter label="+label+"); docker volume rm $(docker volume ls -q --filter label="+label+")", "err", err)
		}
		cancel()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := st.close(cctx); err != nil {
		log.Warn("closing the backends failed", "err", err)
	}
	log.Info("stopped", "exit_code", code)
	return code
}

// serve runs the coordinator and the HTTP API on st until ctx is done or
// either fails, then shuts both down in order.
// base is the logger without the instance attribute, which the
// coordinator adds itself.
func serve(ctx context.Context, cfg serveConfig, st *stack, base *slog.Logger, env serveEnv) int {
	log := base.With("instance", cfg.instance)
	metrics := httpapi.NewMetrics()
	coordDeps := st.coord
	coordDeps.Store = metrics.InstrumentStore(coordDeps.Store)
	coord := coordinator.New(coordDeps, coordinator.Options{Logger: base.With("component", "coordinator")})

	var coordinatorDown atomic.Bool
	health := func(ctx context.Context) error {
		if coordinatorDown.Load() {
			return errors.New("the coordinator instance has stopped")
		}
		return st.health(ctx)
	}
	streamsDone := make(chan struct{})
	handler := httpapi.New(httpapi.Config{
		API:         api.New(st.api),
		Tokens:      cfg.tokens,
		Admins:      cfg.admins,
		Bus:         st.api.Bus,
		Clock:       st.clock,
		Logger:      log.With("component", "http"),
		Metrics:     metrics,
		Health:      health,
		StreamsDone: streamsDone,

		MaxStreamsPerUser: cfg.maxStreamsPerUser,
		MaxStreams:        cfg.maxStreams,
	})

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		log.Error("cannot listen (--listen / LISTEN_ADDR)", "addr", cfg.listen, "err", err)
		// The coordinator has not started: it holds no lock.
		return cli.ExitFailed
	}
	// Connections beyond the bound wait in the kernel's queue rather than
	// take a file descriptor each; net/http's own answers to requests it
	// cannot read are JSON like every other error.
	ln = httpapi.JSONErrors(netutil.LimitListener(ln, cfg.maxConnections))
	srv := newAPIServer(handler, log)

	// The runner outlives ctx: it is stopped after the HTTP server.
	runCtx, stopRunner := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRunner()
	runDone := make(chan error, 1)
	go func() {
		err := runner.Run(runCtx, coord, st.clock, runner.Config{Speedup: cfg.timeScale, OnStep: metrics.ObserveStep, Logger: log.With("component", "runner")})
		coordinatorDown.Store(true)
		runDone <- err
	}()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(ln) }()

	addr := ln.Addr().String()
	log.Info("serving", "addr", addr, "backends", st.name)
	if env.listening != nil {
		env.listening(addr)
	}

	code := cli.ExitOK
	runnerStopped := false
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case err := <-srvDone:
		log.Error("http server failed", "err", err)
		code = cli.ExitFailed
	case err := <-runDone:
		log.Error("coordinator stopped", "err", err)
		code, runnerStopped = cli.ExitFailed, true
	}

	// 1. HTTP: stop accepting, end the event streams, let requests finish.
	close(streamsDone)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownTimeout)
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("requests did not finish in time; closing their connections", "timeout", cfg.shutdownTimeout, "err", err)
		_ = srv.Close()
	}
	cancel()
	// 2. The coordinator: cancelling the runner closes it, which releases
	// the leader lock.
	stopRunner()
	if !runnerStopped {
		if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
			log.Error("coordinator stopped with an error", "err", err)
			code = cli.ExitFailed
		}
	}
	return code
}

// The bounds serve puts on each connection, besides --max-connections.
const (
	// readHeaderTimeout: a client has this long to send its headers.
	readHeaderTimeout = 10 * time.Second
	// readTimeout: ... and this long for the whole request, body included.
	readTimeout = 30 * time.Second
	// idleTimeout: a kept-alive connection waits this long for the next
	// request.
	idleTimeout = 2 * time.Minute
)

// newAPIServer is the HTTP server in front of handler, with serve's bounds
// on each connection: header bytes, the time to read a request, the time
// an idle connection is kept. No WriteTimeout: it would cut every event
// stream; the handler sets a write deadline on every other response (and
// on each event).
func newAPIServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// newServeLogger logs to w: JSON unless auto and w is a terminal.
func newServeLogger(w io.Writer, cfg serveConfig, terminal bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "text" || (cfg.logFormat == "auto" && terminal) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// ---- configuration ----

var (
	instancePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	bucketPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q: bad host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 0 to 65535", addr)
	}
	return nil
}

// checkURL checks a service URL's form without repeating it (it may hold a
// password).
func checkURL(raw string, schemes ...string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("not a URL (want %s://…)", schemes[0])
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return fmt.Errorf("scheme %q: want one of %s", u.Scheme, strings.Join(schemes, ", "))
	}
	if u.Scheme != "unix" && u.Scheme != "npipe" && u.Host == "" {
		return fmt.Errorf("no host in the %s URL", u.Scheme)
	}
	if (u.Scheme == "unix" || u.Scheme == "npipe") && u.Path == "" {
		return fmt.Errorf("no socket path in the %s URL", u.Scheme)
	}
	return nil
}

// checkDatabaseURL accepts a postgres:// URL or a keyword/value DSN
// ("host=… dbname=…"), as pgx does.
func checkDatabaseURL(raw string) error {
	if !strings.Contains(raw, "://") {
		if !strings.Contains(raw, "=") {
			return errors.New("want postgres://user:pass@host:5432/db or host=… dbname=…")
		}
		return nil
	}
	return checkURL(raw, "postgres", "postgresql")
}

func checkS3Endpoint(raw string) error {
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("want http(s)://host[:port] or host:port")
		}
		return nil
	}
	host, port, err := net.SplitHostPort(raw)
	if err != nil {
		host, port = raw, "443"
	}
	if host == "" || strings.ContainsAny(host, " /@") {
		return errors.New("want http(s)://host[:port] or host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("the port must be a number from 1 to 65535")
	}
	return nil
}

// ---- backends ----

// backends builds the ports one serve process runs on. The in-memory fakes
// and the real services are the two builders.
type backends interface {
	// name describes the backends for the logs.
	name() string
	// open connects to every service (or builds the fakes).
	open(ctx context.Context, cfg serveConfig, log *slog.Logger) (*stack, error)
}

// stack is an opened set of ports.
type stack struct {
	name string
	// coord is the coordinator instance's ports, with its own leadership
	// session; api is the API service layer's.
	coord, api ports.Deps
	clock      ports.Clock
	// health checks the services the process depends on (/healthz).
	health func(ctx context.Context) error
	// close releases connections; it runs after the coordinator has
	// released the leader lock.
	close func(ctx context.Context) error
	// removeWorkspaces, when set (serve --dev), removes the workspaces'
	// containers and volumes this process's provider manages; it runs
	// after the coordinator has stopped, before close.
	removeWorkspaces func(ctx context.Context) error
}

// devRemoveTimeout bounds the removal of serve --dev's workspaces on
// shutdown.
const devRemoveTimeout = time.Minute

// removeManaged removes every container and then every volume prov
// manages (its managed label), as serve --dev does on shutdown: the
// database that knew them stops with the process, so nothing would ever
// reconcile them again.
func removeManaged(ctx context.Context, prov *dockerprov.Provider, log *slog.Logger) error {
	ctrs, err := prov.List(ctx)
	if err != nil {
		return fmt.Errorf("list the workspaces' containers: %w", err)
	}
	var errs []error
	for _, c := range ctrs {
		if err := prov.Delete(ctx, c.WorkspaceID); err != nil {
			errs = append(errs, fmt.Errorf("remove container of %s: %w", c.WorkspaceID, err))
		}
	}
	vols, err := prov.ListVolumes(ctx)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list the workspaces' volumes: %w", err))...)
	}
	for _, id := range vols {
		if err := prov.DeleteVolume(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("remove volume of %s: %w", id, err))
		}
	}
	log.Info("removed the workspaces of this --dev process", "containers", len(ctrs), "volumes", len(vols))
	return errors.Join(errs...)
}

// probeHealth checks the store and the bus with one cheap read each.
func probeHealth(d ports.Deps) func(ctx context.Context) error {
	const none = "00000000-0000-0000-0000-000000000000"
	return func(ctx context.Context) error {
		if _, err := d.Store.Get(ctx, none); err != nil && !errors.Is(err, contracts.ErrNotFound) {
			return fmt.Errorf("store: %w", err)
		}
		if _, _, err := d.Bus.Get(ctx, "converge:health"); err != nil {
			return fmt.Errorf("bus: %w", err)
		}
		return nil
	}
}

// fakeBackends runs every port on the in-memory fakes of package fakes,
// with the real clock: a whole control plane in one process, for trying
// the API locally. Containers, volumes and archives are simulated and
// nothing survives the process. The world's history recorder keeps what
// it records (a long --fake run grows slowly).
type fakeBackends struct {
	// world is the fakes' world once opened (tests look at it).
	world *wsfakes.World
}

func (*fakeBackends) name() string { return "fakes" }

func (b *fakeBackends) open(_ context.Context, cfg serveConfig, _ *slog.Logger) (*stack, error) {
	base := clockOf(cfg)
	fc := wsfakes.NewClock(base.Now())
	b.world = wsfakes.NewWorld(fc, history.NewRecorder())
	if len(cfg.fakeFaults) > 0 {
		b.world.SetHook(injectFaults(cfg.fakeFaults))
	}
	clock := &wallClock{fc: fc, base: base}
	deps := func(name string) ports.Deps {
		d := b.world.Deps(name)
		d.Clock, d.IDs, d.Limits = clock, runner.IDs{}, cfg.limits
		return d
	}
	coord, apiDeps := deps(cfg.instance), deps(cfg.instance+"-api")
	return &stack{
		name:   b.name(),
		coord:  coord,
		api:    apiDeps,
		clock:  clock,
		health: probeHealth(apiDeps),
		close:  func(context.Context) error { return nil },
	}, nil
}

// wallClock is the real clock, in UTC, keeping the fakes' virtual clock in
// step with it so that the world (key expiry, updated_at) and the
// coordinator agree on the time.
type wallClock struct {
	mu   sync.Mutex
	fc   *wsfakes.Clock
	base ports.Clock
}

func (c *wallClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.base.Now(); now.After(c.fc.Now()) {
		c.fc.Set(now)
	}
	return c.fc.Now()
}

// clockOf is the process's clock: the wall clock, or with --time-scale K
// the clock origin + (wall − origin)·K that every port reads (the
// coordinator's periods, timeouts, retry delays and TTLs, the stamps it
// writes); the runner divides its sleeps by K.
func clockOf(cfg serveConfig) ports.Clock {
	if cfg.timeScale <= 1 {
		return runner.Clock{}
	}
	origin := cfg.timeOrigin
	if origin.IsZero() {
		origin = time.Now()
	}
	return runner.NewScaledClockAt(origin, cfg.timeScale)
}

// realBackends runs on PostgreSQL, Redis, S3 (MinIO) and Docker.
type realBackends struct{}

func (realBackends) name() string { return "real" }

// open connects to every service, naming the variable to check on failure,
// and closes what it already opened when a later one fails.
func (realBackends) open(ctx context.Context, cfg serveConfig, log *slog.Logger) (_ *stack, err error) {
	var closers []func()
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
		}
	}()
	clock := clockOf(cfg)
	store, err := pgstore.Open(ctx, cfg.databaseURL, clock, pgstore.WithLogger(log.With("component", "pgstore")),
		pgstore.WithIdleSessionTimeout(cfg.leaderIdleTimeout))
	if err != nil {
		return nil, fmt.Errorf("connect to DATABASE_URL: %w", err)
	}
	closers = append(closers, store.Close)
	if err := store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate the schema at DATABASE_URL: %w", err)
	}
	bus, err := redisbus.New(ctx, cfg.redisURL, redisbus.WithLogger(log.With("component", "redisbus")))
	if err != nil {
		return nil, fmt.Errorf("connect to REDIS_URL: %w", err)
	}
	closers = append(closers, func() { _ = bus.Close() })
	endpoint, secure := splitEndpoint(cfg.s3.endpoint)
	objects, err := s3objects.New(ctx, endpoint, cfg.s3.accessKey, cfg.s3.secretKey, cfg.s3.bucket, secure)
	if err != nil {
		return nil, fmt.Errorf("open the bucket S3_BUCKET at S3_ENDPOINT: %w", err)
	}
	prov, err := dockerprov.New(ctx, dockerprov.Config{
		DockerHost:        cfg.dockerHost,
		Logger:            log.With("component", "dockerprov"),
		JobNetwork:        cfg.jobNetwork,
		ManagedValue:      cfg.managed,
		StorageJobImage:   cfg.storageJobImage,
		PullMissingImages: cfg.pullImages,
		RestoreMaxBytes:   cfg.restoreMaxBytes,
		RestoreMaxEntries: cfg.restoreMaxEntries,
		S3: dockerprov.S3{Endpoint: endpoint, AccessKey: cfg.s3.accessKey, SecretKey: cfg.s3.secretKey,
			Bucket: cfg.s3.bucket, Secure: secure},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to the Docker engine (DOCKER_HOST): %w", err)
	}
	closers = append(closers, func() { _ = prov.Close() })
	base := ports.Deps{Store: store, Feed: store, Instances: prov, Storage: prov, Objects: objects,
		Bus: bus, Clock: clock, IDs: runner.IDs{}, Limits: cfg.limits}
	lead := store.Leadership()
	coord := base
	coord.Instance, coord.Leadership = cfg.instance, lead
	apiDeps := base
	apiDeps.Instance = cfg.instance + "-api"
	st := &stack{
		name: "real", coord: coord, api: apiDeps, clock: clock,
		health: probeHealth(apiDeps),
		close: func(ctx context.Context) error {
			_ = lead.Close(ctx)
			_ = prov.Close()
			_ = bus.Close()
			store.Close()
			return nil
		},
	}
	if cfg.dev {
		st.removeWorkspaces = func(ctx context.Context) error { return removeManaged(ctx, prov, log) }
	}
	return st, nil
}

// splitEndpoint turns S3_ENDPOINT (host:port or http(s)://host:port) into
// host:port and whether to use TLS.
func splitEndpoint(e string) (hostport string, secure bool) {
	switch {
	case strings.HasPrefix(e, "https://"):
		return strings.TrimSuffix(strings.TrimPrefix(e, "https://"), "/"), true
	case strings.HasPrefix(e, "http://"):
		return strings.TrimSuffix(strings.TrimPrefix(e, "http://"), "/"), false
	}
	return e, false
}

// injectFaults fails the calls serve --fake --fake-faults names: a call of
// a listed port method fails with its code, in the given share of calls.
// (Outside the simulator, so the wall clock's randomness is fine.)
func injectFaults(faults []fakeFault) wsfakes.Hook {
	return func(c wsfakes.Call) error {
		for _, f := range faults {
			if c.Port == f.port && c.Method == f.method && (f.percent >= 100 || rand.IntN(100) < f.percent) {
				return &contracts.ProviderError{Code: f.code, Message: "injected by --fake-faults on " + c.Port + "." + c.Method}
			}
		}
		return nil
	}
}
