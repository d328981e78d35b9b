package core

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/wire/abciquery"
)

// errNotFound is an abci_query answered with the chain's "does not exist"
// code (18 for the oracle paths): an answer, not a failure.
var errNotFound = errors.New("not found")

// replyErr is why a Reply carries no usable result, or nil.
func replyErr(r ports.Reply) error {
	switch {
	case r.Err != nil:
		return r.Err
	case r.RPCError != nil:
		return r.RPCError
	}
	return nil
}

// abciQuery asks path with data and gives fn the response value, or an
// error: errNotFound for code 18, another error for any other failure
// (transport, JSON-RPC error, another code).
func (c *Core) abciQuery(path string, data []byte, fn func(value []byte, err error)) {
	id := c.newID()
	c.call(ports.QueryCall{ID: id, Path: path, Data: data, Timeout: rpcTimeout}, id, func(r ports.Reply) {
		fn(queryValue(path, r))
	})
}

// queryValue is the response value of the query of path that r answers,
// or its error as abciQuery gives it.
func queryValue(path string, r ports.Reply) ([]byte, error) {
	if err := replyErr(r); err != nil {
		return nil, fmt.Errorf("abci_query %s: %w", path, err)
	}
	if r.Query == nil {
		return nil, fmt.Errorf("abci_query %s: no result", path)
	}
	if qe := r.Query.Err(); qe != nil {
		if qe.Code == oracle.CodeInvalidRequest {
			return nil, errNotFound
		}
		return nil, fmt.Errorf("abci_query %s: %w", path, qe)
	}
	return r.Query.Response.Value, nil
}

// encoded runs fn with a query's request data, or fails the query at once
// when the data cannot be encoded (only a string that is not UTF-8 can do
// that, and the daemon's own address never is one).
func (c *Core) encoded(data []byte, err error, path string, fn func(value []byte, err error)) {
	if err != nil {
		fn(nil, fmt.Errorf("abci_query %s: encode: %w", path, err))
		return
	}
	c.abciQuery(path, data, fn)
}

// queryDoc asks for one request doc: doc is nil when the chain says it
// does not exist.
func (c *Core) queryDoc(r uint64, fn func(doc *oracle.RequestDoc, err error)) {
	data, err := abciquery.DocRequest(r)
	c.encoded(data, err, abciquery.PathDoc, func(v []byte, err error) {
		switch {
		case errors.Is(err, errNotFound):
			fn(nil, nil)
		case err != nil:
			fn(nil, err)
		default:
			doc, err := abciquery.DecodeDocResponse(v)
			if err != nil {
				fn(nil, err)
				return
			}
			fn(&doc, nil)
		}
	})
}

// queryDocs lists the ENABLED request docs (D27).
func (c *Core) queryDocs(fn func(docs []oracle.RequestDoc, err error)) {
	data, err := abciquery.DocsRequest(oracle.StatusEnabled)
	c.encoded(data, err, abciquery.PathDocs, func(v []byte, err error) {
		if err != nil {
			fn(nil, err)
			return
		}
		docs, err := abciquery.DecodeDocsResponse(v)
		fn(docs, err)
	})
}

// querySubmitted is the on-chain check of D3: whether self's submission
// for round (r, n) is on chain.
func (c *Core) querySubmitted(r, n uint64, fn func(submitted bool, err error)) {
	data, err := c.submittedRequest(r, n)
	c.encoded(data, err, abciquery.PathSubmitData, func(v []byte, err error) {
		fn(c.submittedIn(v, err))
	})
}

// submittedRequest is the on-chain check's request: every provider's
// submissions for round (r, n).
func (c *Core) submittedRequest(r, n uint64) ([]byte, error) {
	return abciquery.SubmitDataRequest(r, n, "")
}

// submittedIn reads the on-chain check's answer (queryValue's): whether
// self's submission is among the round's.
func (c *Core) submittedIn(v []byte, err error) (bool, error) {
	switch {
	case errors.Is(err, errNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	sets, err := abciquery.DecodeSubmitDataResponse(v)
	if err != nil {
		return false, err
	}
	return abciquery.HasProvider(sets, c.self), nil
}

// queryLastBlockTime is data_set.block_time of the request's latest
// aggregate; the zero time when the chain has none.
func (c *Core) queryLastBlockTime(r uint64, fn func(bt time.Time, err error)) {
	data, err := abciquery.DataRequest(r)
	c.encoded(data, err, abciquery.PathData, func(v []byte, err error) {
		switch {
		case errors.Is(err, errNotFound):
			fn(time.Time{}, nil)
		case err != nil:
			fn(time.Time{}, err)
		default:
			ds, err := abciquery.DecodeDataResponse(v)
			if err != nil {
				fn(time.Time{}, err)
				return
			}
			bt := ds.GetBlockTime()
			if bt > math.MaxInt64 {
				fn(time.Time{}, fmt.Errorf("abci_query %s: block_time %d out of range", abciquery.PathData, bt))
				return
			}
			fn(time.Unix(int64(bt), 0).UTC(), nil)
		}
	})
}

// queryAccount asks for self's account.
func (c *Core) queryAccount(fn func(acc abciquery.Account, err error)) {
	data, err := abciquery.AccountRequest(c.self)
	c.encoded(data, err, abciquery.PathAccount, func(v []byte, err error) {
		if err != nil {
			fn(abciquery.Account{}, err)
			return
		}
		acc, err := abciquery.DecodeAccountResponse(v)
		fn(acc, err)
	})
}
