package workspace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// MObjList is a listing of the bucket under a prefix (Args); a GC pass
// begins with one (SPEC 4.5: "List archives/ in the bucket").
const MObjList = "objects.List"

// GCDueSlack is how much longer than specOrphanDelay an object must
// have been seen orphaned before the pass that sees it owes its deletion:
// timers kept in whole seconds, and a GC that deletes once its timer is
// strictly older than 2 h, both pass.
const GCDueSlack = time.Minute

// GCNextPass is how long after a pass a listing is taken for another
// pass (a pass that lists page by page makes several listings at once).
const GCNextPass = 5 * time.Minute

// gcOrphans: SPEC 4.5 ("timer older than 2 h → delete the archive and its
// .meta"; "a .meta without its archive is an orphan too") and SPEC 6,
// scenario 7 ("the archives become unprotected and GC removes them after
// 2 h"). C9 bounds deletion from below; this bounds it from above, on the
// GC's own passes: once an object has been seen unprotected by passes
// more than OrphanDelay (+ GCDueSlack) apart, the latest of them should
// have deleted it, and a later pass that still lists it shows the GC did
// not. No period is assumed: a GC judged so times its orphans, however
// seldom it runs.
//
// A pass is a successful listing by a coordinator that has led, unless a
// store call of the same instance fails within GCQueryWindow (its
// protection query failed: it skipped the cycle, 4.5). What may make a
// correct GC lose or misread its timers starts every orphan's time again:
// a failed bus call or a lost answer during a pass (a timer not started,
// not read), a flush of the bus ("losing Redis timers only delays
// deletion"), a crash or a change of leadership. An object is counted
// protected at a pass if it was so at the listing or at the pass's end,
// or if its workspace's row was written in between (the pass reads the
// protection set after listing). A failed delete skips the object (4.5),
// and its pair (an archive and its .meta go together): the pass that
// tried owes neither, the next pass owes them again.
//
// Evidence: objects.List and objects.Delete calls of coordinator
// instances, their store and bus calls, the objects and rows replayed from
// the history, crashes, leadership changes and faults.
type gcOrphans struct {
	init bool
	pass *gcPass
	// since: object key → the first pass of its current orphaned streak.
	since map[string]time.Time
	// owed: object key → the pass that should have deleted it.
	owed map[string]gcOwed
}

type gcPass struct {
	instance          string
	at                time.Time
	seq               int64
	objects           []gcSeen
	failed, disturbed bool
	written           map[string]bool // workspaces written during the pass
	// skipped: objects whose delete failed during the pass, with their
	// pairs; the pass owes none of them.
	skipped map[string]bool
}

type gcSeen struct {
	key, workspace string
	protected      bool
}

type gcOwed struct {
	at, since time.Time
}

func (*gcOrphans) Name() string     { return "gc-deletes-orphans" }
func (*gcOrphans) Contract() string { return "4.5" }

func (c *gcOrphans) Observe(s *State, e *history.Event, r *Report) {
	if !c.init {
		c.init = true
		c.since, c.owed = map[string]time.Time{}, map[string]gcOwed{}
	}
	if c.pass != nil && e.At.Sub(c.pass.at) > GCQueryWindow {
		c.settle(s, r)
	}
	p := c.pass
	switch {
	case e.Kind == history.KindCall && e.Method == MObjList && e.Err == "" && s.Leader.EpochOf[e.Instance] > 0:
		if p != nil {
			c.settle(s, r)
		}
		c.begin(s, e)
	case p != nil && e.Kind == history.KindCall && e.Instance == p.instance && e.Err != "" && strings.HasPrefix(e.Method, "store."):
		p.failed = true
	case p != nil && e.Kind == history.KindCall && e.Instance == p.instance && e.Err != "" && strings.HasPrefix(e.Method, "bus."):
		p.disturbed = true
	case p != nil && e.Kind == history.KindFault && (e.Method == FLostResp || e.Method == FLostWindow || e.Method == FOutage):
		p.disturbed = true
	case p != nil && ((e.Kind == history.KindWrite && e.Applied) || (e.Kind == history.KindInsert && e.Err == "")):
		p.written[e.Workspace] = true
	case e.Kind == history.KindCall && e.Method == MObjDelete && e.Err != "":
		// Skipped (4.5): neither an earlier pass nor the open one owes it
		// or its pair now; the next pass does.
		for _, key := range gcPair(e.Args) {
			delete(c.owed, key)
			if p != nil {
				p.skipped[key] = true
			}
		}
	case e.Kind == history.KindCall && e.Method == MObjDelete:
		if _, timed := c.since[e.Args]; timed {
			r.Exercise() // an orphan it timed, deleted
		}
	}
	if (e.Kind == history.KindFault && e.Method == FFlushBus) || e.Kind == history.KindLeader || e.Kind == history.KindCrash ||
		leftLead(e) || tookLeadUnawares(e) {
		c.restart()
	}
}

