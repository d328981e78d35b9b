package oracledtest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	authv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// Chain is a small scripted chain: request docs, submissions, aggregates
// and accounts that a test sets directly, abci_query answers for the five
// paths on that state, and a CheckTx with the sequence rule and scripted
// answers. There are no blocks, quorums or events: a test decides what the
// chain says and when. It is safe for concurrent use.
type Chain struct {
	mu       sync.Mutex
	chainID  string
	height   int64
	time     time.Time
	docs     map[uint64]oracle.RequestDoc
	subs     map[round]map[string]string // provider → raw data
	data     map[uint64]*oraclev1.DataSet
	accounts map[string]*account

	answers    []Answer       // scripted CheckTx answers, first first
	failures   map[string]int // path → queries still to fail
	broadcasts []*tx.Tx
	mempool    []*tx.Tx
	queries    []string
}

type round struct{ r, n uint64 }

type account struct {
	number, committed, check uint64
}

// Answer is a scripted answer to one broadcast_tx_sync: a CheckTx code
// (the tx is not admitted unless the code is 0 or 19), or a JSON-RPC
// error text (mempool full, tx in cache). The zero Answer is "run
// CheckTx normally".
type Answer struct {
	Code     uint32
	RPCError string
}

// NewChain is an empty chain at height 1.
func NewChain(chainID string, t time.Time) *Chain {
	return &Chain{
		chainID: chainID, height: 1, time: t,
		docs: map[uint64]oracle.RequestDoc{}, subs: map[round]map[string]string{},
		data: map[uint64]*oraclev1.DataSet{}, accounts: map[string]*account{},
		failures: map[string]int{},
	}
}

// SetDoc stores (or replaces) a request doc.
func (c *Chain) SetDoc(d oracle.RequestDoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d.AccountList = slices.Clone(d.AccountList)
	d.Endpoints = slices.Clone(d.Endpoints)
	c.docs[d.RequestID] = d
}

// DeleteDoc forgets a doc (the chain then answers "not found").
func (c *Chain) DeleteDoc(r uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.docs, r)
}

// AddAccount creates an account with its committed (and check) sequence.
func (c *Chain) AddAccount(address string, number, sequence uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accounts[address] = &account{number: number, committed: sequence, check: sequence}
}

// SetSequence moves an account's committed and check sequences (another
// process using the same key, an eviction).
func (c *Chain) SetSequence(address string, sequence uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.accounts[address]; a != nil {
		a.committed, a.check = sequence, sequence
	}
}

// SetSubmitted records provider's submission for round (r, n) on chain.
func (c *Chain) SetSubmitted(r, n uint64, provider, raw string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setSubmitted(r, n, provider, raw)
}

func (c *Chain) setSubmitted(r, n uint64, provider, raw string) {
	k := round{r, n}
	if c.subs[k] == nil {
		c.subs[k] = map[string]string{}
	}
	c.subs[k][provider] = raw
}

// Complete completes round n of request r at block time bt: the doc's
// nonce becomes n and the latest aggregate has that block time.
func (c *Chain) Complete(r, n uint64, bt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.docs[r]; ok {
		d.Nonce = n
		c.docs[r] = d
	}
	c.height++
	c.data[r] = &oraclev1.DataSet{RequestId: r, Nonce: n, BlockHeight: uint64(c.height), BlockTime: uint64(bt.Unix()), RawData: "1"}
}

// Script queues answers for the next broadcasts.
func (c *Chain) Script(answers ...Answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers = append(c.answers, answers...)
}

// FailQueries makes the next n queries of path fail (code 1, "internal").
func (c *Chain) FailQueries(path string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures[path] += n
}

// ClearFailures stops failing the queries of path.
func (c *Chain) ClearFailures(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.failures, path)
}

// Commit puts every admitted tx in a block: its submissions are stored
// and the committed sequences catch up with the check sequences.
func (c *Chain) Commit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.mempool {
		for _, m := range t.Submissions() {
			ds := m.GetDataSet()
			c.setSubmitted(ds.GetRequestId(), ds.GetNonce(), ds.GetProvider(), ds.GetRawData())
		}
	}
	c.mempool = nil
	for _, a := range c.accounts {
		a.committed = a.check
	}
	c.height++
}

// Broadcasts returns every decoded broadcast so far.
func (c *Chain) Broadcasts() []*tx.Tx {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.broadcasts)
}

// Queries returns the path of every query so far.
func (c *Chain) Queries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.queries)
}

// Status is the `status` result.
func (c *Chain) Status() cometrpc.ResultStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cometrpc.NewStatus(c.chainID, c.height, c.time, c.time)
}

// Query answers an abci_query on committed state.
func (c *Chain) Query(path string, data []byte) cometrpc.ResultABCIQuery {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries = append(c.queries, path)
	if c.failures[path] > 0 {
		c.failures[path]--
		return cometrpc.QueryFailed(&oracle.CodeError{Code: 1, Reason: "scripted failure"}, c.height)
	}
	value, err := c.answer(path, data)
	if err != nil {
		ce, ok := err.(*oracle.CodeError)
		if !ok {
			ce = &oracle.CodeError{Code: 1, Reason: err.Error()}
		}
		return cometrpc.QueryFailed(ce, c.height)
	}
	return cometrpc.QueryOK(value, c.height)
}

