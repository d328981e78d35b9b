package workspace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// containerVolume: C6. A container without its volume is flagged ERROR by
// the HealthMonitor (within two full observation passes), and STARTING is
// never attempted on a workspace the DB last saw without a volume.
type containerVolume struct {
	base
	since  map[string]time.Time // id → when the violation began
	passes map[string]int       // id → health passes since it began
	flaged map[string]bool
}

func (*containerVolume) Name() string     { return "c6-container-volume" }
func (*containerVolume) Contract() string { return "C6" }
func (c *containerVolume) Observe(s *State, e *history.Event, r *Report) {
	if c.since == nil {
		c.since, c.passes, c.flaged = map[string]time.Time{}, map[string]int{}, map[string]bool{}
	}
	if e.Kind == history.KindCall && e.Method == MStart && s.Leader.EpochOf[e.Instance] > 0 {
		if row := s.Row(e.Workspace); row != nil && row.ObservedStatus != contracts.ObservedStandby && row.ObservedStatus != contracts.ObservedRunning {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("start attempted while the DB last saw the workspace %s (no volume)", row.ObservedStatus), e.Seq)
		}
	}
	if e.Kind == history.KindNote && e.Method == NoteHealthPass {
		ids := make([]string, 0, len(c.since))
		for id := range c.since {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			row := s.Row(id)
			if row == nil || row.ObservedStatus == contracts.ObservedDeleted {
				continue
			}
			if row.HealthStatus == contracts.HealthError {
				r.Exercise()
				delete(c.since, id)
				delete(c.passes, id)
				continue
			}
			c.passes[id]++
			if c.passes[id] > 2 && !c.flaged[id] {
				c.flaged[id] = true
				r.Flag(id, e.At, fmt.Sprintf("container without volume since %s left unflagged after %d observation passes", c.since[id].UTC().Format(time.RFC3339), c.passes[id]-1), e.Seq)
			}
		}
	}
}

// AfterApply records when container-without-volume began or ended for the
// workspace the event touched.
func (c *containerVolume) AfterApply(s *State, e *history.Event, _ *Report) {
	if e.Workspace == "" || c.since == nil {
		return
	}
	id, at := e.Workspace, e.At
	_, hasC := s.World.Containers[id]
	bad := hasC && !s.World.Volumes[id]
	if !bad {
		delete(c.since, id)
		delete(c.passes, id)
		return
	}
	if _, ok := c.since[id]; !ok {
		c.since[id] = at
		c.passes[id] = 0
	}
}

// archiveIdempotent: C7. One op_id per ARCHIVING, archive keys equal to the
// op_id's expected key, no re-upload of a complete archive, and RESTORING
// completes only after a successful restore of archive_key.
type archiveIdempotent struct {
	base
	restored map[string]string // id → key restored since RESTORING was claimed
}

func (*archiveIdempotent) Name() string     { return "c7-archive-idempotent" }
func (*archiveIdempotent) Contract() string { return "C7" }
func (c *archiveIdempotent) Observe(s *State, e *history.Event, r *Report) {
	if c.restored == nil {
		c.restored = map[string]string{}
	}
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	switch {
	case e.Kind == history.KindCall && e.Method == MArchive && e.Err == "":
		r.Exercise()
		key := e.Result
		uploaded := false
		if k, ok := cutPrefix(key, ArchiveUploaded); ok {
			key, uploaded = k, true
		} else if k, ok := cutPrefix(key, ArchiveSkipped); ok {
			key = k
		} else if k, ok := cutPrefix(key, ArchiveDone); ok {
			key = k
		}
		if row.OpID == "" || key != specArchiveKey(row.ID, row.OpID) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("archive produced key %q, not the expected key of op_id %q", key, row.OpID), e.Seq)
		}
		_, hasA := s.World.Objects[key]
		_, hasM := s.World.Objects[specMetaKey(key)]
		if uploaded && hasA && hasM {
			r.Flag(e.Workspace, e.At, "a complete archive (object and .meta) was uploaded again: "+key, e.Seq)
		}
	case e.Kind == history.KindCall && e.Method == MRestore && e.Err == "" && row.Operation == contracts.OpRestoring:
		c.restored[e.Workspace] = strings.TrimSpace(e.Result)
	case reconcilerWrite(e):
		p := e.Patch
		if row.Operation == contracts.OpArchiving && p.OpID.Set && row.OpID != "" && p.OpID.V != "" && p.OpID.V != row.OpID {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("op_id changed from %s to %s during ARCHIVING: the archive would be uploaded again under a new key", row.OpID, p.OpID.V), e.Seq)
		}
		if p.ArchiveKey.Set && p.ArchiveKey.V != "" {
			a := after(row, p, e.At)
			if a.OpID == "" || p.ArchiveKey.V != specArchiveKey(a.ID, a.OpID) {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("archive_key %q committed, not the expected key of op_id %q", p.ArchiveKey.V, a.OpID), e.Seq)
			}
		}
		switch classify(row, p) {
		case tClaim:
			if p.Operation.V == contracts.OpRestoring {
				delete(c.restored, e.Workspace)
			}
		case tComplete:
			if row.Operation == contracts.OpRestoring {
				r.Exercise()
				if row.RestoreMarker() != row.ArchiveKey || row.ArchiveKey == "" {
					r.Flag(e.Workspace, e.At, fmt.Sprintf("RESTORING completed with restore_marker %q ≠ archive_key %q", row.RestoreMarker(), row.ArchiveKey), e.Seq)
				} else if c.restored[e.Workspace] != row.ArchiveKey {
					r.Flag(e.Workspace, e.At, "RESTORING completed without a successful restore of "+row.ArchiveKey, e.Seq)
				}
			}
		}
	}
}

