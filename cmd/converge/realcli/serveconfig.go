package realcli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/cmd/converge/cli"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/dockerprov"
	"github.com/wsconverge/converge/refimpl/workspace/httpapi"
)

// setting is one entry of serve's configuration table: every value has a
// flag (unless it is a secret, which would show in ps), an environment
// variable it falls back to, a default and a description. The table is the
// one place a value is declared; the flags, the help text and the
// resolution (flag, else variable, else default) all come from it.
type setting struct {
	flag  string // "" for environment-only (secrets)
	env   string
	def   string
	usage string
	// boolean flags take no value.
	boolean bool
	// realOnly settings configure the real services (not --fake).
	realOnly bool
	// required: unless --fake for realOnly ones, always otherwise.
	required bool
}

// The names of serve's settings, for lookups.
const (
	sListen      = "LISTEN_ADDR"
	sInstance    = "CONVERGE_INSTANCE"
	sFake        = "CONVERGE_FAKE"
	sLogFormat   = "LOG_FORMAT"
	sLogLevel    = "LOG_LEVEL"
	sShutdown    = "SHUTDOWN_TIMEOUT"
	sPerUser     = "CONVERGE_MAX_RUNNING_PER_USER"
	sGlobal      = "CONVERGE_MAX_RUNNING_GLOBAL"
	sTokens      = "CONVERGE_TOKENS"
	sDatabaseURL = "DATABASE_URL"
	sRedisURL    = "REDIS_URL"
	sS3Endpoint  = "S3_ENDPOINT"
	sS3Access    = "S3_ACCESS_KEY"
	sS3Secret    = "S3_SECRET_KEY"
	sS3Bucket    = "S3_BUCKET"
	sDockerHost  = "DOCKER_HOST"
	sJobNetwork  = "CONVERGE_JOB_NETWORK"
	sManaged     = "CONVERGE_MANAGED_VALUE"
	sJobImage    = dockerprov.EnvStorageJobImage
	sPullImages  = "CONVERGE_PULL_IMAGES"
	sDev         = "CONVERGE_DEV"
	sRestoreMax  = "CONVERGE_RESTORE_MAX_BYTES"
	sRestoreN    = "CONVERGE_RESTORE_MAX_ENTRIES"
	sFakeFaults  = "CONVERGE_FAKE_FAULTS"
	sLeaderIdle  = "CONVERGE_LEADER_IDLE_TIMEOUT"
	sStreamsUser = "CONVERGE_MAX_STREAMS_PER_USER"
	sStreams     = "CONVERGE_MAX_STREAMS"
	sConns       = "CONVERGE_MAX_CONNECTIONS"
	sTimeScale   = "CONVERGE_TIME_SCALE"
	sTimeOrigin  = "CONVERGE_TIME_ORIGIN"
)

// maxTimeScale bounds --time-scale (as converge conform's time_scale).
const maxTimeScale = 1000

// defaultMaxConnections bounds the API's open connections: well above the
// streams' bound, so that streams never take the last connection /healthz
// needs, and below a usual descriptor limit.
const defaultMaxConnections = 4096

