package conform

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/refimpl/oracle/keyring"
	"github.com/wsconverge/converge/wire/keys"
)

// Profile is how to launch a daemon (ORACLE-SPEC §6.7).
type Profile struct {
	// Argv is the command line, split like a shell would (SplitArgs); each
	// "{home}" in it becomes the sandbox home, and when none appears
	// "--home HOME" is appended.
	Argv []string
	// KeyCmd, when set, provisions the key instead of the default (a
	// keyring-test/NAME.json file in the home, the reference's format):
	// "{home}", "{name}", "{key}" (the private key in hex) and "{address}"
	// are substituted in each argument.
	KeyCmd []string
	// Env is added to the environment (HOME is always the sandbox).
	Env []string
}

// SplitArgs splits s into words the way a POSIX shell does for a simple
// command: blanks separate words; single quotes keep everything; double
// quotes keep everything but backslash escapes of \ " $ `; a backslash
// outside quotes escapes the next character. No expansion of any kind.
func SplitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("empty command")
	}
	return out, nil
}

// Sandbox is the daemon's home with its config and key.
type Sandbox struct {
	Home string
	Key  keys.PrivKey
	Cfg  oracle.Config
}

// Provision writes cfg as HOME/config.toml and the key into the keyring
// (or runs prof.KeyCmd).
func Provision(ctx context.Context, home string, cfg oracle.Config, key keys.PrivKey, prof Profile) (*Sandbox, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	b, err := toml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), b, 0o600); err != nil {
		return nil, fmt.Errorf("sandbox: config: %w", err)
	}
	if len(prof.KeyCmd) == 0 {
		if _, err := keyring.Add(cfg.Key.KeyringDir, cfg.Key.Name, key, true); err != nil {
			return nil, fmt.Errorf("sandbox: key: %w", err)
		}
		return &Sandbox{Home: home, Key: key, Cfg: cfg}, nil
	}
	r := strings.NewReplacer("{home}", home, "{name}", cfg.Key.Name, "{key}", hex.EncodeToString(key.Bytes()), "{address}", key.PubKey().Address())
	args := make([]string, len(prof.KeyCmd))
	for i, a := range prof.KeyCmd {
		args[i] = r.Replace(a)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Env = append(cmd.Env, prof.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sandbox: key command %q: %w: %s", strings.Join(prof.KeyCmd, " "), err, strings.TrimSpace(string(out)))
	}
	return &Sandbox{Home: home, Key: key, Cfg: cfg}, nil
}

// Process is one lifetime of the daemon.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	status int
	signal string
	output *tail
	// starve watches how long the machine kept the process's threads
	// waiting for a CPU; it stops before exited is closed.
	starve *starveWatch
}

// launch starts a lifetime: a proc start record, then the process with its
// stdout and stderr scanned for Go traces and kept (the last lines).
func launch(w *World, life int, sb *Sandbox, prof Profile) (*Process, error) {
	argv := make([]string, 0, len(prof.Argv)+2)
	hasHome := false
	for _, a := range prof.Argv {
		if strings.Contains(a, "{home}") {
			hasHome = true
		}
		argv = append(argv, strings.ReplaceAll(a, "{home}", sb.Home))
	}
	if !hasHome {
		argv = append(argv, "--home", sb.Home)
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
	w.Facade.SetLife(life)
	w.Facade.Record(history.Event{Kind: history.KindProc, Life: life,
		Proc: &history.Proc{Action: history.ProcStart, Detail: strings.Join(argv, " ")}})
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	p := &Process{cmd: cmd, exited: make(chan struct{}), output: &tail{max: 200}, starve: watchStarve(cmd.Process.Pid)}
	var readers sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			p.scan(w, life, r)
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
