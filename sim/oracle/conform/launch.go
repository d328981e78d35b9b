package conform

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/keyring"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/keys/cosmoskeyring"
)

// Profile is how to launch a daemon (ORACLE-SPEC §6.7). Every argument
// the daemon gets is in Argv: the harness substitutes the placeholders
// (Placeholders) and appends nothing.
type Profile struct {
	// Argv is the command line, split like a shell would (engine.SplitArgs),
	// each "{name}" of Placeholders substituted. DefaultArgs are what
	// `converge oracle conform` adds to a --daemon that names no
	// placeholder.
	Argv []string
	// ConfigPath is where the daemon's config.toml is written, with the
	// placeholders substituted (but "{config}"); a relative path is in the
	// home, and the file must be inside the home. "" is DefaultConfigPath.
	ConfigPath string
	// KeyFormat is how the key is written when KeyCmd is empty ("" is
	// KeyFormatConverge).
	KeyFormat KeyFormat
	// KeyCmd, when set, provisions the key instead: the placeholders, and
	// "{name}" (= "{key_name}") and "{key}" (the private key in hex), are
	// substituted in each argument.
	KeyCmd []string
	// Env is added to the environment (HOME is always the sandbox).
	Env []string
}

// DefaultArgs are the arguments `converge oracle conform` puts after a
// --daemon that names no placeholder: the reference's "--home HOME"
// (ORACLE-SPEC §6.7's default argv is "{bin} --home {home}").
var DefaultArgs = []string{"--home", "{home}"}

// DefaultConfigPath is where the config is written unless the profile says.
const DefaultConfigPath = "{home}/config.toml"

// KeyFormat is how the harness writes the daemon's key.
type KeyFormat string

// Key formats.
const (
	// KeyFormatConverge is the reference daemon's keyring file,
	// HOME/keyring-test/NAME.json (wire/keyring).
	KeyFormatConverge KeyFormat = "converge-json"
	// KeyFormatCosmosTestKeyring is a Cosmos SDK keyring with the "test"
	// backend: HOME/keyring-test/NAME.info and HEXADDRESS.address
	// (wire/keys/cosmoskeyring).
	KeyFormatCosmosTestKeyring KeyFormat = "cosmos-test-keyring"
)

// KeyFormats are the formats, the default first.
func KeyFormats() []KeyFormat { return []KeyFormat{KeyFormatConverge, KeyFormatCosmosTestKeyring} }

// ParseKeyFormat reads a format's name.
func ParseKeyFormat(s string) (KeyFormat, error) {
	for _, f := range KeyFormats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown key format %q: use %s or %s", s, KeyFormatConverge, KeyFormatCosmosTestKeyring)
}

// Placeholders are the names substituted in a profile's command lines and
// config path, and what each stands for.
var Placeholders = []struct{ Name, Means string }{
	{"home", "the sandbox home (also $HOME)"},
	{"config", "the config file the harness wrote (--config-path)"},
	{"endpoint", "the façade's CometBFT RPC URL, http://127.0.0.1:PORT"},
	{"ws", "the façade's WebSocket URL, ws://127.0.0.1:PORT/websocket"},
	{"chain_id", "the chain id"},
	{"key_name", "the key's name in the keyring"},
	{"keyring_dir", "the keyring's root directory (the home)"},
	{"keyring_backend", `the keyring backend, "test"`},
	{"address", "the provider address the key signs as (bech32 guru1…)"},
}

// keyCmdOnly are the placeholders of a key command only.
var keyCmdOnly = []string{"name", "key"}

var placeholderRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// expand substitutes vars in each argument; a placeholder not in vars is
// an error.
func expand(args []string, vars map[string]string) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		var bad error
		out[i] = placeholderRE.ReplaceAllStringFunc(a, func(m string) string {
			name := m[1 : len(m)-1]
			v, ok := vars[name]
			if !ok && bad == nil {
				bad = unknownPlaceholder(name, vars)
			}
			return v
		})
		if bad != nil {
			return nil, bad
		}
	}
	return out, nil
}

func unknownPlaceholder(name string, vars map[string]string) error {
	if name == "grpc" {
		return errors.New("{grpc}: the façade serves no gRPC, only CometBFT JSON-RPC and its WebSocket ({endpoint}, {ws}; ORACLE-SPEC §6)")
	}
	known := make([]string, 0, len(vars))
	for k := range vars {
		known = append(known, "{"+k+"}")
	}
	slices.Sort(known)
	return fmt.Errorf("unknown placeholder {%s}: use %s", name, strings.Join(known, " "))
}

