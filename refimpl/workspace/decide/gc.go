package decide

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
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

// GCObject is one archive of the bucket listing with its checksum object:
// the Archive GC judges the two together, under the archive's key and
// orphan timer. A .meta whose archive is not listed is an orphan too.
type GCObject struct {
	// Key is the archive's key (the .meta's is contracts.MetaKey(Key)).
	Key string
	// Archive and Meta say which of the two objects the listing holds.
	Archive, Meta bool
}

// GCObjects pairs each listed archive with its .meta, in key order: the
// order of the pass.
func GCObjects(objs []ports.ObjectInfo) []GCObject {
	at := make(map[string]int, len(objs))
	var out []GCObject
	for _, o := range objs {
		key, isMeta := o.Key, contracts.IsMetaKey(o.Key)
		if isMeta {
			key = contracts.ArchiveOfMeta(key)
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, GCObject{Key: key})
		}
		if isMeta {
			out[i].Meta = true
		} else {
			out[i].Archive = true
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// GCInput is what the Archive GC knows of one object on one pass.
type GCInput struct {
	Object GCObject
	// Row is the workspace the archive's key names, as the protection set
	// holds it, or nil.
	Row *contracts.Workspace
	// Timer is the object's orphan timer as read (contracts.OrphanTimerKey),
	// and TimerSet whether it was set.
	Timer    string
	TimerSet bool
	Now      time.Time
}

// GCDecision is the Archive GC's whole decision for one object (SPEC
// 4.5), as data: what GCDecide chose, and the steps that carry it out in
// order. The shell performs the steps and decides nothing.
type GCDecision struct {
	Action GCAction
	Steps  []GCStep
}

// GCStepKind says what a GCStep does.
type GCStepKind int

// GC step kinds.
const (
	// GCDoClearTimer deletes the orphan timer Key.
	GCDoClearTimer GCStepKind = iota
	// GCDoStartTimer sets the orphan timer Key to Value (the first
	// sighting, unix seconds) unless it is set.
	GCDoStartTimer
	// GCDoCheckLease re-checks the leader lock: every object deletion
	// follows one (SPEC 3.1).
	GCDoCheckLease
	// GCDoDelete deletes object Key.
	GCDoDelete
)

var gcStepNames = [...]string{"clear-timer", "start-timer", "check-lease", "delete"}

func (k GCStepKind) String() string {
	if int(k) < len(gcStepNames) {
		return gcStepNames[k]
	}
	return fmt.Sprintf("gc-step(%d)", int(k))
}

// GCStep is one thing the GC's shell does.
type GCStep struct {
	Kind       GCStepKind
	Key, Value string
}

// GC is the Archive GC's decision for one object: protection (C9), then
// GCDecide on the orphan timer; a deletion removes the archive and its
// .meta (those listed), each after a lease re-check, and then the timer.
// An unreadable timer counts as unset: it starts again.
func GC(in GCInput) GCDecision {
	first, set := OrphanSince(in.Timer, in.TimerSet)
	key, timer := in.Object.Key, contracts.OrphanTimerKey(in.Object.Key)
	d := GCDecision{Action: GCDecide(Protected(in.Row, key), first, set, in.Now)}
	switch d.Action {
	case GCClearTimer:
		if set {
			d.Steps = append(d.Steps, GCStep{Kind: GCDoClearTimer, Key: timer})
		}
	case GCStartTimer:
		d.Steps = append(d.Steps, GCStep{Kind: GCDoStartTimer, Key: timer, Value: strconv.FormatInt(in.Now.Unix(), 10)})
	case GCDelete:
		if in.Object.Archive {
			d.Steps = append(d.Steps, GCStep{Kind: GCDoCheckLease}, GCStep{Kind: GCDoDelete, Key: key})
		}
		if in.Object.Meta {
			d.Steps = append(d.Steps, GCStep{Kind: GCDoCheckLease}, GCStep{Kind: GCDoDelete, Key: contracts.MetaKey(key)})
		}
		d.Steps = append(d.Steps, GCStep{Kind: GCDoClearTimer, Key: timer})
	}
	return d
}

// OrphanSince reads an orphan timer's value: the first sighting, and
// whether the timer counts as set (a value that is no unix time does not).
func OrphanSince(value string, set bool) (first time.Time, ok bool) {
	if !set {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}
