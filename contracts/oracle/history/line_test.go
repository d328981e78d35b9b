package history

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

var lineStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func TestLineRendersEachKind(t *testing.T) {
	self := "guru1qyfk2xz8e5mrwzujyxv4ypkzrkxpn6dkmu6va3"
	submit := Msg{Type: oracle.TypeURLSubmit, Signer: self, RequestID: 7, Nonce: 15, RawData: "101.5", Provider: self}
	at := lineStart.Add(62 * time.Second)
	cases := []struct {
		e    Event
		want []string
	}{
		{Event{Kind: KindProc, Life: 2, Proc: &Proc{Action: ProcExit, Signal: "SIGTERM", Status: 0}},
			[]string{"+00:01:02.000 #5 L2 proc exit SIGTERM status=0"}},
		{Event{Kind: KindProc, Life: 1, Proc: &Proc{Action: ProcExit, Signal: "SIGKILL", Status: -1}},
			[]string{"L1 proc exit killed by SIGKILL"}},
		{Event{Kind: KindRPC, Life: 1, RPC: &RPC{Call: 57, Phase: PhaseRecv, Method: "broadcast_tx_sync", ID: "31",
			Tx: &Tx{Hash: "3F2A0000000000009C1D", Signer: self, Sequence: 4, GasLimit: 70000, Msgs: []Msg{submit}}}},
			[]string{"L1 rpc.recv c57 broadcast_tx_sync id=31 tx=3F2A00000000 signer=guru1qyfk2x…6va3 seq=4 gas=70000",
				`submit(r=7 n=15 "101.5")`}},
		{Event{Kind: KindRPC, RPC: &RPC{Call: 58, Phase: PhaseDone, Method: "abci_query", ID: "32",
			Query:  &Query{Path: "/guru.oracle.v1.Query/OracleSubmitData", RequestID: 7, Nonce: 15},
			Result: &RPCResult{Value: &QueryValue{Submissions: []Submission{{Provider: self}}}}, TRecv: at}},
			[]string{`guru.oracle.v1.Query/OracleSubmitData r=7 n=15 provider=""`, "-> code 0", "providers=[guru1qyfk2x…6va3]",
				"recv=+00:01:02.000"}},
		{Event{Kind: KindRPC, RPC: &RPC{Call: 59, Phase: PhaseDone, Method: "broadcast_tx_sync", Lost: true}},
			[]string{"-> lost"}},
		{Event{Kind: KindRPC, RPC: &RPC{Phase: PhaseDone, Method: "broadcast_tx_sync",
			Result: &RPCResult{ErrCode: -32603, ErrMessage: "Internal error", ErrData: "mempool is full"}}},
			[]string{"-> error -32603 Internal error: mempool is full"}},
		{Event{Kind: KindWS, WS: &WS{Conn: 2, Action: WSFrame, ID: "2", Query: oracle.QueryComplete, Frame: &Frame{
			Type: "NewBlock", Height: 57, Published: at,
			Events: map[string][]string{"complete_oracle_data_set.request_id": {"2", "5"}, "tm.event": {"NewBlock"}}}}},
			[]string{"ws frame conn=2 id=2 NewBlock h=57 complete_oracle_data_set.request_id=[2,5] published=+00:01:02.000"}},
		{Event{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginSUT, Tx: Tx{Hash: "AB", Signer: self, Msgs: []Msg{submit}},
			Code: 32, Log: "account sequence mismatch", Injected: true, Mempool: 3}},
			[]string{"checktx sut tx=AB", `-> code 32 "account sequence mismatch" [injected] mempool=3`}},
		{Event{Kind: KindCheckTx, CheckTx: &CheckTx{Origin: OriginPeer, RPCError: "tx already exists in cache"}},
			[]string{`-> rpc error "tx already exists in cache"`}},
		{Event{Kind: KindBlock, Block: &Block{Height: 63, Time: at, Txs: 2,
			Completes: []Complete{{RequestID: 7, Nonce: 15, RawData: "101.5", Providers: []string{"a", "b"}, Unparsable: 1}}}},
			[]string{`block h=63 bt=+00:01:02.000 complete(r=7 n=15 "101.5" providers=2 unparsable=1) txs=2`}},
		{Event{Kind: KindDeliver, Deliver: &Deliver{Height: 63, Index: 1, Origin: OriginSUT, Hash: "S1", Signer: self,
			Sequence: 4, Msgs: []Msg{submit}, Code: 18, Log: "nonce is not correct"}},
			[]string{`deliver sut h=63 i=1 tx=S1 signer=guru1qyfk2x…6va3 seq=4 submit(r=7 n=15 "101.5") code 18 "nonce is not correct"`}},
		{Event{Kind: KindEvict, Evict: &Evict{Cause: EvictFault, Origin: OriginSUT, Hash: "EE", Sequence: 5}},
			[]string{"evict fault sut tx=EE", "seq=5"}},
		{Event{Kind: KindOp, Op: &Op{Action: OpBogusUpdate, RequestID: 7, Doc: testDocRecord(), Hash: "OP"}},
			[]string{"op bogus-nonce-update r=7 tx=OP", "doc(r=7 n=14 ENABLED period=30 quorum=2"}},
		{Event{Kind: KindPeer, Peer: &Peer{Provider: self, Behaviour: PeerDuplicate, RequestID: 7, Nonce: 15, Value: "1",
			Hashes: []string{"H1", "H2"}}},
			[]string{`peer guru1qyfk2x…6va3 duplicate r=7 n=15 "1" tx=H1 tx=H2`}},
		{Event{Kind: KindSrc, Src: &Src{Exchange: 12, Phase: PhaseRecv, RequestID: 7, Endpoint: 1, Path: "/r/7/e/1"}},
			[]string{"src.recv x12 r=7 e=1 /r/7/e/1"}},
		{Event{Kind: KindSrc, Src: &Src{Exchange: 12, Phase: PhaseDone, RequestID: 7, Endpoint: 1, Class: "ok",
			Status: 200, Body: `{"a":1}`, TRecv: at}},
			[]string{`src.done x12 r=7 e=1 ok status=200 body="{\"a\":1}" recv=+00:01:02.000`}},
		{Event{Kind: KindSrc, Src: &Src{Phase: PhaseDone, Aborted: true}}, []string{" aborted"}},
		{Event{Kind: KindFault, Fault: &Fault{ID: "F10", Phase: FaultStart, Params: []Param{{"k", "v"}}, Until: at}},
			[]string{"fault F10 start k=v until=+00:01:02.000"}},
		{Event{Kind: KindWhite, White: &White{Point: WhiteJob, Name: "req_7", Trigger: "tick selects",
			Rows: []string{"tick selects"}, Before: &JobState{ExecStatus: 0, Nonce: 14, NextRunTime: at},
			After: &JobState{ExecStatus: 2, Nonce: 14, ExecNonce: 14, NextRunTime: at}}},
			[]string{"white job req_7 tick selects rows=[tick selects] Pending(n=14 next=+00:01:02.000) -> Executing(n=14 exec=14 next=+00:01:02.000)"}},
		{Event{Kind: KindWhite, White: &White{Point: WhiteGoroutines, Value: 12}}, []string{"white goroutines count=12"}},
	}
	for _, tc := range cases {
		tc.e.Seq, tc.e.At = 5, at
		got := Line(tc.e, lineStart)
		require.NotContains(t, got, "\n")
		for _, w := range tc.want {
			require.Contains(t, got, w)
		}
	}
}