func (c *Chain) answer(path string, data []byte) ([]byte, error) {
	req, err := abciquery.DecodeRequest(path, data)
	if err != nil {
		return nil, err
	}
	switch q := req.(type) {
	case *authv1beta1.QueryAccountRequest:
		a := c.accounts[q.GetAddress()]
		if a == nil {
			return nil, abciquery.AccountNotFound(q.GetAddress())
		}
		return abciquery.AccountResponse(abciquery.Account{Address: q.GetAddress(), AccountNumber: a.number, Sequence: a.committed})
	case *oraclev1.QueryOracleRequestDocsRequest:
		var docs []*oraclev1.OracleRequestDoc
		for _, r := range sortedKeys(c.docs) {
			if d := c.docs[r]; q.GetStatus() == 0 || oracle.RequestStatus(q.GetStatus()) == d.Status {
				docs = append(docs, DocToProto(d))
			}
		}
		return abciquery.DocsResponse(docs)
	case *oraclev1.QueryOracleRequestDocRequest:
		d, ok := c.docs[q.GetRequestId()]
		if !ok {
			return nil, abciquery.DocNotFound(q.GetRequestId())
		}
		return abciquery.DocResponse(DocToProto(d))
	case *oraclev1.QueryOracleSubmitDataRequest:
		var sets []*oraclev1.SubmitDataSet
		subs := c.subs[round{q.GetRequestId(), q.GetNonce()}]
		for _, p := range sortedKeys(subs) {
			if q.GetProvider() == "" || q.GetProvider() == p {
				sets = append(sets, &oraclev1.SubmitDataSet{RequestId: q.GetRequestId(), Nonce: q.GetNonce(), RawData: subs[p], Provider: p})
			}
		}
		if q.GetProvider() != "" && len(sets) == 0 {
			return nil, abciquery.SubmitDataNotFound(q.GetRequestId(), q.GetNonce(), q.GetProvider())
		}
		return abciquery.SubmitDataResponse(sets)
	case *oraclev1.QueryOracleDataRequest:
		ds := c.data[q.GetRequestId()]
		if ds == nil {
			return nil, abciquery.DataNotFound(q.GetRequestId())
		}
		return abciquery.DataResponse(proto.CloneOf(ds))
	}
	return nil, fmt.Errorf("unexpected request %T", req)
}

// Broadcast is broadcast_tx_sync: a scripted answer if one is queued,
// otherwise decoding and the sequence check of CheckTx (code 32 on a
// mismatch); an admitted tx joins the mempool and its signer's check
// sequence moves on.
func (c *Chain) Broadcast(txBytes []byte) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hash, _ := cometrpc.HexBytesFromString(tx.Hash(txBytes))
	t, err := tx.Decode(txBytes)
	if err != nil {
		return cometrpc.BroadcastRejected(hash, oracle.Errorf(oracle.CodeTxDecode, "%v", err)), nil
	}
	c.broadcasts = append(c.broadcasts, t)
	if len(c.answers) > 0 {
		a := c.answers[0]
		c.answers = c.answers[1:]
		if a.RPCError != "" {
			return cometrpc.ResultBroadcastTx{}, cometrpc.ErrInternal(a.RPCError)
		}
		if a.Code != 0 {
			if a.Code == oracle.CodeTxInMempoolCache {
				return cometrpc.BroadcastRejected(hash, oracle.Errorf(a.Code, "")), nil
			}
			return cometrpc.BroadcastRejected(hash, oracle.Errorf(a.Code, "scripted")), nil
		}
	}
	acc := c.accounts[t.Signer()]
	if acc == nil {
		return cometrpc.BroadcastRejected(hash, oracle.Errorf(oracle.CodeInsufficientFunds, "no account")), nil
	}
	seq, _ := t.Sequence()
	if seq != acc.check {
		return cometrpc.BroadcastRejected(hash, &oracle.CodeError{Code: oracle.CodeWrongSequence,
			Reason: fmt.Sprintf("account sequence mismatch, expected %d, got %d", acc.check, seq)}), nil
	}
	acc.check++
	c.mempool = append(c.mempool, t)
	return cometrpc.BroadcastAdmitted(hash), nil
}

// DocToProto is the chain's form of a doc, with the fields the daemon
// ignores set to valid values.
func DocToProto(d oracle.RequestDoc) *oraclev1.OracleRequestDoc {
	p := &oraclev1.OracleRequestDoc{
		RequestId:       d.RequestID,
		OracleType:      oraclev1.OracleType_ORACLE_TYPE_CRYPTO,
		Name:            fmt.Sprintf("req-%d", d.RequestID),
		Period:          d.Period,
		AccountList:     slices.Clone(d.AccountList),
		Quorum:          d.Quorum,
		AggregationRule: oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN,
		Status:          oraclev1.RequestStatus(d.Status),
		Nonce:           d.Nonce,
	}
	for _, e := range d.Endpoints {
		p.Endpoints = append(p.Endpoints, &oraclev1.OracleEndpoint{Url: e.URL, ParseRule: e.ParseRule})
	}
	return p
}

func sortedKeys[K uint64 | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
