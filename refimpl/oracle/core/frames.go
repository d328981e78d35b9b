package core

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// Route is the watcher's routing rule (ORACLE-SPEC 3.2): a frame belongs to
// the subscription whose query equals the frame's result.query. A frame with
// another query, or without an events map, is dropped and counted in
// TotalErrors; Route then returns an error saying why.
func Route(query string, events map[string][]string) (oracle.Subscription, error) {
	for _, s := range oracle.Subscriptions {
		if s.Query() == query {
			if events == nil {
				return 0, fmt.Errorf("frame for the %s subscription has no events", s)
			}
			return s, nil
		}
	}
	return 0, fmt.Errorf("frame for unknown query %q", query)
}

// RegisterIDs are the request ids of a Register frame: every value of
// register_oracle_request_doc.request_id, in order (one tx may register
// several docs). A value that is not a decimal uint64 is skipped and reported
// in errs.
func RegisterIDs(events map[string][]string) (ids []uint64, errs []error) {
	return requestIDs(events, oracle.KeyRegisterID)
}

// UpdateIDs are the request ids of an Update frame: every value of
// update_oracle_request_doc.request_id, in order. No other attribute of the
// frame is read (D10: its nonce is never used).
func UpdateIDs(events map[string][]string) (ids []uint64, errs []error) {
	return requestIDs(events, oracle.KeyUpdateID)
}

func requestIDs(events map[string][]string, key string) (ids []uint64, errs []error) {
	for i, v := range events[key] {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d] = %q: not a decimal uint64", key, i, v))
			continue
		}
		ids = append(ids, id)
	}
	return ids, errs
}

// CompleteEntries decodes a Complete frame (ORACLE-SPEC 3.2): the i-th entry is
// (request_id[i], nonce[i], block_time[i]) for every i below the shortest of
// the three lists. Lists of different lengths give one error (the entries past
// the shortest list are skipped); an entry with a value that does not parse
// gives one error and is skipped alone. Each error counts once in TotalErrors.
func CompleteEntries(events map[string][]string) (entries []oracle.CompleteEntry, errs []error) {
	ids, nonces, times := events[oracle.KeyCompleteID], events[oracle.KeyCompleteNonce], events[oracle.KeyCompleteBlockTime]
	n := min(len(ids), len(nonces), len(times))
	if len(ids) != n || len(nonces) != n || len(times) != n {
		errs = append(errs, fmt.Errorf("complete frame: %d request_id, %d nonce and %d block_time values; %d entries used",
			len(ids), len(nonces), len(times), n))
	}
	for i := 0; i < n; i++ {
		id, err1 := strconv.ParseUint(ids[i], 10, 64)
		nonce, err2 := strconv.ParseUint(nonces[i], 10, 64)
		bt, err3 := strconv.ParseUint(times[i], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || bt > math.MaxInt64 {
			errs = append(errs, fmt.Errorf("complete frame entry %d (request_id %q, nonce %q, block_time %q): not decimal uint64s",
				i, ids[i], nonces[i], times[i]))
			continue
		}
		entries = append(entries, oracle.CompleteEntry{RequestID: id, Nonce: nonce, BlockTime: time.Unix(int64(bt), 0).UTC()})
	}
	return entries, errs
}
