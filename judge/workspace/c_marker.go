package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// restoreMarker: SPEC 4.2.2, the RESTORING row ("restore(id, archive_key)
// → marker; store home_ctx.restore_marker"), and C7 (RESTORING completes
// only on restore_marker == archive_key). The marker a reconciler stores
// while RESTORING is one that a successful restore of the workspace
// returned during that operation. A marker it made up would either let
// an unrestored volume pass for a restored one, or never match, so that
// every restore runs into its timeout and a terminal ERROR that C12
// counts as converged.
type restoreMarker struct {
	base
	// returned holds, per workspace being restored, the markers its
	// successful restore calls returned since the claim.
	returned map[string][]string
}

func (*restoreMarker) Name() string     { return "restore-marker" }
func (*restoreMarker) Contract() string { return "4.2.2" }

func (c *restoreMarker) Observe(s *State, e *history.Event, r *Report) {
	if c.returned == nil {
		c.returned = map[string][]string{}
	}
	if e.Kind == history.KindCall && e.Method == MRestore && e.Err == "" && s.Leader.EpochOf[e.Instance] > 0 {
		c.returned[e.Workspace] = append(c.returned[e.Workspace], e.Result)
		return
	}
	if !reconcilerWrite(e) {
		return
	}
	row, p := s.Row(e.Workspace), e.Patch
	if row == nil {
		return
	}
	if classify(row, p) == tClaim {
		delete(c.returned, e.Workspace)
		return
	}
	if row.Operation != contracts.OpRestoring || !p.HomeCtx.Set || p.HomeCtx.V == nil || p.HomeCtx.V.RestoreMarker == "" {
		return
	}
	r.Exercise()
	m := p.HomeCtx.V.RestoreMarker
	for _, got := range c.returned[e.Workspace] {
		if got == m {
			return
		}
	}
	r.Flag(e.Workspace, e.At, fmt.Sprintf("restore_marker %q stored while RESTORING, but no restore of the workspace since the claim returned it (returned: %q)", m, c.returned[e.Workspace]), e.Seq)
}