var serveSettings = []setting{
	{flag: "listen", env: sListen, def: "127.0.0.1:8080", usage: "API address (port 0 picks a free one)"},
	{flag: "instance", env: sInstance, def: "the host name", usage: "this coordinator instance's name, as leader-lock holder and in the logs"},
	{flag: "fake", env: sFake, def: "false", boolean: true, usage: "run every port on the in-memory fakes with the real clock (try the API locally; nothing persists)"},
	{flag: "fake-faults", env: sFakeFaults, usage: `with --fake, fail calls so ERROR and recovery can be tried: comma-separated PORT.METHOD=CODE[@PERCENT], e.g. "instances.Start=CONTAINER_START_FAILED@50"`},
	{flag: "dev", env: sDev, def: "false", boolean: true, usage: "start PostgreSQL, Redis and MinIO as containers (the local images when there is no registry), run on them, print the URLs and an admin token; they stop with the process, and the workspaces it started are removed"},
	{flag: "log-format", env: sLogFormat, def: "auto", usage: "auto, json or text (auto: JSON unless stderr is a terminal)"},
	{flag: "log-level", env: sLogLevel, def: "info", usage: "debug, info, warn or error"},
	{flag: "shutdown-timeout", env: sShutdown, def: "10s", usage: "how long requests may finish on SIGINT/SIGTERM"},
	{flag: "max-running-per-user", env: sPerUser, def: strconv.Itoa(contracts.DefaultLimits.MaxRunningPerUser), usage: "running workspaces one user may have (SPEC 4.3)"},
	{flag: "max-running-global", env: sGlobal, def: strconv.Itoa(contracts.DefaultLimits.MaxRunningGlobal), usage: "running workspaces in all"},
	{flag: "max-streams-per-user", env: sStreamsUser, def: strconv.Itoa(httpapi.DefaultMaxStreamsPerUser), usage: "event streams (GET …/events) one user may hold open; 429 beyond"},
	{flag: "max-streams", env: sStreams, def: strconv.Itoa(httpapi.DefaultMaxStreams), usage: "event streams open in all; 429 beyond"},
	{flag: "max-connections", env: sConns, def: strconv.Itoa(defaultMaxConnections), usage: "connections the API accepts at once (more wait to be accepted); must exceed --max-streams"},
	{env: sTokens, required: true, usage: "API bearer tokens: token=user, comma-separated; a user suffixed :admin may recover workspaces (tok1=alice,tok2=bob:admin); each token at least 16 characters"},
	{env: sDatabaseURL, realOnly: true, required: true, usage: "PostgreSQL: postgres://user:pass@host:5432/db"},
	{env: sRedisURL, realOnly: true, required: true, usage: "Redis: redis://host:6379/0 (or rediss://)"},
	{flag: "s3-endpoint", env: sS3Endpoint, realOnly: true, required: true, usage: "S3/MinIO endpoint: http(s)://host:port or host:port"},
	{env: sS3Access, realOnly: true, required: true, usage: "S3 access key"},
	{env: sS3Secret, realOnly: true, required: true, usage: "S3 secret key"},
	{flag: "s3-bucket", env: sS3Bucket, realOnly: true, required: true, usage: "archive bucket name"},
	{flag: "docker-host", env: sDockerHost, def: defaultDockerHost, realOnly: true, usage: "Docker engine"},
	{flag: "job-network", env: sJobNetwork, realOnly: true, usage: `network of storage-job containers, so they reach S3_ENDPOINT: "" (the default bridge), "host", or a network name`},
	{flag: "managed-value", env: sManaged, def: dockerprov.DefaultManagedValue, realOnly: true, usage: "value of the managed label on containers and volumes: one per control plane sharing an engine"},
	{flag: "storage-job-image", env: sJobImage, def: dockerprov.DefaultStorageJobImage, realOnly: true, usage: "image of the archive/restore job (images/build.sh builds it)"},
	{flag: "restore-max-bytes", env: sRestoreMax, def: "0", realOnly: true, usage: "the most bytes one restore may write (0: the storage job's default, 256 GiB, capped at the volume's free space)"},
	{flag: "restore-max-entries", env: sRestoreN, def: "0", realOnly: true, usage: "the most files and directories one restore may create (0: the storage job's default, 10 million)"},
	{flag: "leader-idle-timeout", env: sLeaderIdle, def: "1m", realOnly: true, usage: "PostgreSQL ends a leader session silent this long (idle_session_timeout), so a partitioned leader loses the lock; a held lock is checked every third of it (the partition drill measures 1.5 s failover with 1.5s)"},
	{flag: "time-scale", env: sTimeScale, def: "1", usage: "K: the coordinator's clock runs K times faster than the wall clock from --time-origin, and with it every period, timeout, retry delay, TTL and wait it keeps (a drill's compressed schedule, from 1 to 1000; the engine's own waits stay real)"},
	{flag: "time-origin", env: sTimeOrigin, usage: "the wall time (RFC 3339) from which the clock runs K times faster: origin + (wall − origin)·K (default: when the process starts)"},
	{flag: "pull-images", env: sPullImages, def: "false", boolean: true, realOnly: true, usage: "pull a workspace or job image that is not present locally (without it, a missing image fails the start with IMAGE_PULL_FAILED, retried, then ERROR)"},
}

