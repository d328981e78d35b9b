package cli

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// worldOnly are the flags one world's verb has and the other world's does
// not, each with the reason. A flag missing here that one world gains
// fails TestBothWorldsTakeTheSameFlags: give it to the other world too
// (through the shared code: seedRange, evidence, shrinking, campaign,
// killFlags), or say here why it cannot have it. (converge conform comes
// with cmd/converge/realcli, not this package: its flags are another
// drill's than oracle conform's.)
var worldOnly = map[string]map[string]string{
	"sim": {
		// The run's shape: each world's own (a fleet of workspaces and
		// coordinators; oracle requests, moderator actions, a pool).
		"--workspaces":   "workspace shape",
		"--coordinators": "workspace shape",
		"--requests":     "oracle shape",
		"--ops":          "oracle shape",
		"--pool-size":    "oracle shape",
		// The oracle world runs an implementation in another language as
		// a daemon on the wall clock (converge oracle conform), not as a
		// child over the driver protocol, and registers no other systems.
		"--exec":         "workspace driver protocol",
		"--exec-timeout": "workspace driver protocol",
		"--system":       "workspace registry of systems",
	},
	"mutants": {
		// The run's shape, as for sim; the oracle catalogue shapes each
		// mutant's runs itself.
		"--workspaces":   "workspace shape",
		"--coordinators": "workspace shape",
		"--duration":     "workspace shape",
		"--quiet":        "workspace shape",
		"--faults":       "workspace shape",
		// Variants of an implementation in any language, over the
		// driver protocol.
		"--exec":         "workspace driver protocol",
		"--exec-timeout": "workspace driver protocol",
		"--variant":      "workspace driver protocol",
	},
	"replay": {
		// A workspace replay file may name a child's command line; an
		// oracle replay file names a daemon of this binary.
		"--allow-exec":   "workspace driver protocol",
		"--exec-timeout": "workspace driver protocol",
	},
}

// flagNames lists a command's flags, "--name" each, sorted.
func flagNames(t *testing.T, root *cobra.Command, path ...string) []string {
	t.Helper()
	cmd, _, err := root.Find(path)
	require.NoError(t, err, "%v", path)
	require.Equal(t, path[len(path)-1], cmd.Name(), "%v", path)
	var out []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { out = append(out, "--"+f.Name) })
	slices.Sort(out)
	return out
}

// Issue 24: every verb exists for both worlds with the same flags, but for
// the exceptions listed, each with its reason.
func TestBothWorldsTakeTheSameFlags(t *testing.T) {
	root := newConfig(io.Discard, io.Discard, nil).rootCommand()
	for verb, only := range worldOnly {
		ws := flagNames(t, root, verb)
		oracle := flagNames(t, root, "oracle", verb)
		for _, side := range []struct{ has, lacks []string }{{ws, oracle}, {oracle, ws}} {
			for _, f := range side.has {
				if !slices.Contains(side.lacks, f) {
					require.Contains(t, only, f, "%s has %s in one world only: give it to the other or list it in worldOnly with the reason", verb, f)
				}
			}
		}
		for f := range only {
			require.True(t, slices.Contains(ws, f) != slices.Contains(oracle, f),
				"%s %s is listed as one world's only, but %s", verb, f, map[bool]string{true: "both have it", false: "neither has it"}[slices.Contains(ws, f)])
		}
	}
}

// The kill matrices' flags keep their older names: --only is --mutant.
func TestMutantsFlagAliases(t *testing.T) {
	for _, args := range [][]string{
		{"mutants", "--only", "no-such-mutant"},
		{"mutants", "--mutant", "no-such-mutant"},
		{"oracle", "mutants", "--only", "no-such-mutant"},
		{"oracle", "mutants", "--mutant", "no-such-mutant"},
	} {
		code, _, errOut := invoke(t, nil, args...)
		require.Equal(t, ExitUsage, code, "%v", args)
		require.Contains(t, errOut, "no-such-mutant", "%v", args)
	}
	code, out, errOut := invoke(t, nil, "oracle", "mutants", "--list", "--only", "nonce-not-plus-one,pool-limit-ignored")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, 2, strings.Count(out, "\n"), out)
}
