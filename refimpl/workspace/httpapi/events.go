package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Event names of the stream (SPEC 4.6).
const (
	EventStateChanged = "state_changed"
	EventError        = "error"
	EventHeartbeat    = "heartbeat"
)

// streamWriteTimeout bounds one event's write to a slow client.
const streamWriteTimeout = 10 * time.Second

// StateChanged is the data of a state_changed event.
type StateChanged struct {
	WorkspaceID  string                 `json:"workspace_id"`
	DisplayState contracts.DisplayState `json:"display_state"`
	Operation    contracts.Operation    `json:"operation"`
	DesiredState contracts.DesiredState `json:"desired_state"`
	Deleted      bool                   `json:"deleted"`
	At           string                 `json:"at"`
}

// ErrorRecorded is the data of an error event.
type ErrorRecorded struct {
	WorkspaceID  string `json:"workspace_id"`
	ErrorMessage string `json:"error_message"`
	ErrorCount   int    `json:"error_count"`
	At           string `json:"at"`
}

// Heartbeat is the data of a heartbeat event.
type Heartbeat struct {
	Timestamp string `json:"timestamp"`
}

// streamEvent is one event to send.
type streamEvent struct {
	name string
	data any
}

// streamEvents derives the events a change notification next produces for
// a client that last knew prev: state_changed when the display state,
// operation, desired state or soft-deleted flag differ, then error when
// next records an error prev did not have (a different message or count).
func streamEvents(prev, next *ports.Change) []streamEvent {
	var out []streamEvent
	if next.Display != prev.Display || next.Operation != prev.Operation ||
		next.DesiredState != prev.DesiredState || next.Deleted != prev.Deleted {
		out = append(out, streamEvent{EventStateChanged, StateChanged{
			WorkspaceID:  next.WorkspaceID,
			DisplayState: next.Display,
			Operation:    next.Operation,
			DesiredState: next.DesiredState,
			Deleted:      next.Deleted,
			At:           formatTime(next.At),
		}})
	}
	if next.ErrorMessage != "" && (next.ErrorMessage != prev.ErrorMessage || next.ErrorCount != prev.ErrorCount) {
		out = append(out, streamEvent{EventError, ErrorRecorded{
			WorkspaceID:  next.WorkspaceID,
			ErrorMessage: next.ErrorMessage,
			ErrorCount:   next.ErrorCount,
			At:           formatTime(next.At),
		}})
	}
	return out
}

// streamLimiter counts the event streams open, per user and in all.
type streamLimiter struct {
	perUser, total int
	mu             sync.Mutex
	open           map[string]int
	all            int
}

func newStreamLimiter(perUser, total int) *streamLimiter {
	return &streamLimiter{perUser: perUser, total: total, open: map[string]int{}}
}

// acquire takes a stream slot for user, or says why there is none (a 429).
func (l *streamLimiter) acquire(user string) (release func(), e *contracts.APIError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open[user] >= l.perUser:
		return nil, apiError(http.StatusTooManyRequests, CodeTooManyStreams,
			fmt.Sprintf("you have %d event streams open, the most one user may: close one first", l.open[user]))
	case l.all >= l.total:
		return nil, apiError(http.StatusTooManyRequests, CodeTooManyStreams,
			fmt.Sprintf("the server holds its maximum of %d event streams: retry later", l.total))
	}
	l.open[user]++
	l.all++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.open[user]--; l.open[user] == 0 {
			delete(l.open, user)
		}
		l.all--
	}, nil
}

// streamRetryAfter is the Retry-After of a 429 for too many streams.
const streamRetryAfter = "5"

// events streams a workspace's changes as Server-Sent Events.
func (h *handler) events(w http.ResponseWriter, r *http.Request, p principal, id string) {
	ctx := r.Context()
	release, e := h.streams.acquire(p.user)
	if e != nil {
		w.Header().Set("Retry-After", streamRetryAfter)
		writeError(w, e)
		return
	}
	// The slot is freed before the gauge falls: a client that sees the
	// gauge drop may open another stream at once.
	counted := false
	defer func() {
		release()
		if counted {
			h.metrics.streams.Dec()
		}
	}()
	ws, err := h.cfg.API.Get(ctx, p.user, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sub, err := h.cfg.Bus.Subscribe(ctx, contracts.WorkspaceChannel(id))
	if err != nil {
		h.log.Warn("event subscription failed", "workspace", id, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, apiError(http.StatusServiceUnavailable, CodeUnavailable, "events are unavailable: retry shortly"))
		return
	}
	defer func() { _ = sub.Close() }()

	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(chunk string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write([]byte(chunk)); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Time{})
		return true
	}
	// Counted before its first byte: a client that has read the opening
	// comment finds its stream in the gauge.
	h.metrics.streams.Inc()
	counted = true
	if !send(": events of workspace " + id + "\n\n") {
		return
	}

	prev := ports.ChangeOf(&ws, h.cfg.Clock.Now())
	beat := time.NewTicker(h.cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.cfg.StreamsDone:
			return
		case <-beat.C:
			if !send(frame(EventHeartbeat, Heartbeat{Timestamp: formatTime(h.cfg.Clock.Now())})) {
				return
			}
		case <-sub.Ready():
			for _, m := range sub.Poll() {
				var next ports.Change
				if err := json.Unmarshal([]byte(m.Payload), &next); err != nil || next.WorkspaceID != id {
					h.log.Warn("ignoring a malformed change notification", "channel", m.Channel, "err", err)
					continue
				}
				for _, ev := range streamEvents(&prev, &next) {
					if !send(frame(ev.name, ev.data)) {
						return
					}
				}
				prev = next
				if next.Display == contracts.DisplayDeleted {
					return
				}
			}
		}
	}
}

// frame renders one event; data is JSON on one line.
func frame(name string, data any) string {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(fmt.Sprintf("%q", err.Error()))
	}
	return "event: " + name + "\ndata: " + string(b) + "\n\n"
}
