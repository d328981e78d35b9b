package realcli

import (
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
