package oracle

import (
	"math"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The judge's own copy of the EventWatcher's wire facts and rules
// (ORACLE-SPEC §3.2): the three queries, the routing of a frame, the ids
// of a Register or Update frame and the entries of a Complete frame, and
// the fatal count of re-subscription failures (D18); with the submission's
// type URL (§6.6), the fee's denom (D29) and the "not found" code of a
// query (§6.5). Package oracle has the
// reference's; spec_test.go holds the two equal.
const (
	// The three subscription queries, byte for byte (§3.2: Q_REG, Q_UPD,
	// Q_CMP).
	specQueryRegister = "tm.event='Tx' AND message.action='/guru.oracle.v1.MsgRegisterOracleRequestDoc'"
	specQueryUpdate   = "tm.event='Tx' AND message.action='/guru.oracle.v1.MsgUpdateOracleRequestDoc'"
	specQueryComplete = "tm.event='NewBlock' AND complete_oracle_data_set.request_id EXISTS"
	// specSubscriptions is how many subscriptions the watcher holds.
	specSubscriptions = 3

	// The events-map keys the watcher reads (§3.2, §6.4).
	specKeyRegisterID        = "register_oracle_request_doc.request_id"
	specKeyUpdateID          = "update_oracle_request_doc.request_id"
	specKeyCompleteID        = "complete_oracle_data_set.request_id"
	specKeyCompleteNonce     = "complete_oracle_data_set.nonce"
	specKeyCompleteBlockTime = "complete_oracle_data_set.block_time"
	// specKeyTxHash is the key CometBFT adds to a Tx frame's events map.
	specKeyTxHash = "tx.hash"

	// specTypeURLSubmit is MsgSubmitOracleData's type URL (§6.6).
	specTypeURLSubmit = "/guru.oracle.v1.MsgSubmitOracleData"
	// specDenom is the fee's denom, implied by gas.prices (§2.7, D29).
	specDenom = "agxn"
	// specCodeNotFound is the code of a doc, submissions or aggregate
	// query for something the chain does not hold (§6.5: code 18).
	specCodeNotFound = 18
)

// specRoute is §3.2's routing rule: a frame belongs to the subscription
// whose query equals its result.query byte for byte; a frame with another
// query, or without an events map, belongs to none (it is dropped).
func specRoute(query string, events map[string][]string) (oracle.Subscription, bool) {
	if events == nil {
		return 0, false
	}
	switch query {
	case specQueryRegister:
		return oracle.SubRegister, true
	case specQueryUpdate:
		return oracle.SubUpdate, true
	case specQueryComplete:
		return oracle.SubComplete, true
	}
	return 0, false
}

// specRequestIDs are the ids of a Register or Update frame (§3.2): every
// value under key, in order, each a decimal uint64. A value that is not
// one is skipped alone, as §3.2 says of a Complete entry
// (docs/decisions/oracle-3-daemon.md, DR238); no other attribute is read (D10).
func specRequestIDs(events map[string][]string, key string) []uint64 {
	return specAppendRequestIDs(nil, events, key)
}

// specAppendRequestIDs is specRequestIDs appended to ids.
func specAppendRequestIDs(ids []uint64, events map[string][]string, key string) []uint64 {
	for _, v := range events[key] {
		if id, err := strconv.ParseUint(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// specCompleteEntries are the entries of a Complete frame (§3.2): the
// i-th is (request_id[i], nonce[i], block_time[i]) for every i below the
// shortest of the three lists, block_time in unix seconds; an entry with
// a value that does not parse as a decimal uint64 (or a block time past
// what a time holds) is skipped alone.
func specCompleteEntries(events map[string][]string) []oracle.CompleteEntry {
	return specAppendCompleteEntries(nil, events)
}

// specAppendCompleteEntries is specCompleteEntries appended to out.
func specAppendCompleteEntries(out []oracle.CompleteEntry, events map[string][]string) []oracle.CompleteEntry {
	ids, nonces, times := events[specKeyCompleteID], events[specKeyCompleteNonce], events[specKeyCompleteBlockTime]
	for i := range min(len(ids), len(nonces), len(times)) {
		id, err1 := strconv.ParseUint(ids[i], 10, 64)
		n, err2 := strconv.ParseUint(nonces[i], 10, 64)
		bt, err3 := strconv.ParseUint(times[i], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || bt > math.MaxInt64 {
			continue
		}
		out = append(out, oracle.CompleteEntry{RequestID: id, Nonce: n, BlockTime: time.Unix(int64(bt), 0).UTC()})
	}
	return out
}

// specResubscribeExhausted reports whether failures consecutive failed
// re-subscription attempts are the fatal condition: retry.max_attempts of
// them (§3.2 reconnect, §3.7, D18).
func specResubscribeExhausted(failures, maxAttempts int) bool {
	return failures >= maxAttempts
}
