package history

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var timeType = reflect.TypeOf(time.Time{})

// fill sets every field reachable from v to a distinct non-zero value:
// pointers are allocated, slices get two elements, maps two keys. It fails
// the test on a field type it does not know, so that a field added later
// cannot escape the sensitivity test.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(t, v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			k := reflect.New(v.Type().Key()).Elem()
			fill(t, k, n)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Unix(1_900_000_000+int64(*n), int64(*n))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: unsupported kind %s (%s)", v.Kind(), v.Type())
	}
}

// fullEvent is an event with every payload and every field set.
func fullEvent(t *testing.T) Event {
	t.Helper()
	var e Event
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	return e
}

// mutation changes one leaf of an event.
type mutation struct {
	path  string
	apply func(reflect.Value)
}

// mutations lists one change per leaf reachable from v (and, for slices
// and maps, a change of length), each addressed by a path of field names
// and indexes from the root.
func mutations(v reflect.Value, path string, get func(root reflect.Value) reflect.Value) []mutation {
	var out []mutation
	leaf := func(change func(reflect.Value)) {
		out = append(out, mutation{path, func(root reflect.Value) { change(get(root)) }})
	}
	switch v.Kind() {
	case reflect.String:
		leaf(func(x reflect.Value) { x.SetString(x.String() + "x") })
	case reflect.Int, reflect.Int32, reflect.Int64:
		leaf(func(x reflect.Value) { x.SetInt(x.Int() + 1) })
	case reflect.Uint32, reflect.Uint64:
		leaf(func(x reflect.Value) { x.SetUint(x.Uint() + 1) })
	case reflect.Bool:
		leaf(func(x reflect.Value) { x.SetBool(!x.Bool()) })
	case reflect.Pointer:
		out = append(out, mutation{path + "=nil", func(root reflect.Value) {
			x := get(root)
			x.Set(reflect.Zero(x.Type()))
		}})
		out = append(out, mutations(v.Elem(), path, func(root reflect.Value) reflect.Value { return get(root).Elem() })...)
	case reflect.Slice:
		out = append(out, mutation{path + "[:1]", func(root reflect.Value) {
			x := get(root)
			x.Set(x.Slice(0, 1))
		}})
		for i := 0; i < v.Len(); i++ {
			i := i
			out = append(out, mutations(v.Index(i), fmt.Sprintf("%s[%d]", path, i),
				func(root reflect.Value) reflect.Value { return get(root).Index(i) })...)
		}
	case reflect.Map:
		// Frame.Events: add a key, drop a key, change a value list.
		out = append(out, mutation{path + "+key", func(root reflect.Value) {
			get(root).SetMapIndex(reflect.ValueOf("extra"), reflect.ValueOf([]string{"v"}))
		}})
		for _, k := range v.MapKeys() {
			k := k
			out = append(out, mutation{path + "-" + k.String(), func(root reflect.Value) {
				get(root).SetMapIndex(k, reflect.Value{})
			}})
			out = append(out, mutation{path + "[" + k.String() + "]", func(root reflect.Value) {
				m := get(root)
				m.SetMapIndex(k, reflect.ValueOf(append(m.MapIndex(k).Interface().([]string), "more")))
			}})
		}
	case reflect.Struct:
		if v.Type() == timeType {
			leaf(func(x reflect.Value) { x.Set(reflect.ValueOf(x.Interface().(time.Time).Add(time.Nanosecond))) })
			return out
		}
		for i := 0; i < v.NumField(); i++ {
			i := i
			out = append(out, mutations(v.Field(i), path+"."+v.Type().Field(i).Name,
				func(root reflect.Value) reflect.Value { return get(root).Field(i) })...)
		}
	}
	return out
}

// Every field of every payload is hashed: changing any one leaf (or the
// length of any list, or a pointer to nil) changes the encoding.
func TestEncodingCoversEveryField(t *testing.T) {
	base := fullEvent(t)
	want := AppendEvent(nil, &base)
	muts := mutations(reflect.ValueOf(&base).Elem(), "Event", func(root reflect.Value) reflect.Value { return root })
	require.Greater(t, len(muts), 300, "the walk must reach the payloads' fields")
	for _, m := range muts {
		e := fullEvent(t)
		m.apply(reflect.ValueOf(&e).Elem())
		require.NotEqual(t, want, AppendEvent(nil, &e), "changing %s does not change the encoding", m.path)
	}
}