// serveOptions holds the flag values of serve's table.
type serveOptions struct {
	values map[string]*string
	bools  map[string]*bool
	flags  *pflag.FlagSet
}

func (c *config) serveCommand() *cobra.Command {
	o := &serveOptions{values: map[string]*string{}, bools: map[string]*bool{}}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run a coordinator instance and the HTTP API",
		Long: `Runs one coordinator instance of the reference implementation (leader
election and the five components, on the production runner) and the HTTP
API (/api/v1, /healthz, /metrics) in one process. Several processes may run
against the same database: one leads, the others stand by and serve the API.

Every setting is a flag or an environment variable (a flag wins); secrets are
environment-only, so they never show in the process list:

` + settingsHelp() + `
On SIGINT or SIGTERM the API stops accepting requests, open event streams
end, requests in flight get --shutdown-timeout to finish, then the
coordinator stops and releases the leader lock.

Exit codes: 0 clean shutdown, 1 a runtime failure (a service unreachable at
start, the coordinator or the HTTP server failed), 2 invalid configuration.`,
		Example: `  CONVERGE_TOKENS=alice-0123456789abcdef=alice converge serve --fake
  converge serve --instance a --listen 127.0.0.1:8080   # with the variables above set`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, problems := o.resolve(c.serve.getenv, c.serve.hostname)
			if len(problems) > 0 {
				return usagef("invalid configuration: %s", strings.Join(problems, "; "))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			env := c.serve
			if cfg.dev {
				services, err := c.startDev(ctx, &cfg, o)
				if err != nil {
					return cli.Exit(cli.ExitFailed, err)
				}
				defer func() {
					fmt.Fprintln(c.stderr, "converge serve --dev: stopping PostgreSQL, Redis and MinIO")
					_ = services.Close(context.WithoutCancel(ctx))
				}()
				listening := env.listening
				env.listening = func(addr string) {
					c.devBanner(addr, &cfg, services)
					if listening != nil {
						listening(addr)
					}
				}
			}
			return exitWith(runServe(ctx, cfg, c.stderr, env))
		},
	}
	o.flags = cmd.Flags()
	for _, s := range serveSettings {
		if s.flag == "" {
			continue
		}
		usage := s.usage + " (env " + s.env + ")"
		if s.boolean {
			o.bools[s.env] = o.flags.Bool(s.flag, false, usage)
			continue
		}
		def := s.def
		if s.flag == "instance" {
			def = ""
		}
		o.values[s.env] = o.flags.String(s.flag, def, usage)
	}
	return cmd
}

