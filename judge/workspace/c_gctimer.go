package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts/history"
)

// MSetNX is a bus SetNX (set when absent). The simulator records one only
// when it gives its key an expiry (sim/workspace/recorded).
const MSetNX = "bus.SetNX"

// gcTimerNoExpiry: SPEC 4.5, step 3: "unprotected, no timer → start one,
// recording when the object was first seen orphaned (one bus key per
// archive; the key must not expire by itself)". A timer that expires
// starts the 2 h again whenever it lapses, so an orphan whose timer lives
// shorter than 2 h is never deleted, and one that lives longer is deleted
// late at random.
//
// Judged on the bus keys a coordinator instance (one that took part in
// the election) sets, successfully, with an expiry (a bus.Set or bus.SetNX
// whose Args carry " ttl="): SPEC gives a coordinator no bus key to write
// but the GC's orphan timers (the activity keys ws_conn:{id} and
// idle_timer:{id} of 1.4 are the proxy's, and are left out whoever sets
// them), so every such key is a timer, and none may expire. SPEC names no
// key for a timer, so the checker does not rely on one.
//
// The situation counted is one in which a timer must be started: a GC pass
// (a successful listing of archives/ by a coordinator that has led) that
// finds an object under archives/ unprotected (C9) by the rows as
// replayed.
type gcTimerNoExpiry struct{ base }

func (*gcTimerNoExpiry) Name() string     { return "gc-timer-no-expiry" }
func (*gcTimerNoExpiry) Contract() string { return "4.5" }

func (c *gcTimerNoExpiry) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindCall || e.Err != "" || s.Leader.EpochOf[e.Instance] == 0 {
		return
	}
	switch e.Method {
	case MObjList:
		if strings.HasPrefix(specArchivePrefix, e.Args) && c.orphanSeen(s) {
			r.Exercise()
		}
	case "bus.Set", MSetNX:
		key, ttl, ok := busKeyTTL(e.Args)
		if !ok || strings.HasPrefix(key, "ws_conn:") || strings.HasPrefix(key, "idle_timer:") {
			return
		}
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s set bus key %s with an expiry (%s): the GC's orphan timer, a coordinator's only bus key, must not expire by itself (SPEC 4.5)",
			e.Instance, key, ttl), e.Seq)
	}
}

// orphanSeen reports whether some object under archives/ is unprotected
// by the rows as they stand.
func (*gcTimerNoExpiry) orphanSeen(s *State) bool {
	for key := range s.World.Objects {
		if !strings.HasPrefix(key, specArchivePrefix) {
			continue
		}
		archive := key
		if specIsMetaKey(key) {
			archive = specArchiveOfMeta(key)
		}
		id, _, ok := specParseArchiveKey(archive)
		if !ok || !specProtected(s.Row(id), key) {
			return true
		}
	}
	return false
}

// busKeyTTL reads a recorded bus write's Args ("key=value ttl=D"): its key
// and expiry, ok only when it has one.
func busKeyTTL(args string) (key, ttl string, ok bool) {
	i := strings.LastIndex(args, " ttl=")
	if i < 0 {
		return "", "", false
	}
	key, _, _ = strings.Cut(args[:i], "=")
	return key, args[i+len(" ttl="):], true
}
