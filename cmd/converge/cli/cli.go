package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Exit codes: the same for every command.
const (
	// ExitOK: everything passed.
	ExitOK = 0
	// ExitFailed: a contract was violated, a run failed, a mutant
	// survived, or a replay did not reproduce its run.
	ExitFailed = 1
	// ExitUsage: bad usage or bad input (a flag, a replay file).
	ExitUsage = 2
	// ExitError: the run could not be carried out (a system that cannot
	// be built, a file that cannot be written).
	ExitError = 3
	// ExitDiagnostic: a diagnostic run finished (`oracle conform
	// --admit-unverified`): it makes no conformance claim either way.
	ExitDiagnostic = 4
	// ExitUnmet (evidence.go) is 5: nothing violated, an obligation unmet.
	// ExitInterrupted: stopped by SIGINT or SIGTERM.
	ExitInterrupted = 130
)

// ReferenceSystem is the name the reference implementation is registered
// under.
const ReferenceSystem = "reference"

// Option configures the CLI a binary runs: which systems it can judge,
// and (for tests) its environment.
type Option func(*config)

// WithSystem registers a system under test under name: `converge sim
// --system NAME` judges it, and `converge replay FILE` replays files
// written for it. build is called once per run (a fresh system each
// time). A third party judges its own coordinator with a main.go of a few
// lines:
//
//	func main() { cli.Main(cli.WithSystem("acme", acme.NewSystem)) }
func WithSystem(name string, build func() ports.System) Option {
	return func(c *config) {
		c.systems = slices.DeleteFunc(c.systems, func(s registered) bool { return s.name == name })
		c.systems = append(c.systems, registered{name: name, build: build})
	}
}

// WithProgram sets the program name printed in commands a user can copy
// (default: how the binary was invoked, or "go run <package>" for a
// binary built by go run).
func WithProgram(name string) Option { return func(c *config) { c.program = name } }

// Env is what a command added with WithCommands writes to.
type Env struct {
	// Stdout and Stderr are the streams Run was given.
	Stdout, Stderr io.Writer
	// Progress takes progress lines: stderr when it is a terminal, else
	// nil (print none).
	Progress io.Writer
}

// WithCommands adds commands to the binary's root command, each built
// when the CLI runs. Package cli itself carries only the commands that run
// on the simulator, so that a binary built with it (and the module it
// lives in) needs no Docker, PostgreSQL, Redis or MinIO client; the
// commands on real services live in package realcli and the converge
// binary adds them:
//
//	func main() { cli.Main(cli.WithCommands(realcli.Serve, realcli.Conform)) }
//
// A third party that wants `conform` in its own binary adds it the same
// way, and takes those clients into its module with it:
//
//	cli.Main(cli.WithSystem("acme", acme.NewSystem), cli.WithCommands(realcli.Conform))
//
// An added command gets the exit codes of the rest through Exit; a
// command with no Args of its own takes no positional arguments.
func WithCommands(build ...func(Env) *cobra.Command) Option {
	return func(c *config) { c.commands = append(c.commands, build...) }
}

// Exit is the error a command added with WithCommands returns to end with
// code: with err, Run prints its first line (and, for ExitUsage, a
// pointer to --help); without, nothing (the command has said what it had
// to). Exit(ExitOK, nil) is nil.
func Exit(code int, err error) error {
	if code == ExitOK && err == nil {
		return nil
	}
	return &codeError{code: code, err: err}
}

// withChecks adds end-of-run checks to every simulated run (tests).
func withChecks(checks ...func(*wssim.Sim) []string) Option {
	return func(c *config) { c.checks = append(c.checks, checks...) }
}

// withClock replaces the wall clock that times runs (tests).
func withClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// withProgress sends progress lines to w whatever it is (tests).
func withProgress(w io.Writer) Option { return func(c *config) { c.progress = w } }

type registered struct {
	name  string
	build func() ports.System
}

type config struct {
	systems  []registered
	program  string
	checks   []func(*wssim.Sim) []string
	now      func() time.Time
	progress io.Writer
	stdout   io.Writer
	stderr   io.Writer
	// commands are the commands added with WithCommands.
	commands []func(Env) *cobra.Command
}

// system builds the system registered under name.
func (c *config) system(name string) (ports.System, error) {
	for _, s := range c.systems {
		if s.name == name {
			return s.build(), nil
		}
	}
	return nil, usagef("unknown system %q: this binary knows %s (register more with cli.WithSystem)", name, c.systemNames())
}

