package wire

import (
	"bytes"
	"fmt"
	"time"
)

// Time is a point in virtual time on the wire: an RFC 3339 string in UTC
// with as many fractional digits as it needs ("2026-01-05T00:00:01.5Z"),
// or null for the zero time (a null column).
type Time struct{ time.Time }

// T wraps t.
func T(t time.Time) Time { return Time{t} }

var null = []byte("null")

// MarshalJSON writes t as an RFC 3339 string in UTC, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return null, nil
	}
	b := make([]byte, 0, 40)
	b = append(b, '"')
	b = AppendRFC3339(b, t.Time)
	return append(b, '"'), nil
}

// AppendRFC3339 appends t in UTC as time.RFC3339Nano writes it (as many
// fractional digits as it needs), without the layout interpreter of
// AppendFormat: a row has six times, and a run lists rows all the time.
func AppendRFC3339(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	hh, mi, ss := t.Clock()
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+hh/10), byte('0'+hh%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+ss/10), byte('0'+ss%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i >= 1; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z')
}

// UnmarshalJSON reads an RFC 3339 string (any offset; kept in UTC) or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, null) {
		t.Time = time.Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("time %s: want an RFC 3339 string or null", clip(b))
	}
	v, err := parseTime(b[1 : len(b)-1])
	if err != nil {
		return fmt.Errorf("time %s: want RFC 3339 such as \"2026-01-05T00:00:01.5Z\"", clip(b))
	}
	*t = v
	return nil
}

// parseTime reads the RFC 3339 text of a time (without its quotes).
func parseTime(s []byte) (Time, error) {
	v, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return Time{}, err
	}
	return Time{v.UTC()}, nil
}

// clip shortens a raw value for an error message.
func clip(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