// settingsHelp renders the table for --help.
func settingsHelp() string {
	var b strings.Builder
	for _, s := range serveSettings {
		name := s.env
		if s.flag != "" {
			name = "--" + s.flag + ", " + s.env
		}
		var notes []string
		if s.def != "" && s.def != "false" {
			notes = append(notes, "default "+s.def)
		}
		if s.required && s.realOnly {
			notes = append(notes, "required unless --fake")
		} else if s.required {
			notes = append(notes, "required")
		}
		extra := ""
		if len(notes) > 0 {
			extra = " [" + strings.Join(notes, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s\n      %s%s\n", name, s.usage, extra)
	}
	return b.String()
}

// lookup resolves one setting: the flag when given, else the environment,
// else the default; src names where it came from, to blame.
func (o *serveOptions) lookup(env string, getenv func(string) string) (value, src string) {
	for _, s := range serveSettings {
		if s.env != env {
			continue
		}
		if s.flag != "" && o.flags != nil && o.flags.Changed(s.flag) {
			if s.boolean {
				return strconv.FormatBool(*o.bools[env]), "--" + s.flag
			}
			return *o.values[env], "--" + s.flag
		}
		if v := getenv(env); v != "" {
			return v, env
		}
		if s.flag != "" {
			return s.def, "--" + s.flag + " / " + env
		}
		return s.def, env
	}
	panic("serve: no setting " + env)
}

// resolve reads every setting and validates it; problems name the flag or
// variable of each mistake and never repeat a secret.
func (o *serveOptions) resolve(getenv func(string) string, hostname func() (string, error)) (cfg serveConfig, problems []string) {
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	get := func(env string) (string, string) { return o.lookup(env, getenv) }
	boolean := func(env string) bool {
		v, src := get(env)
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad("%s: %q: want true or false", src, v)
		}
		return b
	}
	positive := func(env string) int {
		v, src := get(env)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			bad("%s: %q: want a whole number from 1 to 1000000", src, v)
		}
		return n
	}

	nonNegative := func(env string) int64 {
		v, src := get(env)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			bad("%s: %q: want a whole number, 0 or more", src, v)
		}
		return n
	}

	var src string
	cfg.fake = boolean(sFake)
	cfg.dev = boolean(sDev)
	if cfg.fake && cfg.dev {
		bad("--fake and --dev exclude each other: the fakes, or real services in containers")
	}
	if spec, src := get(sFakeFaults); spec != "" {
		if !cfg.fake {
			bad("%s: fault injection works on the fakes only (add --fake)", src)
		} else if faults, err := parseFakeFaults(spec); err != nil {
			bad("%s: %v", src, err)
		} else {
			cfg.fakeFaults = faults
		}
	}
	cfg.listen, src = get(sListen)
	if err := checkListen(cfg.listen); err != nil {
		bad("%s: %v", src, err)
	}
	cfg.instance, src = get(sInstance)
	if src != sInstance && !(o.flags != nil && o.flags.Changed("instance")) {
		cfg.instance = "converge"
		if h, err := hostname(); err == nil && instancePattern.MatchString(h) {
			cfg.instance = h
		}
	}
	if !instancePattern.MatchString(cfg.instance) {
		bad("%s: %q must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", src, cfg.instance)
	}
	cfg.logFormat, src = get(sLogFormat)
	switch cfg.logFormat {
	case "auto", "json", "text":
	default:
		bad("%s: %q: want auto, json or text", src, cfg.logFormat)
	}
	level, src := get(sLogLevel)
	if err := cfg.logLevel.UnmarshalText([]byte(level)); err != nil {
		bad("%s: %q: want debug, info, warn or error", src, level)
	}
	timeout, src := get(sShutdown)
	if d, err := time.ParseDuration(timeout); err != nil || d <= 0 {
		bad("%s: %q: want a positive duration such as 10s", src, timeout)
	} else {
		cfg.shutdownTimeout = d
	}
	cfg.limits = contracts.Limits{MaxRunningPerUser: positive(sPerUser), MaxRunningGlobal: positive(sGlobal)}
	cfg.maxStreamsPerUser, cfg.maxStreams, cfg.maxConnections = positive(sStreamsUser), positive(sStreams), positive(sConns)
	if cfg.maxConnections <= cfg.maxStreams {
		_, src := get(sConns)
		bad("%s: %d: must exceed the event streams' bound (%d), or streams could hold every connection", src, cfg.maxConnections, cfg.maxStreams)
	}
	idle, src := get(sLeaderIdle)
	if d, err := time.ParseDuration(idle); err != nil || d < 300*time.Millisecond {
		bad("%s: %q: want a duration of at least 300ms such as 1m", src, idle)
	} else {
		cfg.leaderIdleTimeout = d
	}

	cfg.timeScale, cfg.timeOrigin = timeScale(get, bad)

	switch spec, _ := get(sTokens); {
	case spec == "" && cfg.dev:
		// startDev makes an administrator's token up and prints it.
	case spec == "":
		bad("%s: required: the API's bearer tokens, e.g. tok1=alice,tok2=bob:admin", sTokens)
	default:
		tokens, admins, err := httpapi.ParseTokens(spec)
		if err != nil {
			bad("%s: %v", sTokens, err)
		}
		cfg.tokens, cfg.admins = tokens, admins
	}
	// Checked in every mode: --dev uses them too, and a bad value is bad
	// whatever the backends (with --fake they are ignored, with a warning).
	cfg.restoreMaxBytes = nonNegative(sRestoreMax)
	cfg.restoreMaxEntries = nonNegative(sRestoreN)
	if cfg.fake || cfg.dev {
		// --dev fills the services in once they run (startDev).
		return cfg, problems
	}
	required := func(env string) string {
		v, src := get(env)
		if v == "" {
			bad("%s: required unless --fake is given", src)
		}
		return v
	}
	if cfg.databaseURL = required(sDatabaseURL); cfg.databaseURL != "" {
		if err := checkDatabaseURL(cfg.databaseURL); err != nil {
			bad("%s: %v", sDatabaseURL, err)
		}
	}
	if cfg.redisURL = required(sRedisURL); cfg.redisURL != "" {
		if err := checkURL(cfg.redisURL, "redis", "rediss", "unix"); err != nil {
			bad("%s: %v", sRedisURL, err)
		}
	}
	if cfg.s3.endpoint = required(sS3Endpoint); cfg.s3.endpoint != "" {
		if err := checkS3Endpoint(cfg.s3.endpoint); err != nil {
			bad("%s: %v", sS3Endpoint, err)
		}
	}
	cfg.s3.accessKey = required(sS3Access)
	cfg.s3.secretKey = required(sS3Secret)
	if cfg.s3.bucket = required(sS3Bucket); cfg.s3.bucket != "" && (!bucketPattern.MatchString(cfg.s3.bucket) || strings.Contains(cfg.s3.bucket, "..")) {
		bad("%s: %q is not a bucket name (3 to 63 lowercase letters, digits, '.' or '-')", sS3Bucket, cfg.s3.bucket)
	}
	cfg.jobNetwork, _ = get(sJobNetwork)
	cfg.managed, _ = get(sManaged)
	cfg.storageJobImage, _ = get(sJobImage)
	cfg.pullImages = boolean(sPullImages)
	cfg.dockerHost, src = get(sDockerHost)
	if err := checkURL(cfg.dockerHost, "unix", "tcp", "ssh", "http", "https", "npipe"); err != nil {
		bad("%s: %v", src, err)
	}
	return cfg, problems
}