// begin opens the pass that e's listing starts: the objects it lists,
// each with its protection at the listing.
func (c *gcOrphans) begin(s *State, e *history.Event) {
	p := &gcPass{instance: e.Instance, at: e.At, seq: e.Seq, written: map[string]bool{}, skipped: map[string]bool{}}
	for key := range s.World.Objects {
		if !strings.HasPrefix(key, e.Args) {
			continue
		}
		id, _, ok := specParseArchiveKey(key)
		if !ok {
			continue
		}
		p.objects = append(p.objects, gcSeen{key: key, workspace: id, protected: specProtected(s.Row(id), key)})
	}
	sort.Slice(p.objects, func(i, j int) bool { return p.objects[i].key < p.objects[j].key })
	c.pass = p
}

// restart forgets every orphan's time: the GC may have lost its timers.
func (c *gcOrphans) restart() {
	clear(c.since)
	clear(c.owed)
	if c.pass != nil {
		c.pass.disturbed = true
	}
}

// settle closes the open pass: it flags what an earlier pass should have
// deleted and this one still listed, and times the rest.
func (c *gcOrphans) settle(s *State, r *Report) {
	p := c.pass
	c.pass = nil
	if p.failed { // the protection query failed: the pass skipped its cycle
		return
	}
	if p.disturbed {
		c.restart()
		return
	}
	listed := make(map[string]bool, len(p.objects))
	for _, o := range p.objects {
		listed[o.key] = true
		if o.protected || p.written[o.workspace] || specProtected(s.Row(o.workspace), o.key) {
			delete(c.since, o.key)
			delete(c.owed, o.key)
			continue
		}
		if owed, ok := c.owed[o.key]; ok && p.at.Sub(owed.at) >= GCNextPass {
			r.Flag(o.workspace, p.at, fmt.Sprintf("%s, orphaned since the GC pass at %s, is still there at the pass at %s: the pass at %s, %s after it was first seen orphaned, should have deleted it (a timer older than %s)",
				o.key, stamp(owed.since), stamp(p.at), stamp(owed.at), owed.at.Sub(owed.since), specOrphanDelay), p.seq)
			delete(c.owed, o.key)
			delete(c.since, o.key)
			continue
		}
		first, ok := c.since[o.key]
		if !ok {
			c.since[o.key] = p.at
			continue
		}
		if _, ok := c.owed[o.key]; !ok && !p.skipped[o.key] && p.at.Sub(first) > specOrphanDelay+GCDueSlack {
			r.Exercise()
			c.owed[o.key] = gcOwed{at: p.at, since: first}
		}
	}
	for key := range c.since {
		if !listed[key] {
			delete(c.since, key)
		}
	}
	for key := range c.owed {
		if !listed[key] {
			delete(c.owed, key)
		}
	}
}

// gcPair returns key and the object deleted with it: an archive's .meta,
// or a .meta's archive.
func gcPair(key string) []string {
	if contracts.IsMetaKey(key) {
		return []string{key, contracts.ArchiveOfMeta(key)}
	}
	return []string{key, contracts.MetaKey(key)}
}

func (c *gcOrphans) Finish(s *State, _ *Final, r *Report) {
	if c.pass != nil {
		c.settle(s, r)
	}
}