// vars are the placeholders' values for a sandbox.
func vars(home, configPath string, cfg oracle.Config, key keys.PrivKey) map[string]string {
	ws := strings.Replace(strings.Replace(cfg.Chain.Endpoint, "https://", "wss://", 1), "http://", "ws://", 1)
	return map[string]string{
		"home": home, "config": configPath, "endpoint": cfg.Chain.Endpoint, "ws": strings.TrimSuffix(ws, "/") + "/websocket",
		"chain_id": cfg.Chain.ID, "key_name": cfg.Key.Name, "keyring_dir": cfg.Key.KeyringDir,
		"keyring_backend": cfg.Key.KeyringBackend, "address": key.PubKey().Address(),
	}
}

// configPath is where the profile's config goes for home: inside it.
func configPath(tmpl, home string, v map[string]string) (string, error) {
	if tmpl == "" {
		tmpl = DefaultConfigPath
	}
	v = maps.Clone(v)
	delete(v, "config")
	p, err := expand([]string{tmpl}, v)
	if err != nil {
		return "", fmt.Errorf("config path: %w", err)
	}
	path := p[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(home, path)
	}
	path = filepath.Clean(path)
	if rel, err := filepath.Rel(home, path); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("config path %q is not inside the sandbox home; a daemon that reads its config from a fixed path needs a wrapper that copies {config} there", tmpl)
	}
	return path, nil
}

// CheckProfile reports the first thing in p a run would refuse: no
// command, an unknown placeholder, an unknown key format, a config path
// outside the home. Run checks the same; a command line checks first.
func CheckProfile(p Profile) error {
	if len(p.Argv) == 0 {
		return errors.New("empty command")
	}
	if _, err := ParseKeyFormat(string(p.keyFormat())); err != nil {
		return err
	}
	cfg := oracle.DefaultConfig("/sandbox/home")
	cfg.Chain.Endpoint = "http://127.0.0.1:1"
	v := vars(cfg.Key.KeyringDir, "", cfg, keys.PrivKeyFromSeed("check"))
	cp, err := configPath(p.ConfigPath, cfg.Key.KeyringDir, v)
	if err != nil {
		return err
	}
	v["config"] = cp
	if _, err := expand(p.Argv, v); err != nil {
		return fmt.Errorf("command: %w", err)
	}
	if len(p.KeyCmd) > 0 {
		for _, n := range keyCmdOnly {
			v[n] = n
		}
		if _, err := expand(p.KeyCmd, v); err != nil {
			return fmt.Errorf("key command: %w", err)
		}
	}
	return nil
}

func (p Profile) keyFormat() KeyFormat {
	if p.KeyFormat == "" {
		return KeyFormatConverge
	}
	return p.KeyFormat
}

// HasPlaceholder reports whether any of args names a placeholder.
func HasPlaceholder(args []string) bool {
	for _, a := range args {
		if placeholderRE.MatchString(a) {
			return true
		}
	}
	return false
}

// Sandbox is the daemon's home with its config and key.
type Sandbox struct {
	Home string
	Key  keys.PrivKey
	Cfg  oracle.Config
	// ConfigPath is the config file written; KeyFiles the key's files (none
	// when a key command provisioned it); OutputDir where each lifetime's
	// stdout and stderr are kept whole.
	ConfigPath string
	KeyFiles   []string
	OutputDir  string
	vars       map[string]string
}

