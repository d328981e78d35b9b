package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// Patch is a set of column assignments: a JSON object holding exactly the
// columns assigned, by their SPEC 1.1 names. A column absent from the
// object is not assigned; a column assigned null is set to null (the zero
// time, "" or a nil pointer in Go).
//
//	{"operation": "STARTING", "op_started_at": "2026-01-05T00:00:02Z", "error_info": null}
type Patch struct{ contracts.Patch }

// patchColumn is one updatable column's codec.
type patchColumn struct {
	name contracts.Column
	// value returns whether the column is assigned and its wire value.
	value func(p *contracts.Patch) (bool, any)
	// assign decodes raw into the column and marks it assigned.
	assign func(p *contracts.Patch, raw json.RawMessage) error
}

// opt builds a column codec over one Opt field of contracts.Patch: enc
// gives the wire value of a Go value, dec the Go value of a raw one.
func opt[T any](name contracts.Column, field func(*contracts.Patch) *contracts.Opt[T], enc func(T) any, dec func(json.RawMessage) (T, error)) patchColumn {
	return patchColumn{
		name: name,
		value: func(p *contracts.Patch) (bool, any) {
			o := field(p)
			if !o.Set {
				return false, nil
			}
			return true, enc(o.V)
		},
		assign: func(p *contracts.Patch, raw json.RawMessage) error {
			v, err := dec(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*field(p) = contracts.Some(v)
			return nil
		},
	}
}

func same[T any](v T) any { return v }

func decodeAs[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// text is a NOT NULL text column.
func text(raw json.RawMessage) (string, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("want a string, got %s", clip(raw))
	}
	return v, nil
}

func nullText(raw json.RawMessage) (string, error) {
	v, err := decodeAs[NullString](raw)
	return string(v), err
}

func encNullText(s string) any { return NullString(s) }

func timestamp(raw json.RawMessage) (time.Time, error) {
	v, err := decodeAs[Time](raw)
	return v.Time, err
}

func encTime(t time.Time) any { return T(t) }

func integer(raw json.RawMessage) (int, error) {
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("want an integer, got %s", clip(raw))
	}
	return v, nil
}

// enum decodes a string enum, checking it with valid.
func enum[E ~string](valid func(E) bool, want string) func(json.RawMessage) (E, error) {
	return func(raw json.RawMessage) (E, error) {
		s, err := text(raw)
		if err != nil {
			return "", err
		}
		if !valid(E(s)) {
			return "", fmt.Errorf("%q: want %s", s, want)
		}
		return E(s), nil
	}
}

var (
	decObserved = enum(contracts.ObservedStatus.Valid, "PENDING, STANDBY, RUNNING or DELETED")
	decHealth   = enum(contracts.HealthStatus.Valid, "OK or ERROR")
	decOp       = enum(contracts.Operation.Valid, "NONE, PROVISIONING, RESTORING, STARTING, STOPPING, ARCHIVING or DELETING")
	decDesired  = enum(contracts.DesiredState.Valid, "PENDING, STANDBY or RUNNING")
)

func decPrevious(raw json.RawMessage) (contracts.ObservedStatus, error) {
	s, err := nullText(raw)
	if err != nil || s == "" {
		return "", err
	}
	return decObserved(json.RawMessage(`"` + s + `"`))
}

