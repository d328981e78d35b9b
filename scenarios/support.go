package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// newSim is a scripted simulation of sys with the random workload off.
func newSim(t *testing.T, sys ports.System, coordinators int) *wssim.Sim {
	t.Helper()
	s, err := wssim.New(wssim.Config{
		Seed:         1,
		Coordinators: coordinators,
		System:       sys,
		Workload:     wssim.Workload{Disabled: true},
		Limits:       contracts.Limits{MaxRunningPerUser: 10, MaxRunningGlobal: 100},
	})
	require.NoError(t, err)
	// Let the first coordinator take the lead before anything happens.
	require.NoError(t, s.RunFor(time.Second))
	return s
}

func ptr[T any](v T) *T { return &v }

func create(t *testing.T, s *wssim.Sim, desired contracts.DesiredState, mods ...func(*ports.CreateRequest)) string {
	t.Helper()
	req := ports.CreateRequest{Name: "dev", ImageRef: "workspace:1", DesiredState: ptr(string(desired))}
	for _, m := range mods {
		m(&req)
	}
	ws, err := s.API().Create(t.Context(), "alice", req)
	require.NoError(t, err)
	return ws.ID
}

func setDesired(t *testing.T, s *wssim.Sim, id string, d contracts.DesiredState) {
	t.Helper()
	_, err := s.API().Patch(t.Context(), "alice", id, ports.PatchRequest{DesiredState: ptr(string(d))})
	require.NoError(t, err)
}

func row(t *testing.T, s *wssim.Sim, id string) contracts.Workspace {
	t.Helper()
	w, err := s.World().Store.Get(t.Context(), id)
	require.NoError(t, err)
	return w
}

// waitDisplay runs until workspace id shows display state d, idle.
func waitDisplay(t *testing.T, s *wssim.Sim, id string, d contracts.DisplayState, limit time.Duration) {
	t.Helper()
	ok, err := s.RunUntilCond(func(s *wssim.Sim) bool {
		w, err := s.World().Store.Get(t.Context(), id)
		return err == nil && contracts.Display(&w) == d && w.Operation == contracts.OpNone
	}, limit)
	require.NoError(t, err)
	if !ok {
		w := row(t, s, id)
		require.Failf(t, "not reached", "workspace %s did not reach %s within %s: display %s, operation %s, error %v\n%s",
			id, d, limit, contracts.Display(&w), w.Operation, w.ErrorInfo, strings.Join(s.Timeline(40), "\n"))
	}
}

// since returns the history events after sequence number seq.
func since(s *wssim.Sim, seq int64) []history.Event {
	var out []history.Event
	for _, e := range s.History().Events() {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out
}

func lastSeq(s *wssim.Sim) int64 {
	ev := s.History().Events()
	if len(ev) == 0 {
		return 0
	}
	return ev[len(ev)-1].Seq
}

func writeFiles(t *testing.T, s *wssim.Sim, id string, n int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for i := range n {
		p := fmt.Sprintf("project/file-%d.txt", i)
		files[p] = []byte(fmt.Sprintf("line %d of %s, written at %s\n", i, id, s.Now().Format(time.RFC3339)))
		require.NoError(t, s.World().Storage.WriteFile(id, p, files[p]))
	}
	return files
}

func volumeFiles(t *testing.T, s *wssim.Sim, id string) map[string][]byte {
	t.Helper()
	files, ok := s.World().Storage.Files(id)
	require.True(t, ok, "workspace %s has no volume", id)
	return files
}

// requireNoViolations runs every checker over the history so far.
func requireNoViolations(t *testing.T, s *wssim.Sim) *wsjudge.Report {
	t.Helper()
	r := wsjudge.Check(wsjudge.Input{Events: s.History().Events(), Limits: s.Config().Limits})
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, v.String())
	}
	require.Empty(t, lines, "contract violations")
	return r
}

// archiveObjects lists the workspace's objects in the bucket.
func archiveObjects(s *wssim.Sim, id string) []string {
	var out []string
	for _, k := range s.World().Objects.Keys() {
		if strings.HasPrefix(k, contracts.ArchivePrefix+id+"/") {
			out = append(out, k)
		}
	}
	return out
}

// crashLeaderAt makes the leader crash (fail-stop) at its first call
// matching match, once.
func crashLeaderAt(s *wssim.Sim, leader string, match func(c wsfakes.Call) bool) *bool {
	fired := new(bool)
	s.World().SetHook(func(c wsfakes.Call) error {
		if *fired || c.Instance != leader || !match(c) {
			return nil
		}
		*fired = true
		s.CrashAtCall(leader, 1)
		return fmt.Errorf("instance %s: %w", leader, contracts.ErrCrashed)
	})
	return fired
}
