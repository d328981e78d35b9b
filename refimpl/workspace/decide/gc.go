package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

// OrphanDelay is how long an archive must be seen orphaned before deletion.
const OrphanDelay = 2 * time.Hour

// Protected reports whether archive (or checksum) object key is protected by
// workspace w (C9). w must be the row of the workspace the key belongs to,
// or nil if no such row exists.
func Protected(w *contracts.Workspace, key string) bool {
	if w == nil || w.Deleted() {
		return false
	}
	archive := key
	if contracts.IsMetaKey(key) {
		archive = contracts.ArchiveOfMeta(key)
	}
	if w.ArchiveKey != "" && archive == w.ArchiveKey {
		return true
	}
	id, opID, ok := contracts.ParseArchiveKey(archive)
	if !ok || id != w.ID {
		return false
	}
	if w.OpID != "" && opID == w.OpID {
		return true
	}
	return w.HealthStatus == contracts.HealthError || w.Terminal()
}

// GCAction is what the Archive GC does with one object.
type GCAction int

// GC actions (SPEC 4.5).
const (
	GCClearTimer GCAction = iota
	GCStartTimer
	GCWait
	GCDelete
)

func (a GCAction) String() string {
	return [...]string{"clear-timer", "start-timer", "wait", "delete"}[a]
}

// GCDecide decides one object: protected clears its timer; an unprotected
// one starts a timer on first sighting and is deleted once the timer is
// older than OrphanDelay.
func GCDecide(protected bool, firstSeen time.Time, timerSet bool, now time.Time) GCAction {
	switch {
	case protected:
		return GCClearTimer
	case !timerSet:
		return GCStartTimer
	case now.Sub(firstSeen) >= OrphanDelay:
		return GCDelete
	}
	return GCWait
}
