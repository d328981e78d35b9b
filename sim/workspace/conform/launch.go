package conform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wsconverge/converge/sim/engine"
)

// The environment every instance gets (docs/conform.md). The names are
// those `converge serve` reads, so the reference runs as any other
// implementation would; an implementation configured otherwise maps them
// in a wrapper script, or takes the placeholders of Placeholders in its
// command line.
const (
	EnvDatabaseURL    = "DATABASE_URL"
	EnvRedisURL       = "REDIS_URL"
	EnvS3Endpoint     = "S3_ENDPOINT"
	EnvS3AccessKey    = "S3_ACCESS_KEY"
	EnvS3SecretKey    = "S3_SECRET_KEY"
	EnvS3Bucket       = "S3_BUCKET"
	EnvDockerHost     = "DOCKER_HOST"
	EnvListen         = "LISTEN_ADDR"
	EnvInstance       = "CONVERGE_INSTANCE"
	EnvTokens         = "CONVERGE_TOKENS"
	EnvTimeScale      = "CONVERGE_TIME_SCALE"
	EnvTimeOrigin     = "CONVERGE_TIME_ORIGIN"
	EnvPerUser        = "CONVERGE_MAX_RUNNING_PER_USER"
	EnvGlobal         = "CONVERGE_MAX_RUNNING_GLOBAL"
	EnvManaged        = "CONVERGE_MANAGED_VALUE"
	EnvJobNetwork     = "CONVERGE_JOB_NETWORK"
	EnvImage          = "CONVERGE_WORKSPACE_IMAGE"
	EnvInstanceDir    = "CONVERGE_INSTANCE_DIR"
	defaultDockerHost = "unix:///var/run/docker.sock"
)

// Placeholders are the names "{name}" the command line and Env may use;
// each stands for the environment variable beside it.
var Placeholders = map[string]string{
	"database_url": EnvDatabaseURL, "redis_url": EnvRedisURL, "s3_endpoint": EnvS3Endpoint,
	"s3_access_key": EnvS3AccessKey, "s3_secret_key": EnvS3SecretKey, "s3_bucket": EnvS3Bucket,
	"docker_host": EnvDockerHost, "listen": EnvListen, "instance": EnvInstance, "tokens": EnvTokens,
	"time_scale": EnvTimeScale, "time_origin": EnvTimeOrigin, "max_running_per_user": EnvPerUser,
	"max_running_global": EnvGlobal, "managed": EnvManaged, "image": EnvImage, "dir": EnvInstanceDir,
}

var placeholderRE = regexp.MustCompile(`\{([a-z_0-9]+)\}`)

// expand substitutes the placeholders of s from env (NAME=VALUE list).
func expand(s string, env map[string]string) (string, error) {
	var bad []string
	out := placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		if name == "port" {
			_, port, _ := net.SplitHostPort(env[EnvListen])
			return port
		}
		v, ok := Placeholders[name]
		if !ok {
			bad = append(bad, m)
			return m
		}
		return env[v]
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("unknown placeholder %s (known: {port} and %s)", strings.Join(bad, ", "), placeholderList())
	}
	return out, nil
}

func placeholderList() string {
	var names []string
	for n := range Placeholders {
		names = append(names, "{"+n+"}")
	}
	sortStrings(names)
	return strings.Join(names, " ")
}

// SplitCommand splits a --system-cmd as a shell would (quotes, no
// expansion) and checks its placeholders.
func SplitCommand(cmd string) ([]string, error) {
	argv, err := engine.SplitArgs(cmd)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	for _, a := range argv {
		if _, err := expand(a, map[string]string{}); err != nil {
			return nil, err
		}
	}
	return argv, nil
}

// instance is one instance of the implementation under test: its
// settings, its process (across restarts) and its log.
type instance struct {
	name string
	env  map[string]string
	argv []string
	dir  string
	log  *os.File
	// pg is this instance's own proxy in front of PostgreSQL (partitions).
	pg *proxy

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	lives    int
	stopped  bool // SIGSTOPped
	restarts int
}

// start launches the process (again).
func (in *instance) start() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	args := make([]string, len(in.argv))
	for i, a := range in.argv {
		v, err := expand(a, in.env)
		if err != nil {
			return err
		}
		args[i] = v
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = in.dir
	cmd.Env = os.Environ()
	for k, v := range in.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	in.lives++
	fmt.Fprintf(in.log, "=== conform: start %s (life %d): %s\n", in.name, in.lives, strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = in.log, in.log
	// Its own process group: a wrapper script's children get the
	// signals too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", in.name, err)
	}
	in.cmd, in.exited, in.stopped = cmd, make(chan struct{}), false
	exited := in.exited
	go func() {
		err := cmd.Wait()
		in.mu.Lock()
		in.exitErr = err
		in.mu.Unlock()
		fmt.Fprintf(in.log, "=== conform: %s exited: %v\n", in.name, err)
		close(exited)
	}()
	return nil
}

// signal sends sig to the instance's process group.
func (in *instance) signal(sig syscall.Signal) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil || in.cmd.Process == nil {
		return errors.New("not running")
	}
	select {
	case <-in.exited:
		return errors.New("not running")
	default:
	}
	if sig == syscall.SIGSTOP {
		in.stopped = true
	}
	if sig == syscall.SIGCONT {
		in.stopped = false
	}
	return syscall.Kill(-in.cmd.Process.Pid, sig)
}

// kill SIGKILLs the process group and waits for the exit.
func (in *instance) kill() {
	_ = in.signal(syscall.SIGCONT)
	_ = in.signal(syscall.SIGKILL)
	in.mu.Lock()
	ch := in.exited
	in.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// running reports whether the process is alive.
func (in *instance) running() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.exited == nil {
		return false
	}
	select {
	case <-in.exited:
		return false
	default:
		return true
	}
}

// stop ends the process: SIGTERM, then SIGKILL after grace.
func (in *instance) stop(grace time.Duration) {
	if !in.running() {
		return
	}
	_ = in.signal(syscall.SIGCONT)
	_ = in.signal(syscall.SIGTERM)
	in.mu.Lock()
	ch := in.exited
	in.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		in.kill()
	}
}

// url is the instance's API base.
func (in *instance) url() string { return "http://" + in.env[EnvListen] }

// waitHealthy polls the health path until it answers 200, the process
// exits, or ctx ends.
func (in *instance) waitHealthy(ctx context.Context, path string) error {
	c := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.url()+path, nil)
		if resp, err := c.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		in.mu.Lock()
		ch := in.exited
		in.mu.Unlock()
		select {
		case <-ch:
			return fmt.Errorf("%s exited before its API answered (%v): see %s", in.name, in.exitErr, in.log.Name())
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200 in time: see %s", in.name, path, in.log.Name())
		case <-tick.C:
		}
	}
}

// freeAddr picks a free loopback port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// newInstance prepares instance i.
func newInstance(i int, argv []string, env map[string]string, dir string) (*instance, error) {
	name := "conform-" + strconv.Itoa(i+1)
	idir := filepath.Join(dir, name)
	if err := os.MkdirAll(idir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	env[EnvInstance] = name
	env[EnvInstanceDir] = idir
	return &instance{name: name, env: env, argv: argv, dir: idir, log: log}, nil
}