// Maps are encoded in sorted key order: the encoding never depends on
// Go's map iteration order.
func TestEncodingIgnoresMapOrder(t *testing.T) {
	events := map[string][]string{}
	for i := 0; i < 40; i++ {
		events["key"+strconv.Itoa(i)] = []string{strconv.Itoa(i)}
	}
	e := Event{Kind: KindWS, WS: &WS{Action: WSFrame, Frame: &Frame{Type: "NewBlock", Events: events}}}
	want := AppendEvent(nil, &e)
	for i := 0; i < 50; i++ {
		copied := map[string][]string{}
		for k, v := range events {
			copied[k] = v
		}
		e.WS.Frame.Events = copied
		require.Equal(t, want, AppendEvent(nil, &e))
	}
}

// Adjacent strings cannot trade characters, and an empty list is not a
// missing one where the difference is meaningful (an empty docs answer).
func TestEncodingIsUnambiguous(t *testing.T) {
	a := Event{Kind: KindPeer, Peer: &Peer{Provider: "ab", Value: "c"}}
	b := Event{Kind: KindPeer, Peer: &Peer{Provider: "a", Value: "bc"}}
	require.NotEqual(t, AppendEvent(nil, &a), AppendEvent(nil, &b))

	none := Event{Kind: KindRPC, RPC: &RPC{Result: &RPCResult{Value: &QueryValue{}}}}
	empty := Event{Kind: KindRPC, RPC: &RPC{Result: &RPCResult{Value: &QueryValue{Docs: []Doc{}}}}}
	require.NotEqual(t, AppendEvent(nil, &none), AppendEvent(nil, &empty))
}

func TestRecorderNumbersAndHashes(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	record := func(value string) *Recorder {
		r := NewRecorder()
		r.Add(Event{At: at, Kind: KindFault, Fault: &Fault{ID: "F10", Phase: FaultStart}})
		r.Add(Event{At: at.Add(time.Second), Kind: KindPeer, Peer: &Peer{Provider: "p", Value: value}})
		return r
	}
	a, b, c := record("1.5"), record("1.5"), record("1.6")
	require.Equal(t, a.Hash(), b.Hash())
	require.NotEqual(t, a.Hash(), c.Hash())
	evs := a.Events()
	require.Len(t, evs, 2)
	require.Equal(t, []int64{1, 2}, []int64{evs[0].Seq, evs[1].Seq})
}

func TestLeanRecorderFoldsOnlyPeersRoutineSuccess(t *testing.T) {
	evs := []Event{
		{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginPeer}},
		{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginPeer, Code: 32}},
		{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginPeer, RPCError: "mempool is full"}},
		{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginSUT}},
		{Kind: KindDeliver, Deliver: &Deliver{Origin: OriginPeer}},
		{Kind: KindDeliver, Deliver: &Deliver{Origin: OriginPeer, Code: 18}},
		{Kind: KindDeliver, Deliver: &Deliver{Origin: OriginIntruder}},
		{Kind: KindPeer, Peer: &Peer{Behaviour: PeerPrompt}},
		{Kind: KindPeer, Peer: &Peer{Behaviour: PeerLate}},
		{Kind: KindPeer, Peer: &Peer{Behaviour: PeerDuplicate}},
		{Kind: KindPeer, Peer: &Peer{Behaviour: PeerAbsent}},
	}
	lean, full := NewLeanRecorder(), NewRecorder()
	for _, e := range evs {
		lean.Add(e)
		full.Add(e)
	}
	require.Equal(t, full.Hash(), lean.Hash(), "folded events are hashed all the same")
	require.Equal(t, int64(4), lean.Folded())
	require.Equal(t, len(evs)-4, lean.Len())
	for _, e := range lean.Events() {
		require.False(t, Routine(&e))
	}
	require.Equal(t, len(evs), full.Len())
}
