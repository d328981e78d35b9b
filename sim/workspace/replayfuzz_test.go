package workspace

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// FuzzReplayFile: whatever a replay file holds, reading it and rebuilding
// its configuration never panics, and every refusal is bad input (exit 2
// in the CLI) on one line; a file that passes has a run the simulator can
// carry out (its start and its whole run inside the virtual clock's
// range). Seeded with a valid file and edits of it.
func FuzzReplayFile(f *testing.F) {
	good := `{"world":"workspace","version":1,"system":"reference","seed":1,"hash":"0123456789abcdef0123456789abcdef","workspaces":1,"duration":"10m0s","quiet":"0s",` +
		`"coordinators":2,"start":"2026-01-05T00:00:00Z","workload":{"users":1},"limits":{"MaxRunningPerUser":2,"MaxRunningGlobal":100},` +
		`"faults":"swarm","plan":{"actions":[{"at":60000000000,"kind":"crash"}]}}`
	f.Add([]byte(good))
	for _, edit := range [][2]string{
		{`"2026-01-05T00:00:00Z"`, `"9999-12-31T00:00:00Z"`},
		{`"2026-01-05T00:00:00Z"`, `"0001-01-01T00:00:00Z"`},
		{`"coordinators":2`, `"coordinators":0`},
		{`"workspaces":1`, `"workspaces":-5`},
		{`"10m0s"`, `"-10m"`},
		{`"swarm"`, `"all@NaN"`},
		{`"reference"`, `"exec:/bin/sh -c true"`},
		{`"MaxRunningPerUser":2`, `"MaxRunningPerUser":0`},
		{`"at":60000000000`, `"at":-1`},
		{`"kind":"crash"`, `"kind":"api-race","n":99999`},
		{`"0123456789abcdef0123456789abcdef"`, `"zz"`},
	} {
		f.Add([]byte(strings.Replace(good, edit[0], edit[1], 1)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReplay(b)
		if err != nil {
			require.True(t, IsBadInput(err), "%v", err)
			require.NotContains(t, err.Error(), "\n")
			return
		}
		cfg, err := r.Config(wsref.NewSystem())
		if err != nil {
			require.True(t, IsBadInput(err), "%v", err)
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.False(t, cfg.Start.Before(MinStart) || !cfg.Start.Before(MaxStart), "start %s", cfg.Start)
		end := cfg.Start.Add(cfg.Duration + cfg.Quiet)
		require.Equal(t, end, time.Unix(0, end.UnixNano()).UTC(), "the run ends inside the virtual clock's range")
	})
}