// ordering: C8. archive_key is committed before the volume is deleted, and
// the container is gone before the volume.
type ordering struct{ base }

func (*ordering) Name() string     { return "c8-ordering" }
func (*ordering) Contract() string { return "C8" }
func (*ordering) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindCall || e.Method != MDeleteVolume {
		return
	}
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	if row.Operation == contracts.OpArchiving {
		r.Exercise()
		if row.OpID == "" || row.ArchiveKey != specArchiveKey(row.ID, row.OpID) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("volume deletion attempted before archive_key was committed (archive_key %q, op_id %q)", row.ArchiveKey, row.OpID), e.Seq)
		}
	}
	if _, hasC := s.World.Containers[e.Workspace]; hasC && e.Err == "" {
		r.Flag(e.Workspace, e.At, "volume deleted while its container still exists", e.Seq)
	}
}

// gcProtection: C9. No protected archive is deleted; an unprotected one
// only after 2 h continuously orphaned.
type gcProtection struct {
	base
	// lastProtected: object key → last time a GC pass saw it protected
	// (or it was written).
	lastProtected map[string]time.Time
	byWorkspace   map[string]map[string]bool
	// undo holds the sightings the latest GC pass counted (their earlier
	// times), until its protection query is known not to have failed: a
	// pass whose DB query fails skips its cycle (SPEC 4.5) and saw
	// nothing; one that cannot read or clear an archive's timer skips
	// that archive.
	undo     map[string]time.Time
	undoInst string
	undoAt   time.Time
}

// GCQueryWindow is how soon after a GC pass's listing a failed DB call of
// the same instance is taken for the failure of that pass's protection
// query.
const GCQueryWindow = 5 * time.Second

func (*gcProtection) Name() string     { return "c9-gc-protection" }
func (*gcProtection) Contract() string { return "C9" }

func (c *gcProtection) refresh(s *State, id string, at time.Time) {
	row := s.Row(id)
	for key := range c.byWorkspace[id] {
		if specProtected(row, key) {
			if _, kept := c.undo[key]; !kept {
				c.undo[key] = c.lastProtected[key]
			}
			c.lastProtected[key] = at
		}
	}
}