// Provision writes cfg to the profile's config path and the key into the
// keyring in the profile's format (or runs prof.KeyCmd). Each lifetime's
// output goes to home's sibling "output".
func Provision(ctx context.Context, home string, cfg oracle.Config, key keys.PrivKey, prof Profile) (*Sandbox, error) {
	if err := CheckProfile(prof); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sb := &Sandbox{Home: home, Key: key, Cfg: cfg, OutputDir: filepath.Join(filepath.Dir(home), "output")}
	for _, d := range []string{home, sb.OutputDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	sb.vars = vars(home, "", cfg, key)
	var err error
	if sb.ConfigPath, err = configPath(prof.ConfigPath, home, sb.vars); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sb.vars["config"] = sb.ConfigPath
	b, err := toml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(sb.ConfigPath), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: config: %w", err)
	}
	if err := os.WriteFile(sb.ConfigPath, b, 0o600); err != nil {
		return nil, fmt.Errorf("sandbox: config: %w", err)
	}
	if len(prof.KeyCmd) == 0 {
		switch prof.keyFormat() {
		case KeyFormatCosmosTestKeyring:
			f, err := cosmoskeyring.Write(cfg.Key.KeyringDir, cfg.Key.Name, key)
			if err != nil {
				return nil, fmt.Errorf("sandbox: key: %w", err)
			}
			sb.KeyFiles = []string{f.Info, f.Address}
		default:
			if _, err := keyring.Add(cfg.Key.KeyringDir, cfg.Key.Name, key, true); err != nil {
				return nil, fmt.Errorf("sandbox: key: %w", err)
			}
			sb.KeyFiles = []string{keyring.Path(cfg.Key.KeyringDir, cfg.Key.Name)}
		}
		return sb, nil
	}
	kv := maps.Clone(sb.vars)
	kv["name"], kv["key"] = cfg.Key.Name, hex.EncodeToString(key.Bytes())
	args, err := expand(prof.KeyCmd, kv)
	if err != nil {
		return nil, fmt.Errorf("sandbox: key command: %w", err)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Env = append(cmd.Env, prof.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sandbox: key command %q: %w: %s", strings.Join(prof.KeyCmd, " "), err, strings.TrimSpace(string(out)))
	}
	return sb, nil
}

// Argv is the command line of a lifetime: prof.Argv with the sandbox's
// placeholders substituted.
func (sb *Sandbox) Argv(prof Profile) ([]string, error) { return expand(prof.Argv, sb.vars) }

// Process is one lifetime of the daemon.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	status int
	signal string
	output *tail
	// Stdout and Stderr are the files that keep the lifetime's output
	// whole.
	Stdout, Stderr string
	// starve watches how long the machine kept the process's threads
	// waiting for a CPU; it stops before exited is closed.
	starve *starveWatch
}

// launch starts a lifetime: a proc start record, then the process with its
// stdout and stderr each copied whole to a file in the sandbox's output
// directory and scanned for Go traces (the last lines kept for the report).
func launch(w *World, life int, sb *Sandbox, prof Profile) (*Process, error) {
	argv, err := sb.Argv(prof)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+sb.Home)
	cmd.Env = append(cmd.Env, prof.Env...)
	cmd.Dir = sb.Home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	p := &Process{cmd: cmd, exited: make(chan struct{}), output: &tail{max: 200},
		Stdout: filepath.Join(sb.OutputDir, fmt.Sprintf("life-%d.stdout", life)),
		Stderr: filepath.Join(sb.OutputDir, fmt.Sprintf("life-%d.stderr", life))}
	files := make([]*os.File, 2)
	for i, path := range []string{p.Stdout, p.Stderr} {
		if files[i], err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			for _, f := range files[:i] {
				_ = f.Close()
			}
			return nil, fmt.Errorf("launch: output: %w", err)
		}
	}
	w.Facade.SetLife(life)
	w.Facade.Record(history.Event{Kind: history.KindProc, Life: life,
		Proc: &history.Proc{Action: history.ProcStart, Detail: strings.Join(argv, " ")}})
	if err := cmd.Start(); err != nil {
		for _, f := range files {
			_ = f.Close()
		}
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	p.starve = watchStarve(cmd.Process.Pid)
	var readers sync.WaitGroup
	for i, r := range []io.Reader{stdout, stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer func() { _ = files[i].Close() }()
			p.scan(w, life, io.TeeReader(r, files[i]))
		}()
	}
	go func() {
		readers.Wait()
		p.starve.finish() // before Wait: the threads are readable until reaped
		err := cmd.Wait()
		p.status = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.status = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.signal = signalName(ws.Signal())
			}
		}
		w.Facade.Record(history.Event{Kind: history.KindProc, Life: life,
			Proc: &history.Proc{Action: history.ProcExit, Status: p.status, Signal: p.signal}})
		close(p.exited)
	}()
	return p, nil
}

// scan reads the output line by line for Go traces; a line too long for
// it ends the scanning, not the reading: the rest is still read (and so
// copied to the file), or the daemon would block on a full pipe.
func (p *Process) scan(w *World, life int, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.output.add(line)
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") {
			w.Facade.Record(history.Event{Kind: history.KindProc, Life: life,
				Proc: &history.Proc{Action: history.ProcTrace, Output: line}})
		}
	}
	if sc.Err() != nil {
		p.output.add(fmt.Sprintf("[converge: output not scanned past here: %v; the file has it all]", sc.Err()))
		_, _ = io.Copy(io.Discard, r)
	}
}

// sendSignal records sig and sends it to the daemon's process group.
func (p *Process) sendSignal(w *World, sig syscall.Signal) {
	w.Facade.Record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcSignal, Signal: signalName(sig)}})
	// The whole process group, as a terminal would: a wrapper script's
	// daemon gets the signal too.
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// wait waits up to d for the exit; false if it is still running.
func (p *Process) wait(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}

// tail keeps the last max lines written.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tail) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}
