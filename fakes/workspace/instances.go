package workspace

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// Instances is the container runtime (ports.Instances): one container per
// workspace id, running or stopped.
type Instances struct {
	w    *World
	ctrs map[string]*container
	// states is the listing of ctrs, sorted by workspace id, as it stands
	// once every start has taken effect; entries are its listing entries
	// and sorted its containers, index for index. They are kept as
	// containers change, so that a listing of a large fleet every pass
	// copies them instead of building them.
	states  []ports.InstanceState
	entries []string
	sorted  []*container
	// slowUntil is the latest runsAt ever set: until then a listing is
	// built container by container, as some may not run yet.
	slowUntil time.Time
	// startDelay: a container created or restarted by Start only runs
	// that long after the call (0: at once). See DelayStarts.
	startDelay time.Duration
	// heldUntil is, per workspace whose volume something other than its
	// container holds, when that holder lets go (HoldVolume).
	heldUntil map[string]time.Time
	// scratch is a slow listing's entries, its array reused.
	scratch []string
}

type container struct {
	running bool
	image   string
	// runsAt: a started container runs only from this time on (a slow
	// start, DelayStarts); zero: at once.
	runsAt time.Time
	// entries are its listing entries (history.InstanceEntry) when
	// running and when stopped, made once: a listing of a large fleet
	// every pass would otherwise build them all again.
	entries [2]string
}

// entry is c's listing entry at now.
func (c *container) entry(now time.Time) string {
	if c.runningAt(now) {
		return c.entries[1]
	}
	return c.entries[0]
}

// runningAt reports whether c runs at now.
func (c *container) runningAt(now time.Time) bool {
	return c.running && !now.Before(c.runsAt)
}

// DelayStarts makes every later Start return before its container runs:
// the container exists at once but only runs d later on the clock, as a
// slow image pull or boot would (0 restores immediate starts). Containers
// already started keep their own time (world method).
func (x *Instances) DelayStarts(d time.Duration) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.startDelay = max(d, 0)
}

// HoldVolume has something other than id's container (an operator's
// backup or debugging container) mount id's volume for d: until then
// delete_volume, like an operator's volume removal, fails with
// VOLUME_IN_USE, whatever becomes of ws-{id} (world method). No listing
// shows the holder: it is not a workspace container.
func (x *Instances) HoldVolume(id string, d time.Duration) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	if x.heldUntil == nil {
		x.heldUntil = map[string]time.Time{}
	}
	x.heldUntil[id] = x.w.Clock.Now().Add(max(d, 0))
	x.w.recordFault("storage.Hold", id, "held by another container for "+d.String())
}

// holdsLocked reports whether id's volume is held: by its container, or
// by another (HoldVolume).
func (x *Instances) holdsLocked(id string) bool {
	if x.ctrs[id] != nil {
		return true
	}
	until, ok := x.heldUntil[id]
	if ok && !x.w.Clock.Now().Before(until) {
		delete(x.heldUntil, id)
		return false
	}
	return ok
}

var _ ports.Instances = (*Instances)(nil)

// Start creates and starts ws-{id} (ports.Instances).
func (x *Instances) Start(ctx context.Context, id, imageRef string) error {
	return x.start(ctx, "", id, imageRef)
}

// Delete kills and removes the container (ports.Instances).
func (x *Instances) Delete(ctx context.Context, id string) error { return x.delete(ctx, "", id) }

// List returns every container, ordered by id (ports.Instances).
func (x *Instances) List(ctx context.Context) ([]ports.InstanceState, error) {
	return x.list(ctx, "")
}

// Kill stops a running container without removing it, as a crash of the
// workload would (world method).
func (x *Instances) Kill(id string) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	if c := x.ctrs[id]; c != nil {
		c.running, c.runsAt = false, time.Time{}
		x.refreshLocked(id)
	}
	x.w.recordFault("instances.Kill", id, "")
}

// Remove makes a container vanish, as an operator's docker rm -f would
// (world method).
func (x *Instances) Remove(id string) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.removeLocked(id)
	x.w.recordFault("instances.Remove", id, "")
}

// State reports whether the container of id exists and runs (world method).
func (x *Instances) State(id string) (exists, running bool) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	c := x.ctrs[id]
	return c != nil, c != nil && c.runningAt(x.w.Clock.Now())
}

// Snapshot lists every container, ordered by id (world method).
func (x *Instances) Snapshot() []ports.InstanceState {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	states, _ := x.statesLocked()
	return states
}

