package realcli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/cmd/converge/cli"
)

// The drill's allow-list is checked before anything starts, and its help
// states the claim rule's exit code.
func TestConformAllowListAndExitFive(t *testing.T) {
	code, _, errOut := invoke(t, "conform", "--system-cmd", "converge serve", "--allow-unexercised", "c12-convergance")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errOut, `--allow-unexercised: unknown checker "c12-convergance"`)
	code, out, _ := invoke(t, "conform", "--help")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "5 nothing violated but a judged checker's situation never arose")
	require.Contains(t, out, "--allow-unexercised")
}

// The drill's report files are checked before anything starts (issue 23:
// an output naming a directory failed only after the whole run): exit 2,
// one line naming the flag, then the pointer to --help.
func TestConformChecksItsOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--junit", dir},
		{"--html", dir},
		{"--junit", filepath.Join(dir, "no", "such", "dir", "x.xml")},
	} {
		code, out, errOut := invoke(t, append([]string{"conform", "--system-cmd", "no-such-plane-9f3a"}, args...)...)
		require.Equal(t, cli.ExitUsage, code, "%v: %s", args, errOut)
		require.Empty(t, out)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		require.Len(t, lines, 2, "one line and the pointer to --help: %s", errOut)
		require.Contains(t, lines[0], args[0]+" "+args[1])
	}
}