func (c *gcProtection) Observe(s *State, e *history.Event, r *Report) {
	if c.lastProtected == nil {
		c.lastProtected, c.byWorkspace, c.undo = map[string]time.Time{}, map[string]map[string]bool{}, map[string]time.Time{}
	}
	if len(c.undo) > 0 {
		switch {
		case e.At.Sub(c.undoAt) > GCQueryWindow:
			clear(c.undo)
		case e.Kind == history.KindCall && e.Instance == c.undoInst && e.Err != "" && strings.HasPrefix(e.Method, "store."):
			for key, t := range c.undo { // the pass's protection query failed
				c.lastProtected[key] = t
			}
			clear(c.undo)
		case e.Kind == history.KindCall && e.Instance == c.undoInst && e.Err != "" && strings.HasPrefix(e.Method, "bus."):
			// The pass could not read or clear one archive's timer: it
			// skipped that archive (SPEC 4.5), and its sighting with it.
			// SPEC names no timer key; one key per archive names the
			// archive, so the archive is the one the key contains, and
			// every one the pass saw when none is named.
			timer, _, _ := strings.Cut(e.Args, "=")
			named := false
			for key := range c.undo {
				if !specIsMetaKey(key) && strings.Contains(timer, key) {
					named = true
					c.restore(key)
					c.restore(specMetaKey(key))
				}
			}
			if !named {
				for key := range c.undo {
					c.restore(key)
				}
			}
		}
	}
	// Objects written by this event are tracked from now on.
	noteObject := func(key string) {
		id, _, ok := specParseArchiveKey(key)
		if !ok {
			return
		}
		if c.byWorkspace[id] == nil {
			c.byWorkspace[id] = map[string]bool{}
		}
		if !c.byWorkspace[id][key] {
			// A key never written before: the GC cannot have seen it
			// orphaned yet. A key written again keeps its orphan time,
			// whether the object was still there (a storage job that
			// crashed before its .meta, then ran again) or had gone
			// meanwhile: SPEC 4.5 times each archive by its key (one
			// Redis timer per archive), so sightings of the key count.
			c.lastProtected[key] = e.At
		}
		c.byWorkspace[id][key] = true
	}
	switch {
	case e.Kind == history.KindCall && e.Method == MArchive && e.Err == "":
		if key, ok := cutPrefix(e.Result, ArchiveUploaded); ok {
			noteObject(key)
			noteObject(specMetaKey(key))
		} else if key, ok := cutPrefix(e.Result, ArchiveDone); ok {
			if _, had := s.World.Objects[key]; !had {
				noteObject(key)
				noteObject(specMetaKey(key))
			}
		}
	case e.Kind == history.KindCall && e.Method == MObjPut && e.Err == "":
		noteObject(e.Args)
	case e.Kind == history.KindCall && e.Method == MObjList && e.Err == "" && s.Leader.EpochOf[e.Instance] > 0:
		// A GC pass: count the protected archives it meets.
		for key := range s.World.Objects {
			id, _, ok := specParseArchiveKey(key)
			if ok && !specIsMetaKey(key) && specProtected(s.Row(id), key) {
				r.Exercise()
			}
		}
		// Orphan time is counted between the GC's sightings (SPEC 4.5: a
		// timer starts at the first unprotected sighting and is cleared at
		// a protected one); protection that came and went between two
		// passes was never seen and does not restart the clock. A failed
		// listing sees nothing.
		clear(c.undo)
		c.undoInst, c.undoAt = e.Instance, e.At
		ids := make([]string, 0, len(c.byWorkspace))
		for id := range c.byWorkspace {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			c.refresh(s, id, e.At)
		}
	case e.Kind == history.KindCall && e.Method == MObjDelete:
		key := e.Args
		id, _, _ := specParseArchiveKey(key)
		row := s.Row(id)
		if specProtected(row, key) {
			r.Flag(id, e.At, "deleted protected object "+key+" ("+protectionWhy(row, key)+")", e.Seq)
		} else if last, ok := c.orphanSince(key); ok && e.At.Sub(last) < specOrphanDelay {
			r.Flag(id, e.At, fmt.Sprintf("deleted %s after only %s orphaned (needs %s)", key, e.At.Sub(last), specOrphanDelay), e.Seq)
		} else {
			r.Exercise()
		}
		if m := c.byWorkspace[id]; m != nil {
			delete(m, key)
		}
	}
}

// restore takes back the sighting of key the latest pass counted.
func (c *gcProtection) restore(key string) {
	if t, kept := c.undo[key]; kept {
		c.lastProtected[key] = t
		delete(c.undo, key)
	}
}

// orphanSince is when key was last protected. A .meta goes with its
// archive (SPEC 4.5: the timer is the archive's): it is judged by its
// archive's time when the archive is known, its own otherwise (a .meta
// without its archive is an orphan of its own).
func (c *gcProtection) orphanSince(key string) (time.Time, bool) {
	if specIsMetaKey(key) {
		if last, ok := c.lastProtected[specArchiveOfMeta(key)]; ok {
			return last, true
		}
	}
	last, ok := c.lastProtected[key]
	return last, ok
}

func protectionWhy(row *contracts.Workspace, key string) string {
	switch {
	case row == nil:
		return "no row"
	case row.ArchiveKey != "" && strings.HasPrefix(key, row.ArchiveKey):
		return "it is the archive_key"
	case row.OpID != "" && strings.HasPrefix(key, specOpPrefix(row.ID, row.OpID)):
		return "op_id " + row.OpID + " is set"
	}
	return "the workspace is in ERROR"
}
