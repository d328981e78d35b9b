package record

import (
	"strconv"
	"time"
)

// Offset renders a virtual duration since the start of a run as
// "+HH:MM:SS.mmm", with a day count in front once it exceeds a day
// ("+1d02:03:04.500"); a negative one starts with "-".
func Offset(d time.Duration) string {
	sign := byte('+')
	if d < 0 {
		sign = '-'
		d = -d
	}
	ms := int64(d / time.Millisecond)
	days := ms / 86_400_000
	ms -= days * 86_400_000
	h := ms / 3_600_000
	ms -= h * 3_600_000
	m := ms / 60_000
	ms -= m * 60_000
	s := ms / 1000
	ms -= s * 1000
	b := make([]byte, 0, 20)
	b = append(b, sign)
	if days > 0 {
		b = strconv.AppendInt(b, days, 10)
		b = append(b, 'd')
	}
	b = padInt(b, h, 2)
	b = append(b, ':')
	b = padInt(b, m, 2)
	b = append(b, ':')
	b = padInt(b, s, 2)
	b = append(b, '.')
	b = padInt(b, ms, 3)
	return string(b)
}

func padInt(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
