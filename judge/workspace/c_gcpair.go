package workspace

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// gcPairs: C9 ("an unprotected archive is deleted only after …; its
// .meta goes with it") and SPEC 4.5 ("delete the archive and its
// .meta"). When the GC deletes one of a pair (archive, .meta), it also
// tries to delete the other, if it exists, in the same cycle: before the
// next GC listing. A failed delete is an attempt (4.5: "a failed delete
// skips that object"); a GC that crashes or loses leadership in between
// (a failed lock check or a release included: SPEC 3.1 stops every
// component) is not held to it (the half left is an orphan the next cycles time).
//
// Evidence: objects.Delete calls and objects.List calls by coordinator
// instances, the objects replayed from the history, crashes and
// leadership changes.
type gcPairs struct {
	// owed: object key → the delete of its partner that calls for it.
	owed map[string]owedDelete
}

type owedDelete struct {
	instance, partner string
	seq               int64
}

func (*gcPairs) Name() string     { return "gc-meta-with-archive" }
func (*gcPairs) Contract() string { return "C9" }

// pairOf is the other object of key's pair: the .meta of an archive, the
// archive of a .meta.
func pairOf(key string) string {
	if specIsMetaKey(key) {
		return specArchiveOfMeta(key)
	}
	return specMetaKey(key)
}

func (c *gcPairs) Observe(s *State, e *history.Event, r *Report) {
	if c.owed == nil {
		c.owed = map[string]owedDelete{}
	}
	switch {
	case e.Kind == history.KindCrash, e.Kind == history.KindLeader, leftLead(e):
		// It stopped before its cycle ended: crashed, lost the lead, or
		// gave it up (a failed lock check stops every component, SPEC 3.1).
		c.forgive(e.Instance)
	case e.Kind == history.KindCall && e.Method == MObjList && s.Leader.EpochOf[e.Instance] > 0:
		c.settle(e.At, r)
	case e.Kind == history.KindCall && e.Method == MObjDelete && s.Leader.EpochOf[e.Instance] > 0:
		key := e.Args
		delete(c.owed, key) // an attempt, whatever its outcome
		if e.Err != "" {
			return
		}
		if _, _, ok := specParseArchiveKey(specArchiveOfMeta(key)); !ok {
			return
		}
		partner := pairOf(key)
		if _, exists := s.World.Objects[partner]; exists {
			r.Exercise()
			c.owed[partner] = owedDelete{instance: e.Instance, partner: key, seq: e.Seq}
		}
	}
}

// forgive drops what instance owed: it stopped before its cycle ended.
func (c *gcPairs) forgive(instance string) {
	for key, o := range c.owed {
		if o.instance == instance {
			delete(c.owed, key)
		}
	}
}

// settle flags every delete still owed when a new GC cycle begins.
func (c *gcPairs) settle(at time.Time, r *Report) {
	keys := make([]string, 0, len(c.owed))
	for key := range c.owed {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		o := c.owed[key]
		id, _, _ := specParseArchiveKey(specArchiveOfMeta(key))
		r.Flag(id, at, fmt.Sprintf("%s deleted %s but not %s in the same GC cycle", o.instance, o.partner, key), o.seq)
		delete(c.owed, key)
	}
}

func (c *gcPairs) Finish(_ *State, f *Final, r *Report) {
	if f != nil {
		c.settle(f.End, r)
	}
}
