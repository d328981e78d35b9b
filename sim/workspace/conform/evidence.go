package conform

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Attribution says how the writers of the audit trail are known.
type Attribution string

const (
	// AttributionDeclared: every write declared its writer in SPEC 1.6's
	// transaction-local settings.
	AttributionDeclared Attribution = "declared (SPEC 1.6 settings)"
	// AttributionInferred: some write declared nothing; writers were
	// inferred (the columns written, the session's login role, the
	// holder of the leader lock in pg_locks).
	AttributionInferred Attribution = "inferred (no SPEC 1.6 settings)"
)

// evidence is what the world recorded.
type evidence struct {
	events      []history.Event
	rows        []contracts.Workspace
	attribution Attribution
	// undeclared counts the writes made without the settings.
	undeclared int
	// leaderInferred: the leadership came from pg_locks, not from
	// system_locks (the implementation keeps no epoch row).
	leaderInferred bool
	holders        []holderChange
	// engineEvents counts the engine's events of the run's workspaces in
	// the history (run.engineOwn those left out as the run's own faults);
	// engineWhy says why the checkers that read them cannot be judged
	// ("" when they can).
	engineEvents int
	engineWhy    string
}

// collect reads the audit trail (with the session that wrote each row),
// the final rows and the lock's holders, and merges them with the run's
// own record (API calls, faults) in wall-clock order.
func (r *run) collect(ctx context.Context) (*evidence, error) {
	audit, err := r.sb.store.History(ctx, 0)
	if err != nil {
		return nil, err
	}
	type sess struct {
		instance string
		wall     time.Time
	}
	sessions := map[int64]sess{}
	err = r.admin(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT seq, login, wall FROM conform_audit_session`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var login string
			var wall time.Time
			if err := rows.Scan(&seq, &login, &wall); err != nil {
				return err
			}
			sessions[seq] = sess{instance: r.sb.instanceOf(login), wall: wall}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	ev := &evidence{attribution: AttributionDeclared, holders: r.lock.history()}
	for i := range audit {
		e := &audit[i]
		if (e.Kind == history.KindWrite || e.Kind == history.KindInsert) && e.Component == "unknown" {
			ev.undeclared++
		}
	}
	acquires := 0
	for _, e := range audit {
		if e.Kind == history.KindLeader && e.Method == "acquire" {
			acquires++
		}
	}
	if ev.undeclared > 0 {
		ev.attribution = AttributionInferred
	}
	var all []stamped
	var lastWall time.Time
	for i := range audit {
		e := audit[i]
		s, ok := sessions[e.Seq]
		wall := s.wall
		if !ok {
			// An inferred "lost" (no row of its own) goes with the
			// acquisition after it.
			wall = lastWall
			for j := i + 1; j < len(audit); j++ {
				if s2, ok := sessions[audit[j].Seq]; ok {
					wall = s2.wall
					break
				}
			}
		}
		lastWall = wall
		if ev.attribution == AttributionInferred && (e.Kind == history.KindWrite || e.Kind == history.KindInsert) {
			r.infer(&e, s.instance, ev.holders, wall)
		}
		all = append(all, stamped{wall: wall, e: e})
	}
	if acquires == 0 {
		ev.leaderInferred = true
		epoch := int64(0)
		prev := ""
		for _, h := range ev.holders {
			if prev != "" {
				all = append(all, stamped{wall: h.wall, e: history.Event{At: r.vt(h.wall), Kind: history.KindLeader, Instance: prev, Method: "lost", Args: "inferred from pg_locks"}})
			}
			if h.instance != "" {
				epoch++
				all = append(all, stamped{wall: h.wall, e: history.Event{At: r.vt(h.wall), Kind: history.KindLeader, Instance: h.instance, Method: "acquire", Epoch: epoch, Args: "inferred from pg_locks"}})
			}
			prev = h.instance
		}
	}
	rows, err := r.rows(ctx)
	if err != nil {
		return nil, err
	}
	engine, err := r.engineHistory(ctx, rows)
	if err != nil {
		ev.engineWhy = err.Error()
	} else {
		ev.engineEvents = len(engine)
		all = append(all, engine...)
	}
	r.mu.Lock()
	all = append(all, r.events...)
	r.mu.Unlock()
	sort.SliceStable(all, func(i, j int) bool { return all[i].wall.Before(all[j].wall) })
	ev.events = make([]history.Event, len(all))
	for i := range all {
		ev.events[i] = all[i].e
		ev.events[i].Seq = int64(i + 1)
	}
	ev.rows = rows
	return ev, nil
}

// engineHistory is the engine's events of the run's workspaces, once
// every event the engine emitted until now has come through; an error
// says why the checkers that read them cannot be judged.
func (r *run) engineHistory(ctx context.Context, rows []contracts.Workspace) ([]stamped, error) {
	if r.engine == nil {
		return nil, fmt.Errorf("the engine's events could not be followed: %v", r.engineErr)
	}
	if err := r.engine.streamErr(); err != nil {
		return nil, fmt.Errorf("the engine's event stream broke during the run (%v): events may be missing", err)
	}
	if ok, why := r.engine.sameClock(); !ok {
		return nil, errors.New(why)
	}
	if err := r.engine.syncEvents(ctx); err != nil {
		return nil, fmt.Errorf("the engine's events could not be brought up to date: %w", err)
	}
	ids := map[string]bool{}
	for _, w := range rows {
		ids[w.ID] = true
	}
	out, own := r.engine.history(ids)
	for i := range out {
		out[i].e.At = r.vt(out[i].wall)
	}
	r.mu.Lock()
	r.engineOwn = own
	r.mu.Unlock()
	return out, nil
}

// infer attributes a write that declared nothing: its instance from the
// session's login role, its component from the columns it wrote (SPEC
// 1.1's owners), its epoch from the lock's holder at the time. What is
// inferred is marked in Args.
func (r *run) infer(e *history.Event, instance string, holders []holderChange, wall time.Time) {
	e.Instance = instance
	if e.Kind == history.KindInsert {
		e.Component = contracts.CompAPI
	} else if e.Patch != nil {
		e.Component = ownerOf(e.Patch.Columns())
	}
	holder := ""
	epoch := int64(0)
	for _, h := range holders {
		if h.wall.After(wall) {
			break
		}
		if h.instance != "" {
			epoch++
		}
		holder = h.instance
	}
	if holder == instance && e.Component != contracts.CompAPI && e.Component != contracts.CompAdmin {
		e.Epoch = epoch
	}
	e.Args = strings.TrimSpace(e.Args + " writer inferred")
}

// ownerOf names the component SPEC 1.1 makes the writer of most of cols.
func ownerOf(cols []contracts.Column) contracts.Component {
	count := map[contracts.Component]int{}
	for _, c := range cols {
		switch c {
		case "observed_status", "health_status", "observed_at":
			count[contracts.CompHealthMonitor]++
		case "desired_state", "deleted_at", "name", "description", "memo", "standby_ttl_seconds", "archive_ttl_seconds", "last_access_at":
			count[contracts.CompAPI]++
		case "updated_at":
		default:
			count[contracts.CompStateReconciler]++
		}
	}
	best, n := contracts.CompStateReconciler, -1
	for _, c := range []contracts.Component{contracts.CompStateReconciler, contracts.CompHealthMonitor, contracts.CompAPI} {
		if count[c] > n {
			best, n = c, count[c]
		}
	}
	return best
}

func (ev *evidence) String() string {
	return fmt.Sprintf("%d events, %d rows, attribution %s", len(ev.events), len(ev.rows), ev.attribution)
}
