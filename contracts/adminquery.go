package contracts

// AdminQuery selects workspaces for an administrator's listing (GET
// /api/v1/admin/workspaces): every field that is set must match. Without
// a display filter DELETED workspaces are left out (they are history, not
// something to act on); display=DELETED asks for them.
type AdminQuery struct {
	Health  HealthStatus
	Display DisplayState
}

// Match reports whether w is selected by q.
func (q AdminQuery) Match(w *Workspace) bool {
	d := Display(w)
	switch {
	case q.Health != "" && w.HealthStatus != q.Health:
		return false
	case q.Display != "":
		return d == q.Display
	}
	return d != DisplayDeleted
}
