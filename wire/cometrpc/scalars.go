package cometrpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Int64 is a 64-bit integer written as a JSON string ("42"), as CometBFT
// writes int64 fields. It decodes from a string or a bare number.
type Int64 int64

func (n Int64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(n), 10) + `"`), nil
}

func (n *Int64) UnmarshalJSON(b []byte) error {
	s, err := intText(b)
	if err != nil || s == "" {
		return err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("int64: %w", err)
	}
	*n = Int64(v)
	return nil
}

// Uint64 is a 64-bit unsigned integer written as a JSON string.
type Uint64 uint64

func (n Uint64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(n), 10) + `"`), nil
}

func (n *Uint64) UnmarshalJSON(b []byte) error {
	s, err := intText(b)
	if err != nil || s == "" {
		return err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("uint64: %w", err)
	}
	*n = Uint64(v)
	return nil
}

// intText is the digits of a JSON string or number; "" for null.
func intText(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return "", nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("empty integer string")
		}
		return s, nil
	}
	return string(b), nil
}

// HexBytes is a byte string written as upper-case hex, as CometBFT writes
// hashes. It decodes from hex in either case; "" and null decode to nil.
type HexBytes []byte

func (h HexBytes) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strings.ToUpper(hex.EncodeToString(h)) + `"`), nil
}

func (h *HexBytes) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*h = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	if s == "" {
		*h = nil
		return nil
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	*h = v
	return nil
}

func (h HexBytes) String() string {
	// Upper-case hex written directly: every broadcast's answer carries a
	// hash, and encoding then upper-casing cost a second pass and string.
	// A hash's digits are written on the stack and copied once.
	const digits = "0123456789ABCDEF"
	var buf [64]byte
	b := buf[:0]
	if 2*len(h) > len(buf) {
		b = make([]byte, 0, 2*len(h))
	}
	for _, c := range h {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b)
}

// HexBytesFromString parses hex in either case (a tx hash, for example).
func HexBytesFromString(s string) (HexBytes, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("hex bytes: %w", err)
	}
	return b, nil
}
