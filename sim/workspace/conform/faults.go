package conform

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/moby/moby/api/types/events"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// FaultKind is a real fault a run can inject.
type FaultKind string

// The real faults.
const (
	// FaultKill: SIGKILL an instance (its process group), restart it
	// after For.
	FaultKill FaultKind = "kill"
	// FaultPause: SIGSTOP an instance, SIGCONT after For (a paused
	// leader that wakes up later).
	FaultPause FaultKind = "pause"
	// FaultTerminateBackend: pg_terminate_backend of every session of an
	// instance (its login role).
	FaultTerminateBackend FaultKind = "terminate-backend"
	// FaultPartition: the instance's PostgreSQL proxy holds every byte for
	// For (a silent partition), then forwards again.
	FaultPartition FaultKind = "partition"
	// FaultDockerKill: docker kill of a workspace container.
	FaultDockerKill FaultKind = "docker-kill"
	// FaultDockerRemove: docker rm -f of a workspace container.
	FaultDockerRemove FaultKind = "docker-rm"
	// FaultVolumeRemove: docker volume rm of a home volume (the engine
	// refuses while a container holds it).
	FaultVolumeRemove FaultKind = "volume-rm"
	// FaultS3Outage: the MinIO proxy refuses connections for For.
	FaultS3Outage FaultKind = "s3-outage"
	// FaultS3Slow: the MinIO proxy delays every chunk for For.
	FaultS3Slow FaultKind = "s3-slow"
	// FaultObjectCorrupt: a byte of an archive (or its .meta) flipped.
	FaultObjectCorrupt FaultKind = "object-corrupt"
	// FaultObjectRemove: an archive (or its .meta) removed.
	FaultObjectRemove FaultKind = "object-remove"
	// FaultRedisFlush: FLUSHALL.
	FaultRedisFlush FaultKind = "redis-flush"
	// FaultRedisRestart: FLUSHALL and every connection through the Redis
	// proxy dropped (a restart without persistence).
	FaultRedisRestart FaultKind = "redis-restart"
)

// FaultKinds lists the real faults in a stable order.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultKill, FaultPause, FaultTerminateBackend, FaultPartition, FaultDockerKill, FaultDockerRemove,
		FaultVolumeRemove, FaultS3Outage, FaultS3Slow, FaultObjectCorrupt, FaultObjectRemove, FaultRedisFlush, FaultRedisRestart}
}

// FaultKindNames is FaultKinds as strings.
func FaultKindNames() []string {
	var out []string
	for _, k := range FaultKinds() {
		out = append(out, string(k))
	}
	return out
}

// Fault is one scheduled real fault.
type Fault struct {
	At   time.Duration `json:"at"`
	Kind FaultKind     `json:"kind"`
	// Leader: aim at the instance holding the leader lock (else at
	// another one, when there is one).
	Leader bool `json:"leader,omitempty"`
	// Pick chooses a workspace or object among the candidates.
	Pick int `json:"pick,omitempty"`
	// Meta: an object fault hits the .meta.
	Meta bool `json:"meta,omitempty"`
	// Archived aims an object fault at the archive of a workspace at rest
	// in ARCHIVED whose user is about to ask for it back: the tour's, struck
	// when the tour finds it ARCHIVED for the second time and before it
	// asks for RUNNING, so that the restore meets the damaged archive (bit rot or a removal in
	// the bucket while nothing runs). At is then only the fault's place in
	// the schedule: it is armed from the start of the fault phase.
	Archived bool `json:"archived,omitempty"`
	// For: how long the fault lasts (a restart's delay).
	For time.Duration `json:"for,omitempty"`
	// From is the simulator action it was made from (--from-replay).
	From string `json:"from,omitempty"`
}

func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch f.Kind {
	case FaultKill, FaultPause, FaultTerminateBackend, FaultPartition:
		if f.Leader {
			b.WriteString(" leader")
		} else {
			b.WriteString(" standby")
		}
	default:
		fmt.Fprintf(&b, " pick=%d", f.Pick)
	}
	if f.Meta {
		b.WriteString(" .meta")
	}
	if f.Archived {
		b.WriteString(" of the tour's archived workspace")
	}
	if f.For > 0 {
		fmt.Fprintf(&b, " for %s", f.For)
	}
	return b.String()
}

// streamFaults and streamWorkload are the run's random streams (under
// the simulator's SubSeed, past the simulator's own stream numbers).
const (
	streamFaults   = 2501
	streamWorkload = 2502
)

