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
	if t, ok := parseUTC(s); ok {
		return Time{t}, nil
	}
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

// parseUTC reads the layout AppendRFC3339 writes for a year of four
// digits — "2026-01-05T00:00:01.5Z" — without the layout interpreter of
// time.Parse or a copy of the text: a row has six times, and a child
// reads rows all the time. It reports false for anything else, valid or
// not, which time.Parse then reads; what it accepts, time.Parse reads
// the same (TestParseUTCIsTimeParse).
func parseUTC(s []byte) (time.Time, bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hh, mi, ss := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(time.Month(mo), y) || hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59 {
		return time.Time{}, false
	}
	ns := 0
	switch frac := s[19 : len(s)-1]; {
	case len(frac) == 0:
	case len(frac) < 2 || len(frac) > 10 || frac[0] != '.':
		return time.Time{}, false
	default:
		if ns = num(frac[1:]); ns < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			ns *= 10
		}
	}
	return time.Date(y, time.Month(mo), d, hh, mi, ss, ns, time.UTC), true
}

// daysIn is the number of days of month m of year y.
func daysIn(m time.Month, y int) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
