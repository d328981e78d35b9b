package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The drill's allow-list is checked before anything starts, and its help
// states the claim rule's exit code.
func TestConformAllowListAndExitFive(t *testing.T) {
	code, _, errOut := invoke(t, nil, "conform", "--system-cmd", "converge serve", "--allow-unexercised", "c12-convergance")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `--allow-unexercised: unknown checker "c12-convergance"`)
	code, out, _ := invoke(t, nil, "conform", "--help")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "5 nothing violated but a judged checker's situation never arose")
	require.Contains(t, out, "--allow-unexercised")
}