// GenerateFaults draws the fault schedule of a fault phase of length d
// from seed: every kind on, once, at a time drawn in the phase's middle
// 80 %, with its target and length drawn by the simulator's Source (an
// object fault is aimed at the tour's archived workspace half the time).
func GenerateFaults(seed uint64, kinds []FaultKind, d time.Duration) []Fault {
	src := wssim.NewSource(wssim.SubSeed(seed, streamFaults))
	lengths := []time.Duration{4 * time.Second, 6 * time.Second, 10 * time.Second}
	var out []Fault
	for _, k := range FaultKinds() {
		if !slices.Contains(kinds, k) {
			continue
		}
		f := Fault{Kind: k}
		lo, span := d/10, d*8/10
		f.At = lo + time.Duration(src.IntN("at", int(span/time.Millisecond)))*time.Millisecond
		switch k {
		case FaultKill, FaultPause, FaultPartition:
			f.Leader = src.IntN("leader", 3) != 0
			f.For = lengths[src.IntN("for", len(lengths))]
		case FaultTerminateBackend:
			f.Leader = true
		case FaultS3Outage, FaultS3Slow:
			f.For = lengths[src.IntN("for", len(lengths))]
		case FaultObjectCorrupt, FaultObjectRemove:
			f.Pick = src.IntN("pick", 64)
			f.Meta = src.IntN("meta", 3) == 2
			f.Archived = src.IntN("archived", 2) == 1
		default:
			f.Pick = src.IntN("pick", 64)
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// FromPlan turns a simulator plan's faults into real ones, its times
// compressed from the simulated fault phase simD into the real phase d.
// Kinds with no real counterpart are returned in skipped, with why.
func FromPlan(p *wssim.Plan, simD, d time.Duration) (faults []Fault, skipped []string) {
	scale := float64(d) / float64(simD)
	for _, a := range p.Actions {
		f := Fault{At: time.Duration(float64(a.At) * scale), Pick: a.Pick, From: a.String()}
		length := max(time.Duration(float64(a.For)*scale), 2*time.Second)
		switch a.Kind {
		case wssim.FaultCrash:
			f.Kind, f.Leader, f.For = FaultKill, a.Pick%2 == 0, length
		case wssim.FaultDepose, wssim.FaultKillSession, wssim.FaultBreakFeed:
			f.Kind, f.Leader = FaultTerminateBackend, true
		case wssim.FaultDBError:
			f.Kind, f.Leader, f.For = FaultPartition, true, length
		case wssim.FaultOutage:
			if !strings.HasPrefix(a.Method, "objects") && !strings.HasPrefix(a.Method, "storage.Archive") && !strings.HasPrefix(a.Method, "storage.Restore") {
				skipped = append(skipped, a.String()+": an outage of "+a.Method+" has no real counterpart here")
				continue
			}
			f.Kind, f.For = FaultS3Outage, length
		case wssim.FaultKillContainer:
			f.Kind = FaultDockerKill
		case wssim.FaultRemoveContainer:
			f.Kind = FaultDockerRemove
		case wssim.FaultLoseVolume, wssim.FaultRemoveVolume:
			f.Kind = FaultVolumeRemove
		case wssim.FaultCorruptObject:
			f.Kind, f.Meta = FaultObjectCorrupt, a.Meta
		case wssim.FaultRemoveObject:
			f.Kind, f.Meta = FaultObjectRemove, a.Meta
		case wssim.FaultFlushRedis:
			f.Kind = FaultRedisFlush
		default:
			if a.Kind.IsFault() {
				skipped = append(skipped, a.String()+": needs control of a call's answer or of a message in flight, which a black-box run does not have")
			}
			continue
		}
		faults = append(faults, f)
	}
	return faults, skipped
}

// inject runs fault f; it returns at once for a fault with a length (its
// end runs later, tracked by the run).
func (r *run) inject(ctx context.Context, f Fault) {
	fe := history.Event{Kind: history.KindFault, Args: f.String()}
	switch f.Kind {
	case FaultKill, FaultPause, FaultTerminateBackend, FaultPartition:
		in := r.target(f.Leader)
		if in == nil {
			r.note("fault skipped", f.String()+": no instance to aim at")
			return
		}
		fe.Instance = in.name
		switch f.Kind {
		case FaultKill:
			fe.Method = "process.SIGKILL"
			r.add(fe)
			r.add(history.Event{Kind: history.KindCrash, Instance: in.name, Method: "crash", Args: "SIGKILL by the conformance run"})
			in.kill()
			in.restarts++
			r.later(f.For, func() {
				if err := in.start(); err != nil {
					r.problem("restart %s: %v", in.name, err)
				}
			})
		case FaultPause:
			fe.Method = "process.SIGSTOP"
			if err := in.signal(syscall.SIGSTOP); err != nil {
				r.note("fault skipped", f.String()+": "+err.Error())
				return
			}
			r.add(fe)
			r.later(f.For, func() {
				_ = in.signal(syscall.SIGCONT)
				r.add(history.Event{Kind: history.KindNote, Instance: in.name, Method: "process.SIGCONT"})
			})
		case FaultTerminateBackend:
			fe.Method = wsjudge.FKillSession
			n, err := r.terminate(ctx, in)
			fe.Result = fmt.Sprintf("%d sessions terminated", n)
			if err != nil {
				fe.Err = err.Error()
			}
			r.add(fe)
		case FaultPartition:
			fe.Method = "store.Partition"
			in.pg.set(modeBlackhole, 0)
			r.add(fe)
			r.later(f.For, func() {
				in.pg.set(modePass, 0)
				r.add(history.Event{Kind: history.KindNote, Instance: in.name, Method: "store.Heal"})
			})
		}
	case FaultDockerKill, FaultDockerRemove, FaultVolumeRemove:
		r.containerFault(ctx, f, fe)
	case FaultS3Outage, FaultS3Slow:
		fe.Method = "objects.Outage"
		mode := modeRefuse
		if f.Kind == FaultS3Slow {
			fe.Method, mode = "objects.Slow", modeSlow
		}
		r.sb.s3Px.set(mode, 300*time.Millisecond)
		r.add(fe)
		r.later(f.For, func() {
			r.sb.s3Px.set(modePass, 0)
			r.add(history.Event{Kind: history.KindNote, Method: "objects.Heal"})
		})
	case FaultObjectCorrupt, FaultObjectRemove:
		r.objectFault(ctx, f, fe)
	case FaultRedisFlush, FaultRedisRestart:
		fe.Method = wsjudge.FFlushBus
		if err := r.sb.redis.FlushAll(ctx).Err(); err != nil {
			fe.Err = err.Error()
		}
		if f.Kind == FaultRedisRestart {
			fe.Args += " (connections dropped)"
			r.sb.redisPx.dropAll()
		}
		r.add(fe)
	}
	r.mu.Lock()
	r.faultCount[f.Kind]++
	r.mu.Unlock()
}

// target is the leader (or, with leader false, another running
// instance), nil when there is none.
func (r *run) target(leader bool) *instance {
	holder := r.lock.holder()
	var other *instance
	for _, in := range r.instances {
		if in.name == holder && leader && in.running() {
			return in
		}
		if in.name != holder && in.running() && other == nil {
			other = in
		}
	}
	if leader || other == nil {
		for _, in := range r.instances {
			if in.running() {
				return in
			}
		}
	}
	return other
}

// terminate ends every PostgreSQL session of in.
func (r *run) terminate(ctx context.Context, in *instance) (int, error) {
	role := r.sb.roles[r.index(in)]
	var n int
	err := r.admin(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1`, role).Scan(&n)
	})
	return n, err
}

func (r *run) index(in *instance) int {
	for i, x := range r.instances {
		if x == in {
			return i
		}
	}
	return -1
}

// containerFault kills or removes a workspace's container, or removes its
// volume, picking among the workspaces that have one.
func (r *run) containerFault(ctx context.Context, f Fault, fe history.Event) {
	rows, err := r.rows(ctx)
	if err != nil {
		r.note("fault skipped", f.String()+": "+err.Error())
		return
	}
	var ids []string
	for _, w := range rows {
		if w.ObservedStatus == contracts.ObservedDeleted {
			continue
		}
		switch f.Kind {
		case FaultVolumeRemove:
			if w.ObservedStatus == contracts.ObservedStandby || w.ObservedStatus == contracts.ObservedRunning {
				ids = append(ids, w.ID)
			}
		default:
			if w.ObservedStatus == contracts.ObservedRunning {
				ids = append(ids, w.ID)
			}
		}
	}
	if len(ids) == 0 {
		r.note("fault skipped", f.String()+": no workspace to aim at")
		return
	}
	id := ids[f.Pick%len(ids)]
	fe.Workspace = id
	key := ""
	for _, w := range rows {
		if w.ID == id {
			key = w.ArchiveKey
		}
	}
	// args, and the engine events the command causes (the rest of the
	// object's events while it runs are the coordinator's).
	var args []string
	var causes []events.Action
	switch f.Kind {
	case FaultDockerKill:
		fe.Method, args = wsjudge.FKill, []string{"kill", contracts.ContainerName(id)}
		causes = []events.Action{events.ActionDie}
	case FaultDockerRemove:
		fe.Method, args = wsjudge.FRemove, []string{"rm", "-f", contracts.ContainerName(id)}
		causes = []events.Action{events.ActionDie, events.ActionDestroy}
	case FaultVolumeRemove:
		fe.Method, args = wsjudge.FLoseVolume, []string{"volume", "rm", contracts.VolumeName(id)}
		causes = []events.Action{events.ActionDestroy}
	}
	from := time.Now()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	r.engine.mine(args[len(args)-1], causes, from, time.Now())
	if err != nil {
		if f.Kind == FaultVolumeRemove {
			// The engine refused (the volume is in use): nothing was lost.
			r.note("volume-rm refused", strings.TrimSpace(string(out)))
			r.mu.Lock()
			r.faultCount[f.Kind+" (refused)"]++
			r.mu.Unlock()
			return
		}
		fe.Err = strings.TrimSpace(string(out))
	} else if f.Kind == FaultVolumeRemove {
		// The user's data now lives only in the archive at archive_key.
		r.users.volumeLost(ctx, id, key)
	}
	r.add(fe)
}

// arm keeps the object faults aimed at the tour's archived workspace
// (Fault.Archived) until the tour finds its workspace at rest in ARCHIVED
// (strikeArchived).
func (r *run) arm(f Fault) {
	r.mu.Lock()
	r.armed = append(r.armed, f)
	r.mu.Unlock()
}

// hasArmed reports whether an object fault waits for the tour's archived
// workspace.
func (r *run) hasArmed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.armed) > 0
}

// strikeArchived strikes the armed faults at the archive of workspace id,
// which the tour found at rest in ARCHIVED and is about to ask for again:
// its restore meets the damaged archive. It reports whether one struck.
func (r *run) strikeArchived(ctx context.Context, id string) bool {
	r.mu.Lock()
	armed := r.armed
	r.armed = nil
	r.mu.Unlock()
	if len(armed) == 0 {
		return false
	}
	row, err := r.sb.store.Get(ctx, id)
	struck := false
	for _, f := range armed {
		switch {
		case err != nil:
			r.note("fault skipped", f.String()+": "+err.Error())
		case row.ArchiveKey == "" || row.Operation != contracts.OpNone || row.ObservedStatus != contracts.ObservedPending:
			r.note("fault skipped", fmt.Sprintf("%s: %s is not at rest in ARCHIVED (observed PENDING) with an archive (observed %s, operation %s, archive_key %q)",
				f, id, row.ObservedStatus, row.Operation, row.ArchiveKey))
		default:
			r.progress("fault on the tour's archived workspace: %s", f)
			fe := history.Event{Kind: history.KindFault, Args: f.String(), Workspace: id}
			if r.objectFaultOn(ctx, f, fe, row.ArchiveKey) {
				struck = true
			}
			r.mu.Lock()
			r.faultCount[f.Kind]++
			r.mu.Unlock()
		}
	}
	return struck
}

// disarm notes the armed faults that never struck (the tour's workspace
// never came to rest in ARCHIVED during the fault phase).
func (r *run) disarm() {
	r.mu.Lock()
	armed := r.armed
	r.armed = nil
	r.mu.Unlock()
	for _, f := range armed {
		r.note("fault skipped", f.String()+": the tour's workspace never came to rest in ARCHIVED in the fault phase")
	}
}

// objectFault corrupts or removes an archive (or its .meta) named by a
// workspace's archive_key.
func (r *run) objectFault(ctx context.Context, f Fault, fe history.Event) {
	rows, err := r.rows(ctx)
	if err != nil {
		r.note("fault skipped", f.String()+": "+err.Error())
		return
	}
	var keys []string
	for _, w := range rows {
		if w.ArchiveKey != "" && w.ObservedStatus != contracts.ObservedDeleted {
			keys = append(keys, w.ArchiveKey)
		}
	}
	if len(keys) == 0 {
		r.note("fault skipped", f.String()+": no archive to aim at")
		return
	}
	r.objectFaultOn(ctx, f, fe, keys[f.Pick%len(keys)])
}

// objectFaultOn corrupts or removes the archive key (or its .meta); it
// reports whether the object was damaged.
func (r *run) objectFaultOn(ctx context.Context, f Fault, fe history.Event, key string) bool {
	if f.Meta {
		key += ".meta"
	}
	fe.Args = key
	s3, bucket := r.sb.s3, r.sb.bucket
	switch f.Kind {
	case FaultObjectRemove:
		fe.Method = wsjudge.FRemoveObj
		if err := s3.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
			fe.Err = err.Error()
		}
	case FaultObjectCorrupt:
		fe.Method = wsjudge.FCorruptObj
		obj, err := s3.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			fe.Err = err.Error()
			break
		}
		b, err := readAllLimit(obj, 1<<30)
		_ = obj.Close()
		if err != nil || len(b) == 0 {
			fe.Err = fmt.Sprintf("read %s: %v", key, err)
			break
		}
		b[len(b)/2] ^= 0xff
		if _, err := s3.PutObject(ctx, bucket, key, bytesReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
			fe.Err = err.Error()
		}
	}
	if fe.Err == "" {
		r.users.destroy(key)
	}
	r.add(fe)
	return fe.Err == ""
}
