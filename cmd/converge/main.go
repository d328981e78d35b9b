package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// version is set at build time (-ldflags "-X main.version=v1.2.3").
var version = "dev"

// command is one subcommand. run gets the arguments after the command's
// name; "converge help NAME" runs it with --help.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands lists every subcommand, in the order help shows them.
func commands() []command {
	return []command{
		{"sim", "judge the reference (or a mutant) in the deterministic simulator under faults", runSimCommand},
		{"replay", "re-run a replay file written for a failing run and show its timeline", runReplayCommand},
		{"mutants", "the kill matrix: find, per mutant, the first seed a checker kills it", runMutantsCommand},
		{"serve", "run a coordinator instance and the HTTP API", runServeCommand},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "help":
		if len(rest) == 0 {
			usage(stdout)
			return exitOK
		}
		if c, ok := lookup(rest[0]); ok {
			return c.run(ctx, []string{"--help"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "converge: unknown command %q\n\n", rest[0])
		usage(stderr)
		return exitUsage
	case "-version", "--version":
		return runVersion(ctx, nil, stdout, stderr)
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "converge: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, rest, stdout, stderr)
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString(`converge judges a workspace control plane: contracts as code, a reference
coordinator, in-memory fakes, a deterministic simulator and checkers.

Usage:
  converge <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Run "converge help <command>" (or "converge <command> --help") for a
command's flags.

Exit codes: 0 success, 1 a run failed, 2 usage error.
`)
	io.WriteString(w, b.String())
}

const versionUsage = `Usage: converge version

Prints the version of converge, its VCS revision if known, and the Go
version it was built with.
`

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			io.WriteString(stdout, versionUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "converge version: unexpected argument %q\n\n%s", args[0], versionUsage)
		return exitUsage
	}
	fmt.Fprintf(stdout, "converge %s%s (%s)\n", moduleVersion(), revision(), runtime.Version())
	return exitOK
}

// moduleVersion prefers the build-time version, then the module's.
func moduleVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

func revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
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
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return " " + rev + dirty
}