// Every payload renders (none falls through to the bare kind), and the
// line of an event with maps is the same every time.
func TestLineRendersEveryPayloadStably(t *testing.T) {
	full := fullEvent(t)
	v := reflect.ValueOf(full)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Pointer {
			continue
		}
		e := Event{Seq: 1, At: lineStart, Kind: Kind(strings.ToLower(v.Type().Field(i).Name))}
		reflect.ValueOf(&e).Elem().Field(i).Set(f)
		first := Line(e, lineStart)
		require.NotEqual(t, "+00:00:00.000 #1 "+string(e.Kind), first, "%s has no rendering", v.Type().Field(i).Name)
		for j := 0; j < 20; j++ {
			require.Equal(t, first, Line(e, lineStart))
		}
	}
	require.Len(t, Timeline([]Event{full, full}, lineStart), 2)
}

// testDocRecord is a request doc as the records hold it (wire/records
// converts the chain's proto form to it).
func testDocRecord() Doc {
	return Doc{RequestID: 7, OracleType: 1, Name: "btc", Description: "d", Period: 30,
		AccountList: []string{"guru1a", "guru1b"}, Quorum: 2,
		Endpoints:       []Endpoint{{URL: "http://127.0.0.1:1/r/7/e/0", ParseRule: "data.price"}},
		AggregationRule: 4, Status: int32(oracle.StatusEnabled), Nonce: 14}
}
