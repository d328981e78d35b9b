package core

import (
	"log/slog"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// shutdown tracks §3.7: the steps run in order, and steps 3 and 4 wait
// for the GETs and the broadcast in flight to end.
type shutdown struct {
	step   int // the last step done
	reason string
}

// beginShutdown starts §3.7: code 0 for a requested stop, 1 for a fatal
// condition. A second request while stopping changes nothing.
func (c *Core) beginShutdown(code int, reason string) {
	if c.stopping() {
		return
	}
	c.phase = phaseStopping
	c.exitCode = code
	c.sd.reason = reason
	level, health := slog.LevelInfo, oracle.HealthStopping
	if code != 0 {
		level, health = slog.LevelError, oracle.HealthFatal
	}
	c.setHealth(health)
	c.log(level, "shutting down", slog.String("reason", reason), slog.Int("exit_code", code))

	// Step 1: isRunning = false; close shutdownCh. Nothing new starts: no
	// frame is handled, no job selected, no GET or broadcast begins.
	c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepStopping})
	c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanShutdown})
	c.ev.queue, c.ev.busy = nil, false
	c.stopReconcile()
	c.stopHealth()
	c.stopTick()
	c.shutdownExecutor()
	c.shutdownSubmitter()
	c.sd.step = 1
	c.advanceShutdown()
}

// advanceShutdown runs the next steps as far as their waits allow.
func (c *Core) advanceShutdown() {
	if c.phase != phaseStopping {
		return
	}
	if c.sd.step == 1 {
		// Step 2: the watcher stops.
		c.stopWatcher()
		c.sd.step = 2
	}
	if c.sd.step == 2 {
		// Step 3: the tick has stopped; wait until the task group has
		// drained (a GET in flight may end), then close ResultCh.
		if c.x.slots > 0 {
			return
		}
		c.trace(ports.Trace{Kind: ports.TraceDrained})
		c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanResult})
		c.trace(ports.Trace{Kind: ports.TraceStop, Name: ports.CompScheduler})
		c.sd.step = 3
	}
	if c.sd.step == 3 {
		// Step 4: the resync timers stop; wait for a broadcast in flight.
		c.stopSequence()
		if c.sub.broadcasting {
			return
		}
		c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanSemaphore})
		c.trace(ports.Trace{Kind: ports.TraceStop, Name: ports.CompSubmitter})
		c.sd.step = 4
	}
	if c.sd.step == 4 {
		// Step 5: close the RPC client, and with it the WebSocket.
		if c.w.conn != 0 {
			c.emit(ports.CloseConn{Conn: c.w.conn})
			c.w.conn = 0
		}
		c.trace(ports.Trace{Kind: ports.TraceStop, Name: ports.CompRPCClient})
		// Steps 6 and 7: every goroutine has ended (the core's requests
		// are all answered or abandoned); close fatalCh; done.
		c.trace(ports.Trace{Kind: ports.TraceStep, Name: ports.StepJoined})
		c.trace(ports.Trace{Kind: ports.TraceClose, Name: ports.ChanFatal})
		if c.exitCode == 0 {
			c.setHealth(oracle.HealthStopped)
		}
		c.sd.step = 7
		c.phase = phaseExited
		c.exited = true
		c.pending = map[ports.ID]pendingCall{}
		c.timers = nil
		c.emit(ports.Exit{Code: c.exitCode, Reason: c.sd.reason})
	}
}