// statesLocked is the listing at the clock's time, and its entries (the
// caller's own states; entries only until the next listing).
func (x *Instances) statesLocked() (states []ports.InstanceState, entries []string) {
	now := x.w.Clock.Now()
	if !now.Before(x.slowUntil) {
		return append(make([]ports.InstanceState, 0, len(x.states)), x.states...), x.entries
	}
	states = make([]ports.InstanceState, len(x.states))
	entries = x.scratch[:0]
	for i, c := range x.sorted {
		states[i] = ports.InstanceState{WorkspaceID: x.states[i].WorkspaceID, Running: c.runningAt(now)}
		entries = append(entries, c.entry(now))
	}
	x.scratch = entries
	return states, entries
}

// indexLocked is where id is, or would be, in the listing.
func (x *Instances) indexLocked(id string) (int, bool) {
	return slices.BinarySearchFunc(x.states, id, func(s ports.InstanceState, id string) int { return strings.Compare(s.WorkspaceID, id) })
}

// refreshLocked brings id's listing entry in line with its container.
func (x *Instances) refreshLocked(id string) {
	if i, found := x.indexLocked(id); found {
		c := x.sorted[i]
		x.states[i].Running = c.running
		x.entries[i] = c.entries[0]
		if c.running {
			x.entries[i] = c.entries[1]
		}
		if c.runsAt.After(x.slowUntil) {
			x.slowUntil = c.runsAt
		}
	}
}

func (x *Instances) removeLocked(id string) {
	if _, ok := x.ctrs[id]; !ok {
		return
	}
	delete(x.ctrs, id)
	if i, found := x.indexLocked(id); found {
		x.sorted = slices.Delete(x.sorted, i, i+1)
		x.states = slices.Delete(x.states, i, i+1)
		x.entries = slices.Delete(x.entries, i, i+1)
	}
}

func (x *Instances) start(ctx context.Context, inst, id, imageRef string) error {
	if err := x.w.gate(ctx, mInstStart, inst, id, ""); err != nil {
		x.w.recordCall(inst, mInstStart, id, imageRef, "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	var err error
	result := ""
	var runsAt time.Time
	if x.startDelay > 0 {
		runsAt = x.w.Clock.Now().Add(x.startDelay)
	}
	switch c := x.ctrs[id]; {
	case !x.w.Storage.hasVolumeLocked(id):
		err = providerError(contracts.CodeVolumeNotFound, "volume "+contracts.VolumeName(id)+" does not exist")
	case c != nil && c.running:
		result = "already running"
		if !c.runningAt(x.w.Clock.Now()) {
			result = "already starting"
		}
	case c != nil:
		c.running, c.image, c.runsAt = true, imageRef, runsAt
		x.refreshLocked(id)
		result = "recreated"
	default:
		c := &container{running: true, image: imageRef, runsAt: runsAt,
			entries: [2]string{history.InstanceEntry(id, false), history.InstanceEntry(id, true)}}
		x.ctrs[id] = c
		i, _ := x.indexLocked(id)
		x.sorted = slices.Insert(x.sorted, i, c)
		x.states = slices.Insert(x.states, i, ports.InstanceState{WorkspaceID: id})
		x.entries = slices.Insert(x.entries, i, "")
		x.refreshLocked(id)
		result = "created"
	}
	if err == nil && !runsAt.IsZero() && result != "already running" && result != "already starting" {
		result += ", runs in " + x.startDelay.String()
	}
	x.w.recordCall(inst, mInstStart, id, imageRef, result, err)
	return err
}

func (x *Instances) delete(ctx context.Context, inst, id string) error {
	if err := x.w.gate(ctx, mInstDelete, inst, id, ""); err != nil {
		x.w.recordCall(inst, mInstDelete, id, "", "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	result := "absent"
	if x.ctrs[id] != nil {
		result = "removed"
		x.removeLocked(id)
	}
	x.w.recordCall(inst, mInstDelete, id, "", result, nil)
	return nil
}

func (x *Instances) list(ctx context.Context, inst string) ([]ports.InstanceState, error) {
	if err := x.w.gate(ctx, mInstList, inst, "", ""); err != nil {
		x.w.recordCall(inst, mInstList, "", "", "", err)
		return nil, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	out, entries := x.statesLocked() // Record copies what it keeps of entries
	x.w.listings.Record(inst, history.MethodListInstances, entries, func(result string) {
		x.w.recordCall(inst, mInstList, "", "", result, nil)
	})
	return out, nil
}
