package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// vacancyWatch waits, on a connection of its own, for the leader lock to
// be released, and then signals vacated. It waits with a *shared* request
// for the lock: the server queues it behind the exclusive holder and grants
// it when the holder's session unlocks or ends, and the watch releases it
// at once, so it never stands in the way of an exclusive TryAcquire for
// longer than that round trip. It waits only when armed, by a TryAcquire
// that found the lock held, so there is one wait per lost election and no
// polling.
type vacancyWatch struct {
	s       *Store
	vacated chan struct{}
	armed   chan struct{}

	mu      sync.Mutex
	started bool // run is going (or has gone)
	stopped bool // stop was called: never start again
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when run returns
}

// vacancyRetry spaces the watch's attempts after its connection fails;
// the coordinator's own election retry still runs meanwhile.
const vacancyRetry = time.Second

func newVacancyWatch(s *Store) *vacancyWatch {
	ctx, cancel := context.WithCancel(context.Background())
	return &vacancyWatch{s: s, vacated: make(chan struct{}, 1), armed: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// arm asks for one more wait (and starts the watch on first use).
func (v *vacancyWatch) arm() {
	v.mu.Lock()
	if !v.started && !v.stopped {
		v.started = true
		go v.run()
	}
	v.mu.Unlock()
	select {
	case v.armed <- struct{}{}:
	default:
	}
}

// stop ends the watch and waits for it; it may be called more than once,
// whether or not the watch ever started.
func (v *vacancyWatch) stop() {
	v.mu.Lock()
	v.stopped = true
	started := v.started
	v.mu.Unlock()
	v.cancel()
	if started {
		<-v.done
	}
}

func (v *vacancyWatch) run() {
	defer close(v.done)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), v.s.opts.checkTimeout)
			_ = conn.Close(ctx)
			cancel()
		}
	}()
	for {
		select {
		case <-v.ctx.Done():
			return
		case <-v.armed:
		}
		var err error
		if conn == nil || conn.IsClosed() {
			conn, err = pgx.ConnectConfig(v.ctx, v.s.dedicated.Copy())
		}
		if err == nil {
			err = v.waitFree(conn)
		}
		if err != nil {
			if v.ctx.Err() != nil {
				return
			}
			v.s.log.Debug("leader lock watch", "err", err)
			if conn != nil {
				_ = conn.Close(v.ctx)
				conn = nil
			}
			select {
			case <-v.ctx.Done():
				return
			case <-time.After(vacancyRetry):
			}
		}
		// A vacancy, or a failed wait: either way the coordinator should
		// try the lock now rather than later.
		select {
		case v.vacated <- struct{}{}:
		default:
		}
	}
}

// waitFree blocks until the lock has no exclusive holder.
func (v *vacancyWatch) waitFree(conn *pgx.Conn) error {
	if _, err := conn.Exec(v.ctx, `SELECT pg_advisory_lock_shared($1)`, v.s.opts.lockKey); err != nil {
		return err
	}
	_, err := conn.Exec(v.ctx, `SELECT pg_advisory_unlock_shared($1)`, v.s.opts.lockKey)
	return err
}
