package ports

import (
	"encoding/json"
	"strconv"
	"time"
)

// AppendJSON appends the JSON encoding of c to b: the bytes
// json.Marshal(c) gives, without its reflection. The EventListener
// republishes every change of the fleet (SPEC 4.6), so the encoding is
// on a hot path. A string json.Marshal would escape, or a time it would
// refuse, takes json.Marshal itself (and an error only it can report).
func (c *Change) AppendJSON(b []byte) ([]byte, error) {
	if y := c.At.Year(); y < 0 || y > 9999 ||
		!plainJSON(c.WorkspaceID) || !plainJSON(string(c.ObservedStatus)) || !plainJSON(string(c.HealthStatus)) ||
		!plainJSON(string(c.Operation)) || !plainJSON(string(c.DesiredState)) || !plainJSON(c.ArchiveKey) ||
		!plainJSON(c.ErrorMessage) || !plainJSON(string(c.Display)) {
		out, err := json.Marshal(c)
		if err != nil {
			return b, err
		}
		return append(b, out...), nil
	}
	b = appendField(b, `{"workspace_id":`, c.WorkspaceID)
	b = appendField(b, `,"observed_status":`, string(c.ObservedStatus))
	b = appendField(b, `,"health_status":`, string(c.HealthStatus))
	b = appendField(b, `,"operation":`, string(c.Operation))
	b = appendField(b, `,"desired_state":`, string(c.DesiredState))
	b = append(b, `,"deleted":`...)
	b = strconv.AppendBool(b, c.Deleted)
	if c.ArchiveKey != "" {
		b = appendField(b, `,"archive_key":`, c.ArchiveKey)
	}
	if c.ErrorMessage != "" {
		b = appendField(b, `,"error_message":`, c.ErrorMessage)
	}
	b = append(b, `,"error_count":`...)
	b = strconv.AppendInt(b, int64(c.ErrorCount), 10)
	b = appendField(b, `,"display":`, string(c.Display))
	b = append(b, `,"at":"`...)
	b = c.At.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...), nil
}

// appendField appends name, then s quoted (s is plainJSON).
func appendField(b []byte, name, s string) []byte {
	b = append(b, name...)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON reports whether json.Marshal writes s as it is between
// quotes: printable ASCII, without the quote, the backslash or the
// characters it escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
