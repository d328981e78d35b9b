package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestRoute(t *testing.T) {
	ev := map[string][]string{"tm.event": {"Tx"}}
	cases := []struct {
		name   string
		query  string
		events map[string][]string
		want   oracle.Subscription
		err    bool
	}{
		{"3.2 the register query", oracle.QueryRegister, ev, oracle.SubRegister, false},
		{"3.2 the update query", oracle.QueryUpdate, ev, oracle.SubUpdate, false},
		{"3.2 the complete query", oracle.QueryComplete, ev, oracle.SubComplete, false},
		{"3.2 another query → dropped", "tm.event='Tx'", ev, 0, true},
		{"3.2 a query differing in one byte → dropped", oracle.QueryComplete + " ", ev, 0, true},
		{"3.2 no events → dropped", oracle.QueryComplete, nil, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Route(tc.query, tc.events)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRegisterAndUpdateIDs(t *testing.T) {
	cases := []struct {
		name   string
		key    string
		values []string
		ids    []uint64
		errs   int
	}{
		{"3.2 one id", oracle.KeyRegisterID, []string{"7"}, []uint64{7}, 0},
		{"3.2 several messages in one tx, in order", oracle.KeyRegisterID, []string{"9", "3", "9"}, []uint64{9, 3, 9}, 0},
		{"3.2 an unparsable value is skipped and counted", oracle.KeyRegisterID, []string{"4", "x", "-1", "5"}, []uint64{4, 5}, 2},
		{"3.2 max uint64", oracle.KeyRegisterID, []string{"18446744073709551615"}, []uint64{18446744073709551615}, 0},
		{"3.2 overflow is an error", oracle.KeyRegisterID, []string{"18446744073709551616"}, nil, 1},
		{"3.2 empty string is an error", oracle.KeyUpdateID, []string{""}, nil, 1},
		{"3.2 no key → nothing", "", nil, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := map[string][]string{"tm.event": {"Tx"}}
			if tc.key != "" {
				ev[tc.key] = tc.values
			}
			f := RegisterIDs
			if tc.key == oracle.KeyUpdateID {
				f = UpdateIDs
			}
			ids, errs := f(ev)
			require.Equal(t, tc.ids, ids)
			require.Len(t, errs, tc.errs)
		})
	}
}

func TestUpdateIDsReadOnlyRequestID(t *testing.T) {
	// D10: the frame's nonce attribute (the moderator's, not authoritative) is
	// never read, nor is a register attribute.
	ids, errs := UpdateIDs(map[string][]string{
		oracle.KeyUpdateID:                {"3"},
		oracle.EventUpdate + ".nonce":     {"999"},
		oracle.KeyRegisterID:              {"8"},
		oracle.EventUpdate + ".msg_index": {"0"},
	})
	require.Empty(t, errs)
	require.Equal(t, []uint64{3}, ids)
}

func TestCompleteEntries(t *testing.T) {
	bt := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	cases := []struct {
		name    string
		ids     []string
		nonces  []string
		times   []string
		entries []oracle.CompleteEntry
		errs    int
	}{
		{"3.2 one entry", []string{"2"}, []string{"14"}, []string{"1893456057"},
			[]oracle.CompleteEntry{{RequestID: 2, Nonce: 14, BlockTime: bt(1893456057)}}, 0},
		{"F7 several completes in one block line up by index", []string{"2", "5"}, []string{"14", "3"}, []string{"1893456057", "1893456057"},
			[]oracle.CompleteEntry{{RequestID: 2, Nonce: 14, BlockTime: bt(1893456057)}, {RequestID: 5, Nonce: 3, BlockTime: bt(1893456057)}}, 0},
		{"3.2 lengths differ → zipped to the shortest, one error", []string{"2", "5", "6"}, []string{"14", "3"}, []string{"10", "11", "12"},
			[]oracle.CompleteEntry{{RequestID: 2, Nonce: 14, BlockTime: bt(10)}, {RequestID: 5, Nonce: 3, BlockTime: bt(11)}}, 1},
		{"3.2 an unparsable entry is skipped alone", []string{"2", "x", "6"}, []string{"1", "2", "3"}, []string{"10", "11", "12"},
			[]oracle.CompleteEntry{{RequestID: 2, Nonce: 1, BlockTime: bt(10)}, {RequestID: 6, Nonce: 3, BlockTime: bt(12)}}, 1},
		{"3.2 an unparsable nonce", []string{"2"}, []string{"1.5"}, []string{"10"}, nil, 1},
		{"3.2 an unparsable block time", []string{"2"}, []string{"1"}, []string{"2030-01-01"}, nil, 1},
		{"3.2 a block time beyond int64 seconds", []string{"2"}, []string{"1"}, []string{"9223372036854775808"}, nil, 1},
		{"3.2 mismatch and a bad entry count separately", []string{"x", "2"}, []string{"1", "2", "3"}, []string{"10", "11"},
			[]oracle.CompleteEntry{{RequestID: 2, Nonce: 2, BlockTime: bt(11)}}, 2},
		{"3.2 no complete attributes → nothing", nil, nil, nil, nil, 0},
		{"3.2 one list missing → no entries, one error", []string{"1"}, nil, []string{"10"}, nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := map[string][]string{"tm.event": {"NewBlock"}}
			for k, v := range map[string][]string{oracle.KeyCompleteID: tc.ids, oracle.KeyCompleteNonce: tc.nonces, oracle.KeyCompleteBlockTime: tc.times} {
				if v != nil {
					ev[k] = v
				}
			}
			entries, errs := CompleteEntries(ev)
			require.Equal(t, tc.entries, entries)
			require.Len(t, errs, tc.errs)
		})
	}
}
