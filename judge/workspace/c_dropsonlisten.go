package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// dropsListener: SPEC 3.1, "When a check fails it stops every component at
// once: it publishes nothing more, drops its subscriptions and listener,
// and returns to acquisition", and SPEC 3.1's "Release. A leader that
// gives up records the release, unlocks, and closes its lock session". An
// instance whose release the history shows has given the lead up and has
// no listener left: before it publishes on workspace:{id} again it listens
// anew (feed.Listen), and SPEC 4.6's republish after a reconnect follows
// from that listen. A crash ends the process, its listener with it. A
// failed check without a release is not judged here (gives-up-at-once
// judges what follows it while another instance holds the lock or none
// does).
type dropsListener struct {
	base
	// gaveUp: per instance, when it last gave the lead up and has not
	// listened since (absent: it has a listener, or none to drop).
	gaveUp map[string]gaveUpAt
}

type gaveUpAt struct {
	at      time.Time
	seq     int64
	flagged bool
}

func (*dropsListener) Name() string     { return "drops-listener" }
func (*dropsListener) Contract() string { return "3.1" }

func (c *dropsListener) Observe(_ *State, e *history.Event, r *Report) {
	if c.gaveUp == nil {
		c.gaveUp = map[string]gaveUpAt{}
	}
	if e.Instance == "" {
		return
	}
	switch {
	case e.Kind == history.KindCrash:
		delete(c.gaveUp, e.Instance)
	case e.Kind == history.KindLeader && e.Method == "release":
		if _, ok := c.gaveUp[e.Instance]; !ok {
			r.Exercise() // an instance gives the lead up: its listener is owed dropped
			c.gaveUp[e.Instance] = gaveUpAt{at: e.At, seq: e.Seq}
		}
	case e.Kind == history.KindCall && e.Method == MListen && e.Err == "":
		delete(c.gaveUp, e.Instance)
	case e.Kind == history.KindCall && e.Method == MPublish && strings.HasPrefix(e.Args, "workspace:"):
		g, ok := c.gaveUp[e.Instance]
		if !ok || g.flagged {
			return
		}
		g.flagged = true
		c.gaveUp[e.Instance] = g
		r.Exercise()
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s gave the lead up at %s and published on %s at %s without listening anew: giving up drops the listener, and a new one listens before publishing (SPEC 3.1, 4.6)",
			e.Instance, stamp(g.at), e.Args, stamp(e.At)), g.seq, e.Seq)
	}
}
