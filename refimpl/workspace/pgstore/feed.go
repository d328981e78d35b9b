package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Channel is the notification channel of workspace changes (SPEC 4.6).
const Channel = "workspace_changes"

// errListenerClosed: Poll after Close.
var errListenerClosed = errors.New("listener closed")

// Listen opens a dedicated session and LISTENs on workspace_changes
// (ports.ChangeFeed). Notifications committed after Listen returns are
// delivered; a goroutine pumps them into the listener's buffer.
func (s *Store) Listen(ctx context.Context) (ports.Listener, error) {
	conn, err := pgx.ConnectConfig(ctx, s.dedicated)
	if err != nil {
		return nil, fmt.Errorf("listen: connect: %w", unavailable(err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("listen: %w", mapErr(err))
	}
	pumpCtx, cancel := context.WithCancel(context.Background())
	l := &Listener{s: s, conn: conn, pid: conn.PgConn().PID(), cancel: cancel, ready: make(chan struct{}, 1), done: make(chan struct{})}
	go l.pump(pumpCtx)
	return l, nil
}

// Listener receives change notifications (ports.Listener).
type Listener struct {
	s      *Store
	conn   *pgx.Conn // owned by pump
	pid    uint32
	cancel context.CancelFunc
	ready  chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	queue  []ports.Change
	lost   error // the session ended
	closed bool
}

var _ ports.Listener = (*Listener)(nil)

// pump waits for notifications until the session is lost or the listener
// closed. An idle session is pinged every ping interval, so a dead server
// is noticed even when nothing is written.
func (l *Listener) pump(ctx context.Context) {
	defer close(l.done)
	defer func() { _ = l.conn.Close(context.Background()) }()
	for {
		wctx, cancel := context.WithTimeout(ctx, l.s.opts.pingEvery)
		n, err := l.conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && !l.conn.IsClosed() {
				pctx, cancel := context.WithTimeout(ctx, l.s.opts.checkTimeout)
				err = l.conn.Ping(pctx)
				cancel()
				if err == nil {
					continue
				}
			}
			if ctx.Err() != nil {
				return
			}
			l.fail(err)
			return
		}
		c, err := decodeChange(n.Payload)
		if err != nil {
			l.s.log.Warn("undecodable change notification", "payload", n.Payload, "err", err)
			continue
		}
		l.mu.Lock()
		l.queue = append(l.queue, c)
		l.mu.Unlock()
		l.signal()
	}
}

func (l *Listener) fail(err error) {
	l.mu.Lock()
	l.lost = fmt.Errorf("listener session lost: %w", unavailable(err))
	l.mu.Unlock()
	l.s.log.Warn("change feed session lost", "err", err)
	l.signal()
}

func (l *Listener) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// Poll returns the notifications received since the last Poll without
// waiting. Once the session is lost it returns what had arrived before,
// then the loss (contracts.ErrUnavailable) on every later call.
func (l *Listener) Poll(context.Context) ([]ports.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("poll: %w", errListenerClosed)
	}
	if len(l.queue) > 0 {
		out := l.queue
		l.queue = nil
		return out, nil
	}
	if l.lost != nil {
		return nil, fmt.Errorf("poll: %w", l.lost)
	}
	return nil, nil
}

// BackendPID is the server process id of the listening session (for
// drills: pg_terminate_backend it to break the feed).
func (l *Listener) BackendPID() uint32 { return l.pid }

// Ready is signalled when notifications arrive or the session is lost.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Close stops listening and closes the session.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.queue = nil
	l.mu.Unlock()
	l.cancel()
	<-l.done
	return nil
}

// decodeChange parses a notification payload. The display state is
// derived with contracts.Display from the payload's fields, so it cannot
// disagree with the contracts.
func decodeChange(payload string) (ports.Change, error) {
	var c ports.Change
	if err := json.Unmarshal([]byte(payload), &c); err != nil {
		return c, fmt.Errorf("decode change: %w", err)
	}
	if c.WorkspaceID == "" {
		return c, errors.New("decode change: no workspace_id")
	}
	c.At = c.At.UTC()
	w := contracts.Workspace{ObservedStatus: c.ObservedStatus, HealthStatus: c.HealthStatus, ArchiveKey: c.ArchiveKey}
	c.Display = contracts.Display(&w)
	return c, nil
}
