package realcli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/cmd/converge/cli"
)

// Serve is `converge serve`: the reference control plane on PostgreSQL,
// Redis, MinIO and Docker (or, with --fake, on the fakes), for
// cli.WithCommands.
func Serve(e cli.Env) *cobra.Command {
	return newConfig(e, serveEnv{getenv: os.Getenv, hostname: os.Hostname, terminal: cli.IsTerminal(e.Stderr), backends: chooseBackends}).serveCommand()
}

// Conform is `converge conform`: any running workspace control plane
// drilled black-box on real services with real faults, for
// cli.WithCommands.
func Conform(e cli.Env) *cobra.Command { return newConfig(e, serveEnv{}).conformCommand() }

// config is what the commands run with: cli's streams and, for serve, its
// environment (tests replace it).
type config struct {
	stdout, stderr, progress io.Writer
	serve                    serveEnv
}

func newConfig(e cli.Env, serve serveEnv) *config {
	return &config{stdout: e.Stdout, stderr: e.Stderr, progress: e.Progress, serve: serve}
}

// usagef is a usage error: exit status 2, one line and a pointer to --help.
func usagef(format string, args ...any) error {
	return cli.Exit(cli.ExitUsage, fmt.Errorf(format, args...))
}

// exitWith ends a command with code, having printed what it had to say.
func exitWith(code int) error { return cli.Exit(code, nil) }