func decHomeCtx(raw json.RawMessage) (*contracts.HomeCtx, error) {
	if bytes.Equal(raw, null) {
		return nil, nil
	}
	var h contracts.HomeCtx
	if err := strictUnmarshal(raw, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

func decErrorInfo(raw json.RawMessage) (*contracts.ErrorInfo, error) {
	if bytes.Equal(raw, null) {
		return nil, nil
	}
	var e ErrorInfo
	if err := strictUnmarshal(raw, &e); err != nil {
		return nil, err
	}
	return e.Contracts()
}

// patchColumns are the updatable columns in table order (contracts.Patch's
// fields): one entry each.
var patchColumns = []patchColumn{
	opt(contracts.ColName, func(p *contracts.Patch) *contracts.Opt[string] { return &p.Name }, same, text),
	opt(contracts.ColDescription, func(p *contracts.Patch) *contracts.Opt[string] { return &p.Description }, encNullText, nullText),
	opt(contracts.ColMemo, func(p *contracts.Patch) *contracts.Opt[string] { return &p.Memo }, encNullText, nullText),
	opt(contracts.ColHomeCtx, func(p *contracts.Patch) *contracts.Opt[*contracts.HomeCtx] { return &p.HomeCtx }, same, decHomeCtx),
	opt(contracts.ColObservedStatus, func(p *contracts.Patch) *contracts.Opt[contracts.ObservedStatus] { return &p.ObservedStatus }, same, decObserved),
	opt(contracts.ColHealthStatus, func(p *contracts.Patch) *contracts.Opt[contracts.HealthStatus] { return &p.HealthStatus }, same, decHealth),
	opt(contracts.ColObservedAt, func(p *contracts.Patch) *contracts.Opt[time.Time] { return &p.ObservedAt }, encTime, timestamp),
	opt(contracts.ColOperation, func(p *contracts.Patch) *contracts.Opt[contracts.Operation] { return &p.Operation }, same, decOp),
	opt(contracts.ColOpStartedAt, func(p *contracts.Patch) *contracts.Opt[time.Time] { return &p.OpStartedAt }, encTime, timestamp),
	opt(contracts.ColOpID, func(p *contracts.Patch) *contracts.Opt[string] { return &p.OpID }, encNullText, nullText),
	opt(contracts.ColArchiveKey, func(p *contracts.Patch) *contracts.Opt[string] { return &p.ArchiveKey }, encNullText, nullText),
	opt(contracts.ColErrorCount, func(p *contracts.Patch) *contracts.Opt[int] { return &p.ErrorCount }, same, integer),
	opt(contracts.ColErrorInfo, func(p *contracts.Patch) *contracts.Opt[*contracts.ErrorInfo] { return &p.ErrorInfo }, func(e *contracts.ErrorInfo) any { return FromErrorInfo(e) }, decErrorInfo),
	opt(contracts.ColErrorMessage, func(p *contracts.Patch) *contracts.Opt[string] { return &p.ErrorMessage }, encNullText, nullText),
	opt(contracts.ColPreviousStatus, func(p *contracts.Patch) *contracts.Opt[contracts.ObservedStatus] { return &p.PreviousStatus },
		func(s contracts.ObservedStatus) any { return NullString(s) }, decPrevious),
	opt(contracts.ColDesiredState, func(p *contracts.Patch) *contracts.Opt[contracts.DesiredState] { return &p.DesiredState }, same, decDesired),
	opt(contracts.ColDeletedAt, func(p *contracts.Patch) *contracts.Opt[time.Time] { return &p.DeletedAt }, encTime, timestamp),
	opt(contracts.ColStandbyTTLSeconds, func(p *contracts.Patch) *contracts.Opt[int] { return &p.StandbyTTLSeconds }, same, integer),
	opt(contracts.ColArchiveTTLSeconds, func(p *contracts.Patch) *contracts.Opt[int] { return &p.ArchiveTTLSeconds }, same, integer),
	opt(contracts.ColLastAccessAt, func(p *contracts.Patch) *contracts.Opt[time.Time] { return &p.LastAccessAt }, encTime, timestamp),
}

// PatchColumns names the columns a patch may assign, in table order.
func PatchColumns() []contracts.Column {
	out := make([]contracts.Column, len(patchColumns))
	for i, c := range patchColumns {
		out[i] = c.name
	}
	return out
}

// MarshalJSON writes the assigned columns in table order.
func (p Patch) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, '{')
	for _, c := range patchColumns {
		set, v := c.value(&p.Patch)
		if !set {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, c.name...)
		b = append(b, '"', ':')
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", c.name, err)
		}
		b = append(b, enc...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads an object of column assignments; an unknown or
// non-updatable column is an error.
func (p *Patch) UnmarshalJSON(b []byte) error {
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(b, &cols); err != nil || cols == nil {
		return fmt.Errorf("patch: want an object of column assignments, got %s", clip(b))
	}
	p.Patch = contracts.Patch{}
	for _, c := range patchColumns {
		raw, ok := cols[string(c.name)]
		if !ok {
			continue
		}
		if err := c.assign(&p.Patch, raw); err != nil {
			return fmt.Errorf("patch: %w", err)
		}
		delete(cols, string(c.name))
	}
	if len(cols) > 0 {
		var unknown []string
		for k := range cols {
			unknown = append(unknown, k)
		}
		slices.Sort(unknown)
		return fmt.Errorf("patch: %s: not an updatable column (want one of %s)", strings.Join(unknown, ", "), columnList())
	}
	return nil
}

func columnList() string {
	names := make([]string, len(patchColumns))
	for i, c := range patchColumns {
		names[i] = string(c.name)
	}
	return strings.Join(names, ", ")
}

// Cond is the condition of a compare-and-set update: every field given
// must hold.
//
//	{"operation": "NONE", "not_terminal": true}
type Cond struct {
	Operation     *contracts.Operation    `json:"operation,omitempty"`
	DesiredState  *contracts.DesiredState `json:"desired_state,omitempty"`
	NotTerminal   bool                    `json:"not_terminal,omitempty"`
	NotDeleted    bool                    `json:"not_deleted,omitempty"`
	ErrorInfoNull bool                    `json:"error_info_null,omitempty"`
	Terminal      bool                    `json:"terminal,omitempty"`
}

// FromCond is c's wire form.
func FromCond(c contracts.Cond) Cond {
	w := Cond{NotTerminal: c.NotTerminal, NotDeleted: c.NotDeleted, ErrorInfoNull: c.ErrorInfoNull, Terminal: c.Terminal}
	if c.Operation.Set {
		op := c.Operation.V
		w.Operation = &op
	}
	if c.DesiredState.Set {
		d := c.DesiredState.V
		w.DesiredState = &d
	}
	return w
}

// Contracts is c as the contracts type, validated.
func (c Cond) Contracts() (contracts.Cond, error) {
	out := contracts.Cond{NotTerminal: c.NotTerminal, NotDeleted: c.NotDeleted, ErrorInfoNull: c.ErrorInfoNull, Terminal: c.Terminal}
	if c.Operation != nil {
		if !c.Operation.Valid() {
			return out, fmt.Errorf("cond.operation %q is not an operation", *c.Operation)
		}
		out.Operation = contracts.Some(*c.Operation)
	}
	if c.DesiredState != nil {
		if !c.DesiredState.Valid() {
			return out, fmt.Errorf("cond.desired_state %q: want PENDING, STANDBY or RUNNING", *c.DesiredState)
		}
		out.DesiredState = contracts.Some(*c.DesiredState)
	}
	return out, nil
}

// Writer attributes a write.
//
//	{"component": "state_reconciler", "instance": "coord-1", "epoch": 3}
type Writer struct {
	Component contracts.Component `json:"component"`
	Instance  string              `json:"instance,omitempty"`
	Epoch     int64               `json:"epoch,omitempty"`
	OnBehalf  contracts.Component `json:"on_behalf,omitempty"`
}

// Components lists every component a write may be attributed to.
var Components = []contracts.Component{
	contracts.CompAPI, contracts.CompAdmin, contracts.CompHealthMonitor, contracts.CompStateReconciler,
	contracts.CompTTLManager, contracts.CompArchiveGC, contracts.CompEventListener, contracts.CompProxy,
}

// FromWriter is w's wire form.
func FromWriter(w contracts.Writer) Writer {
	return Writer{Component: w.Component, Instance: w.Instance, Epoch: w.Epoch, OnBehalf: w.OnBehalf}
}

// Contracts is w as the contracts type, validated.
func (w Writer) Contracts() (contracts.Writer, error) {
	if !slices.Contains(Components, w.Component) {
		return contracts.Writer{}, fmt.Errorf("writer.component %q: want one of %s", w.Component, componentList())
	}
	if w.OnBehalf != "" && !slices.Contains(Components, w.OnBehalf) {
		return contracts.Writer{}, fmt.Errorf("writer.on_behalf %q: want one of %s", w.OnBehalf, componentList())
	}
	return contracts.Writer{Component: w.Component, Instance: w.Instance, Epoch: w.Epoch, OnBehalf: w.OnBehalf}, nil
}

func componentList() string {
	names := make([]string, len(Components))
	for i, c := range Components {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// filters names each contracts.Filter on the wire, in Filter order.
var filters = []string{"all", "active", "reconcile", "ttl", "running"}

// Filter is a row selection of Store.List: "all", "active", "reconcile",
// "ttl" or "running".
type Filter string

// FromFilter is f's wire name.
func FromFilter(f contracts.Filter) Filter {
	if int(f) < 0 || int(f) >= len(filters) {
		return Filter(fmt.Sprintf("filter-%d", int(f)))
	}
	return Filter(filters[f])
}

// Contracts is the filter named f.
func (f Filter) Contracts() (contracts.Filter, error) {
	i := slices.Index(filters, string(f))
	if i < 0 {
		return 0, fmt.Errorf("filter %q: want one of %s", f, strings.Join(filters, ", "))
	}
	return contracts.Filter(i), nil
}

// Strict decodes raw into v as the protocol does: unknown fields and
// trailing data are errors.
func Strict(raw []byte, v any) error { return strictUnmarshal(raw, v) }

// strictUnmarshal decodes raw into v, rejecting unknown fields and
// trailing data.
func strictUnmarshal(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after %s", clip(raw))
	}
	return nil
}