// fakeFault fails calls of one port method on the fakes (serve --fake).
type fakeFault struct {
	port, method string
	code         contracts.ErrorCode
	percent      int
}

// parseFakeFaults reads "PORT.METHOD=CODE[@PERCENT],…".
func parseFakeFaults(spec string) ([]fakeFault, error) {
	var out []fakeFault
	for _, part := range strings.Split(spec, ",") {
		target, code, ok := strings.Cut(strings.TrimSpace(part), "=")
		port, method, ok2 := strings.Cut(target, ".")
		if !ok || !ok2 || port == "" || method == "" {
			return nil, fmt.Errorf("%q: want PORT.METHOD=CODE[@PERCENT]", part)
		}
		f := fakeFault{port: port, method: method, percent: 100}
		if c, pct, has := strings.Cut(code, "@"); has {
			n, err := strconv.Atoi(pct)
			if err != nil || n < 1 || n > 100 {
				return nil, fmt.Errorf("%q: the percentage must be 1 to 100", part)
			}
			code, f.percent = c, n
		}
		f.code = contracts.ErrorCode(code)
		if !slices.Contains(contracts.AllErrorCodes, f.code) {
			return nil, fmt.Errorf("%q: unknown error code %q (SPEC 1.5's codes, e.g. CONTAINER_START_FAILED)", part, code)
		}
		if !slices.Contains([]string{"instances", "storage", "objects"}, port) {
			return nil, fmt.Errorf("%q: port %q: want instances, storage or objects", part, port)
		}
		out = append(out, f)
	}
	return out, nil
}

// devBucket is the archive bucket of serve --dev.
const devBucket = "converge-dev"

