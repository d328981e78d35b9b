package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// events streams a workspace's changes as Server-Sent Events.
func (h *handler) events(w http.ResponseWriter, r *http.Request, p principal, id string) {
	ctx := r.Context()
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
	if !send(": events of workspace " + id + "\n\n") {
		return
	}
	h.metrics.streams.Inc()
	defer h.metrics.streams.Dec()

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
