package core

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// watcher is the EventWatcher (ORACLE-SPEC 3.2): one WebSocket connection
// with the three subscriptions, re-dialled and re-subscribed with a capped
// exponential backoff when it ends; retry.max_attempts consecutive failed
// attempts are fatal.
type watcher struct {
	conn     ports.ID // the connection in use; 0 when none
	dialing  ports.ID // a Dial awaiting its answer; 0 when none
	live     bool     // all three subscriptions are active on conn
	started  bool     // the first subscription succeeded (§3.1 step 4)
	failures int      // consecutive failed attempts
	retry    *timer
	lastAt   time.Time // when the last frame arrived; zero if none yet
}

// connect is §3.1 step 2: dial, then the status probe.
func (c *Core) connect() {
	c.w.dialing = c.newID()
	c.emit(ports.Dial{ID: c.w.dialing, Timeout: rpcTimeout})
}

func (c *Core) onDialed(in ports.Dialed) {
	if in.Conn != c.w.dialing {
		return
	}
	c.w.dialing = 0
	if c.stopping() {
		if in.Err == nil {
			c.emit(ports.CloseConn{Conn: in.Conn})
		}
		return
	}
	if c.phase == phaseConnecting {
		if in.Err != nil {
			c.beginShutdown(1, fmt.Sprintf("connect to the chain: %v", in.Err))
			return
		}
		c.w.conn = in.Conn
		c.probeStatus()
		return
	}
	if in.Err != nil {
		c.watchFailed(fmt.Errorf("dial: %w", in.Err))
		return
	}
	c.w.conn = in.Conn
	c.subscribeAll()
}

// probeStatus is the one `status` call of §3.1 step 2; it must succeed.
func (c *Core) probeStatus() {
	id := c.newID()
	c.call(ports.StatusCall{ID: id, Timeout: rpcTimeout}, id, func(r ports.Reply) {
		if c.stopping() {
			return
		}
		err := replyErr(r)
		if err == nil && r.Status == nil {
			err = fmt.Errorf("no result")
		}
		if err != nil {
			c.beginShutdown(1, fmt.Sprintf("status probe: %v", err))
			return
		}
		c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepConnected})
		c.log(slog.LevelInfo, "connected to the chain",
			slog.String("network", r.Status.NodeInfo.Network),
			slog.Int64("height", int64(r.Status.SyncInfo.LatestBlockHeight)),
			slog.String("provider", c.self))
		if net := r.Status.NodeInfo.Network; net != "" && net != c.cfg.Chain.ID {
			c.log(slog.LevelWarn, "the node's network differs from chain.id",
				slog.String("network", net), slog.String("chain.id", c.cfg.Chain.ID))
		}
		c.phase = phaseStarting
		c.startSequence() // step 3
		c.subscribeAll()  // step 4
	})
}

// subscribeAll subscribes the three queries on the current connection,
// one after the other in the order of oracle.Subscriptions (as the seed
// does), so the order and the request ids on the wire are fixed.
func (c *Core) subscribeAll() {
	c.w.live = false
	c.subscribeNext(c.w.conn, 0)
}

func (c *Core) subscribeNext(conn ports.ID, i int) {
	if i == len(oracle.Subscriptions) {
		c.onSubscribed()
		return
	}
	s := oracle.Subscriptions[i]
	id := c.newID()
	c.call(ports.Subscribe{ID: id, Conn: conn, Query: s.Query(), Timeout: rpcTimeout}, id, func(r ports.Reply) {
		if c.stopping() || c.w.conn != conn {
			return
		}
		if err := replyErr(r); err != nil {
			c.emit(ports.CloseConn{Conn: conn})
			c.w.conn = 0
			c.watchFailed(fmt.Errorf("subscribe %s: %w", s, err))
			return
		}
		c.subscribeNext(conn, i+1)
	})
}

func (c *Core) onSubscribed() {
	c.w.live = true
	c.w.failures = 0
	if !c.w.started {
		c.w.started = true
		c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepSubscribed})
		c.load() // step 5
		return
	}
	c.log(slog.LevelInfo, "re-subscribed; reconciling")
	c.requestReconcile() // D25
}

// onConnClosed: the connection in use ended; dial again after the backoff.
func (c *Core) onConnClosed(in ports.ConnClosed) {
	if in.Conn != c.w.conn || c.stopping() {
		return
	}
	c.w.conn, c.w.live = 0, false
	if c.phase == phaseConnecting {
		c.beginShutdown(1, fmt.Sprintf("connection closed while starting: %v", in.Err))
		return
	}
	c.log(slog.LevelWarn, "websocket closed; reconnecting", errAttr(in.Err))
	c.scheduleRedial()
}

// watchFailed counts one failed re-subscription attempt: fatal after
// retry.max_attempts in a row, otherwise another attempt after the backoff.
func (c *Core) watchFailed(err error) {
	c.w.failures++
	c.countError("websocket attempt failed", errAttr(err), slog.Int("failures", c.w.failures))
	if ResubscribeExhausted(c.w.failures, c.cfg.Retry.MaxAttempts) {
		c.beginShutdown(1, fmt.Sprintf("websocket: %d re-subscription attempts failed, last: %v", c.w.failures, err))
		return
	}
	c.scheduleRedial()
}

// scheduleRedial waits min(2^k s, max_delay) ± 10 % before attempt k,
// k being the failures so far.
func (c *Core) scheduleRedial() {
	wait := ResubscribeWait(c.w.failures, c.cfg.MaxDelay(), c.rnd.Float64())
	c.cancel(c.w.retry)
	c.w.retry = c.after(wait, func() {
		c.w.retry = nil
		if c.stopping() {
			return
		}
		c.w.dialing = c.newID()
		c.emit(ports.Dial{ID: c.w.dialing, Timeout: rpcTimeout})
	})
}

// onFrame takes a frame of the connection in use into the event queue.
func (c *Core) onFrame(f ports.Frame) {
	if f.Conn != c.w.conn || c.w.conn == 0 || c.stopping() {
		return
	}
	c.w.lastAt = c.now
	c.ev.queue = append(c.ev.queue, f)
	c.pumpEvents()
}

// stopWatcher is §3.7 step 2.
func (c *Core) stopWatcher() {
	c.cancel(c.w.retry)
	c.w.retry = nil
	if c.w.conn != 0 && c.w.live {
		id := c.newID()
		c.call(ports.UnsubscribeAll{ID: id, Conn: c.w.conn, Timeout: rpcTimeout}, id, func(ports.Reply) {})
	}
	c.w.live = false
	c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanEvent})
	c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanError})
	c.trace(ports.Trace{Kind: ports.TraceStop, Name: ports.CompWatcher})
}

func errAttr(err error) slog.Attr {
	if err == nil {
		return slog.String("error", "")
	}
	return slog.String("error", err.Error())
}
