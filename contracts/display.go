package contracts

// DisplayState is the state shown to users (SPEC 1.3).
type DisplayState string

// Display states.
const (
	DisplayDeleted  DisplayState = "DELETED"
	DisplayError    DisplayState = "ERROR"
	DisplayRunning  DisplayState = "RUNNING"
	DisplayStandby  DisplayState = "STANDBY"
	DisplayPending  DisplayState = "PENDING"
	DisplayArchived DisplayState = "ARCHIVED"
)

// AllDisplay lists every display state.
var AllDisplay = []DisplayState{DisplayPending, DisplayArchived, DisplayStandby, DisplayRunning, DisplayError, DisplayDeleted}

// Display derives the display state of w (SPEC 1.3).
func Display(w *Workspace) DisplayState {
	switch {
	case w.ObservedStatus == ObservedDeleted:
		return DisplayDeleted
	case w.HealthStatus == HealthError:
		return DisplayError
	case w.ObservedStatus == ObservedRunning:
		return DisplayRunning
	case w.ObservedStatus == ObservedStandby:
		return DisplayStandby
	case w.ArchiveKey != "":
		return DisplayArchived
	}
	return DisplayPending
}
