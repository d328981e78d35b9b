package realcli

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/cmd/converge/cli"
)

// run runs the converge command line (cli with serve and conform, as
// cmd/converge builds it) in-process, as the program "converge", with
// serve's environment env.
func run(ctx context.Context, env serveEnv, args []string, stdout, stderr io.Writer) int {
	serve := func(e cli.Env) *cobra.Command { return newConfig(e, env).serveCommand() }
	return cli.Run(ctx, args, stdout, stderr, cli.WithProgram("converge"), cli.WithCommands(serve, Conform))
}

// invoke runs the command line as the converge binary does.
func invoke(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(t.Context(), args, &out, &errb, cli.WithProgram("converge"), cli.WithCommands(Serve, Conform))
	return code, out.String(), errb.String()
}

// The converge binary lists serve and conform beside cli's own commands,
// and their help reads the same by --help and by help.
func TestHelpListsTheCommandsOnRealServices(t *testing.T) {
	code, out, _ := invoke(t, "--help")
	require.Equal(t, cli.ExitOK, code)
	for _, c := range []string{"sim", "replay", "mutants", "serve", "conform", "oracle", "oracled", "driver", "version", "completion"} {
		require.Regexp(t, `\n  `+c+` `, out)
	}
	for _, cmd := range []string{"serve", "conform"} {
		code, viaFlag, _ := invoke(t, cmd, "--help")
		require.Equal(t, cli.ExitOK, code, cmd)
		code, viaHelp, _ := invoke(t, "help", cmd)
		require.Equal(t, cli.ExitOK, code, cmd)
		require.Equal(t, viaHelp, viaFlag, cmd)
		require.Contains(t, viaFlag, "Usage:\n  converge "+cmd, cmd)
	}
	// A binary built with cli alone (a third party's) has neither.
	var o, e bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(t.Context(), []string{"--help"}, &o, &e, cli.WithProgram("converge")))
	require.NotRegexp(t, `\n  (serve|conform) `, o.String())
}

// Added commands keep the CLI's exit codes: a usage error is one line and
// the pointer to --help, exit 2; an unexpected argument is refused.
func TestAddedCommandsKeepTheExitCodes(t *testing.T) {
	for _, args := range [][]string{
		{"conform"},
		{"conform", "--system-cmd", `converge "serve`},
		{"conform", "--no-such-flag"},
		{"serve", "extra"},
	} {
		code, out, errOut := invoke(t, args...)
		require.Equal(t, cli.ExitUsage, code, "%v: %s", args, errOut)
		require.Empty(t, out)
		require.Regexp(t, `^converge (conform|serve): .+\nRun 'converge (conform|serve) --help' for usage.\n$`, errOut)
	}
}