// startDev starts PostgreSQL, Redis and MinIO in containers and points cfg
// at them (serve --dev). Storage jobs run on the host's network so that
// they reach MinIO's published port; without CONVERGE_TOKENS an
// administrator's token is made up.
func (c *config) startDev(ctx context.Context, cfg *serveConfig, o *serveOptions) (*testenv.Services, error) {
	fmt.Fprintln(c.stderr, "converge serve --dev: starting PostgreSQL, Redis and MinIO (about 10 s; the images come from images/build.sh when there is no registry)…")
	s, err := testenv.StartServices(ctx)
	if err != nil {
		return nil, fmt.Errorf("--dev: %w (is a Docker engine running? run bash images/build.sh to build the local images)", err)
	}
	cfg.databaseURL, cfg.redisURL = s.DatabaseURL, s.RedisURL
	cfg.s3 = s3Config{endpoint: s.S3Endpoint, accessKey: s.S3AccessKey, secretKey: s.S3SecretKey, bucket: devBucket}
	cfg.jobNetwork = "host"
	// A managed value of this process's own: what it removes on shutdown
	// is what it started, never another dev session's on the same engine.
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	cfg.managed = "dev-" + hex.EncodeToString(id)
	cfg.dockerHost, _ = o.lookup(sDockerHost, c.serve.getenv)
	cfg.storageJobImage, _ = o.lookup(sJobImage, c.serve.getenv)
	cfg.pullImages, _ = strconv.ParseBool(firstNonEmpty(c.serve.getenv(sPullImages), "false"))
	if cfg.tokens == nil {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		tok := "dev-" + hex.EncodeToString(b)
		cfg.tokens, cfg.admins = map[string]string{tok: "dev"}, map[string]bool{"dev": true}
	}
	return s, nil
}

// devBanner prints where everything of serve --dev is, once the API
// listens.
func (c *config) devBanner(addr string, cfg *serveConfig, s *testenv.Services) {
	var tok string
	for t, u := range cfg.tokens {
		if cfg.admins[u] {
			tok = t
		}
	}
	w := c.stdout
	fmt.Fprintf(w, "converge serve --dev: the control plane runs on real services (they and the workspaces stop with this process)\n")
	fmt.Fprintf(w, "  API         http://%s/api/v1\n", addr)
	fmt.Fprintf(w, "  metrics     http://%s/metrics   health http://%s/healthz\n", addr, addr)
	fmt.Fprintf(w, "  PostgreSQL  %s\n", s.DatabaseURL)
	fmt.Fprintf(w, "  Redis       %s\n", s.RedisURL)
	fmt.Fprintf(w, "  MinIO       http://%s  bucket %s\n", s.S3Endpoint, devBucket)
	fmt.Fprintf(w, "  workspaces  containers and volumes labelled %s=%s, removed when this process stops\n", dockerprov.DefaultLabelPrefix+"managed", cfg.managed)
	if tok != "" {
		fmt.Fprintf(w, "  token       %s   (an administrator)\n", tok)
		fmt.Fprintf(w, "try:\n  curl -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \\\n", tok)
		fmt.Fprintf(w, "       -d '{\"name\":\"dev\",\"image_ref\":\"converge/workspace-agent:dev\"}' http://%s/api/v1/workspaces\n", addr)
	}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// timeScale reads --time-scale and --time-origin: K from 1 to
// maxTimeScale, and an RFC 3339 origin not in the future (zero: the
// process's start).
func timeScale(get func(string) (string, string), bad func(string, ...any)) (k float64, origin time.Time) {
	v, src := get(sTimeScale)
	k, err := strconv.ParseFloat(v, 64)
	if err != nil || !(k >= 1 && k <= maxTimeScale) {
		bad("%s: %q: want a number from 1 to %d", src, v, maxTimeScale)
		k = 1
	}
	if v, src := get(sTimeOrigin); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		switch {
		case err != nil:
			bad("%s: %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", src, v)
		case t.After(time.Now().Add(time.Minute)):
			bad("%s: %q: in the future", src, v)
		default:
			origin = t
		}
	}
	return k, origin
}
