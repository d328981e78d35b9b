package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// releaseCause: SPEC 3, "Failures": "A failure that concerns one
// workspace skips that workspace for this tick. A failure of a
// component's whole tick (a listing or a query) skips the tick. A failure
// of the coordinator's own loop, of its lock session, or a write refused
// as fenced, makes the instance give up leadership at once". Only the
// last kind ends a leadership: a leader that releases the lock because a
// listing, a query or an actuator call failed hands the fleet over (and
// restarts every component's schedule) for a failure SPEC has it skip.
//
// Judged on each release of the lock recorded for an instance: in the
// step it is made in (the same instant, on virtual time), the instance's
// lock session must have failed it (a failed lock check or lock call, a
// write refused as fenced or as not the leader's, a lost answer to a lock
// call, its session killed or deposed). A release with none of these is a
// leadership given up for a failure that only skips a tick. (A process
// shut down releases too; the simulator shuts none down before the end.)
type releaseCause struct {
	base
	// why: each instance's latest reason to give up, with its instant.
	why map[string]time.Time
}

func (*releaseCause) Name() string     { return "release-cause" }
func (*releaseCause) Contract() string { return "3" }

// lockFailure reports whether e shows its instance's lock session failing
// it (SPEC 3's causes to give up leadership).
func lockFailure(e *history.Event) bool {
	switch e.Kind {
	case history.KindCall:
		if (e.Method == MLockCheck || e.Method == MTryAcquire || e.Method == MRelease) && e.Err != "" {
			return true
		}
	case history.KindFault:
		switch e.Method {
		case FDepose, FKillSession, FCrashAtCall:
			return true
		case FLostResp:
			return e.Args == MLockCheck || e.Args == MTryAcquire || e.Args == "store"
		}
	}
	return refusedAsFenced(e) || (e.Err != "" && strings.Contains(e.Err, contracts.ErrNotLeader.Error()))
}

func (c *releaseCause) Observe(_ *State, e *history.Event, r *Report) {
	if c.why == nil {
		c.why = map[string]time.Time{}
	}
	if e.Instance == "" {
		return
	}
	if e.Kind == history.KindCrash {
		delete(c.why, e.Instance)
		return
	}
	if lockFailure(e) {
		c.why[e.Instance] = e.At
		return
	}
	if e.Kind != history.KindLeader || e.Method != "release" {
		return
	}
	r.Exercise()
	if at, ok := c.why[e.Instance]; ok && at.Equal(e.At) {
		return
	}
	r.Flag("", e.At, fmt.Sprintf("%s released the leader lock (epoch %d) with no failure of its lock session, no refused write and no failed lock check in that step (SPEC 3: only those end a leadership; a failed listing, query or call only skips a tick or a workspace)",
		e.Instance, e.Epoch), e.Seq)
}
