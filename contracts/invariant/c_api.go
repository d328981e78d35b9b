package invariant

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// apiRules: SPEC 4.3, the API's writes.
//
//   - POST creates a workspace with last_access_at = now (its TTLs count
//     from its creation);
//   - recovery (the administrator's only write) resets error_info and
//     error_count in one write (the endpoint's row of the table; the rules
//     below it add error_message, which the row leaves out, so it is not
//     asked for);
//   - a workspace in ERROR (a terminal error_info) takes no desired-state
//     change until it is recovered (409); DELETE, which also writes
//     desired PENDING, is allowed;
//   - DELETE is a soft delete: deleted_at = now and desired_state =
//     PENDING, in one write.
//
// Evidence: inserts and applied writes of the API service layer (for the
// user, the administrator, or on behalf of the TTL Manager or the proxy),
// and the row before each.
type apiRules struct{ base }

func (*apiRules) Name() string     { return "api-rules" }
func (*apiRules) Contract() string { return "4.3" }

func (*apiRules) Observe(s *State, e *history.Event, r *Report) {
	switch {
	case e.Kind == history.KindInsert && e.Err == "" && e.Row != nil:
		r.Exercise()
		if d := e.Row.LastAccessAt.Sub(e.At); d < -LastAccessSlack || d > LastAccessSlack {
			r.Flag(e.Row.ID, e.At, fmt.Sprintf("workspace created with last_access_at %s, not the time of its creation", stamp(e.Row.LastAccessAt)), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAdmin:
		r.Exercise()
		p := e.Patch
		if !p.ErrorInfo.Set || p.ErrorInfo.V != nil || !p.ErrorCount.Set || p.ErrorCount.V != 0 {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("recovery wrote %v: error_info = null and error_count = 0 are reset together", p.Columns()), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAPI && e.Patch.DeletedAt.Set:
		r.Exercise()
		p := e.Patch
		if !p.DesiredState.Set || p.DesiredState.V != contracts.DesiredPending || p.DeletedAt.V.IsZero() {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("DELETE wrote %v (deleted_at %s): a soft delete sets deleted_at = now and desired_state = PENDING in one write",
				p.Columns(), stamp(p.DeletedAt.V)), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAPI && e.Patch.DesiredState.Set:
		w := s.Row(e.Workspace)
		if w == nil {
			return
		}
		r.Exercise()
		if w.Terminal() && e.Patch.DesiredState.V != w.DesiredState {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("desired_state changed from %s to %s %swhile the workspace is in ERROR (%s, terminal): 409 until it is recovered",
				w.DesiredState, e.Patch.DesiredState.V, onBehalf(e), w.ErrorInfo.Reason), e.Seq)
		}
	}
}

// onBehalf names whom an API write was made for ("on behalf of
// ttl_manager "), or "".
func onBehalf(e *history.Event) string {
	if e.Args != "" {
		return e.Args + " "
	}
	return ""
}
