package contracts

// Filter selects workspace rows. Every store implements each filter with the
// same meaning as Match (the contracttest suite checks it); SQL stores back
// them with the partial indexes of SPEC 1.1.
type Filter int

// Filters.
const (
	// FilterAll: every row, DELETED included.
	FilterAll Filter = iota
	// FilterActive: observed_status != DELETED (what the HealthMonitor observes).
	FilterActive
	// FilterReconcile: the reconcile targets: operation ≠ NONE, or active and
	// (observed ≠ desired, health ERROR, error_info set, or soft-deleted).
	FilterReconcile
	// FilterTTL: TTL candidates: not deleted, observed RUNNING or STANDBY,
	// health OK, operation NONE.
	FilterTTL
	// FilterRunning: counted by the limits (CountsRunning: live, health OK,
	// desired or observed RUNNING).
	FilterRunning
)

// Match reports whether w is selected by f.
func (f Filter) Match(w *Workspace) bool {
	switch f {
	case FilterAll:
		return true
	case FilterActive:
		return w.ObservedStatus != ObservedDeleted
	case FilterReconcile:
		if w.Operation != OpNone {
			return true
		}
		return w.ObservedStatus != ObservedDeleted &&
			(string(w.ObservedStatus) != string(w.DesiredState) ||
				w.HealthStatus == HealthError || w.ErrorInfo != nil || w.Deleted())
	case FilterTTL:
		return !w.Deleted() && (w.ObservedStatus == ObservedRunning || w.ObservedStatus == ObservedStandby) &&
			w.HealthStatus == HealthOK && w.Operation == OpNone
	case FilterRunning:
		return CountsRunning(w)
	}
	return false
}
