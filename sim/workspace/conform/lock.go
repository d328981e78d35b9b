package conform

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The leader lock of SPEC 1.4/3.1: session advisory lock 0x636f6e7665726765,
// which pg_locks shows as classid 0x636f6e76, objid 0x65726765, objsubid 1.
const (
	lockClassID = 0x636f6e76
	lockObjID   = 0x65726765
)

// holderChange is one change of the lock's holder as pg_locks showed it.
type holderChange struct {
	wall     time.Time
	instance string // "" while nobody holds it
}

// lockSampler reads which instance's session holds the leader lock, from
// pg_locks and the session's login role: the lock holder whatever the
// implementation records.
type lockSampler struct {
	r       *run
	mu      sync.Mutex
	cur     string
	changes []holderChange
	seen    chan struct{}
	once    sync.Once
}

func newLockSampler(r *run) *lockSampler { return &lockSampler{r: r, seen: make(chan struct{})} }

func (l *lockSampler) run(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var login string
		err := l.r.admin(ctx, func(q querier) error {
			return q.QueryRow(ctx, `SELECT coalesce(max(a.usename::text), '') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1`,
				lockClassID, lockObjID).Scan(&login)
		})
		if err == nil {
			l.observe(l.r.sb.instanceOf(login))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (l *lockSampler) observe(holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if holder == l.cur && len(l.changes) > 0 {
		return
	}
	l.cur = holder
	l.changes = append(l.changes, holderChange{wall: time.Now(), instance: holder})
	if holder != "" {
		l.once.Do(func() { close(l.seen) })
	}
}

func (l *lockSampler) holder() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

func (l *lockSampler) history() []holderChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]holderChange(nil), l.changes...)
}

// waitHolder waits until some instance holds the lock.
func (l *lockSampler) waitHolder(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.seen:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errors.New("no holder")
	}
}