func (c *config) systemNames() string {
	names := make([]string, len(c.systems))
	for i, s := range c.systems {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

func newConfig(stdout, stderr io.Writer, opts []Option) *config {
	c := &config{
		systems: []registered{{name: ReferenceSystem, build: wsref.NewSystem}},
		now:     time.Now,
		stdout:  stdout,
		stderr:  stderr,
	}
	for _, o := range opts {
		o(c)
	}
	if c.program == "" {
		c.program = programName()
	}
	if c.progress == nil && IsTerminal(stderr) {
		c.progress = stderr
	}
	return c
}

// Main runs the CLI on the process's arguments and exits with its code.
func Main(opts ...Option) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, opts...)
	stop()
	os.Exit(code)
}

// Run runs the CLI on args and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	c := newConfig(stdout, stderr, opts)
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ce *codeError
	if errors.As(err, &ce) && ce.err == nil {
		return ce.code
	}
	code := ExitError
	switch {
	case errors.As(err, &ce):
		code = ce.code
	case errors.Is(err, engine.ErrBadInput), strings.HasPrefix(err.Error(), "unknown command"):
		code = ExitUsage
	case ctx.Err() != nil:
		code = ExitInterrupted
	}
	cmd := root.Name()
	if found, _, ferr := root.Find(args); ferr == nil && found != nil {
		cmd = found.CommandPath()
	}
	fmt.Fprintf(stderr, "%s: %s\n", cmd, firstLine(err.Error()))
	if code == ExitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd)
	}
	return code
}

// codeError carries an exit code, with or without a message to print.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *codeError) Unwrap() error { return e.err }

// usagef is a usage error: exit status 2, one line and a pointer to --help.
func usagef(format string, args ...any) error {
	return &codeError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// exitWith ends a command with code, having printed what it had to say.
func exitWith(code int) error {
	if code == ExitOK {
		return nil
	}
	return &codeError{code: code}
}

func (c *config) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   c.rootName(),
		Short: "judge a control plane: contracts as code, a reference, a deterministic simulator",
		Long: `converge judges a workspace control plane against its specification: the
contracts as code, a reference coordinator, in-memory fakes of every
service, a deterministic simulator with faults, and checkers that read
only the recorded history and the world's bytes.

Exit codes (every command): 0 success, 1 a contract was violated or a run
failed, 2 bad usage or bad input, 3 the run could not be carried out,
4 a diagnostic run finished (oracle conform --admit-unverified: no claim),
5 nothing violated but an obligation unmet (a checker's situation arose
too rarely to count as evidence: sim, oracle sim, oracle conform),
130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &codeError{code: ExitUsage, err: err} })
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.AddCommand(c.simCommand(), c.replayCommand(), c.mutantsCommand(), c.versionCommand())
	root.AddCommand(c.oracledCommand(), c.oracleCommand(), c.driverCommand())
	env := Env{Stdout: c.stdout, Stderr: c.stderr, Progress: c.progress}
	for _, build := range c.commands {
		root.AddCommand(build(env))
	}
	for _, sub := range root.Commands() {
		if sub.Args == nil {
			sub.Args = noArgs
		}
	}
	return root
}

// rootName is the program's name in usage lines and help: the binary's
// name (a third party's "acme-converge"), or "converge" under go run.
func (c *config) rootName() string {
	if strings.Contains(c.program, " ") {
		return "converge"
	}
	return filepath.Base(c.program)
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// exactArgs wants n positional arguments.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("want %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

func (c *config) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Long:  "Prints the version of converge, its VCS revision if known, and the Go version it was built with.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(c.stdout, "converge %s\n", versionString())
			return nil
		},
	}
}

// version is set at build time (-ldflags "-X github.com/wsconverge/converge/cmd/converge/cli.version=v1.2.3").
var version = "dev"

func versionString() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if v == "dev" && ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	rev, dirty := "", ""
	if ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	goVersion := "unknown"
	if ok {
		goVersion = bi.GoVersion
	}
	return v + " (" + goVersion + ")"
}

// programName is how a user runs this binary again: its name when it is
// on PATH, the path as typed otherwise, and "go run <package>" for a
// binary go run built in a temporary directory.
func programName() string {
	arg0 := os.Args[0]
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
			return "go run " + bi.Path
		}
	}
	base := filepath.Base(arg0)
	if p, err := exec.LookPath(base); err == nil {
		if a, err1 := filepath.Abs(arg0); err1 == nil {
			if b, err2 := filepath.Abs(p); err2 == nil && a == b {
				return base
			}
		}
	}
	return arg0
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
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

// commandLine renders a command a user can copy: the program, then each
// argument quoted.
func (c *config) commandLine(args ...string) string {
	parts := []string{c.program}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// changed reports whether flag name was given on the command line.
func changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
