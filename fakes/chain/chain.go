package chain

import (
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/cometrpc"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/keys"
	oraclev1 "github.com/wsconverge/converge/contracts/oracle/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/contracts/oracle/tx"
)

// Chain is the simulated chain. Every method is safe for concurrent use
// (one lock), but nothing runs by itself: the caller produces blocks, and
// every result depends only on the calls made and their order.
type Chain struct {
	exec execution // the delivery in progress (deliver)
	mu   sync.Mutex
	// completes is beginBlock's scratch list of the block's Completes.
	completes []history.Complete

	p           Params
	minGasPrice *big.Rat
	now         func() time.Time
	sink        func(history.Event)
	omitRoutine bool
	standIn     *keys.StandInMemo
	genesis     time.Time

	// Accounts in account-number order, and by address.
	accounts []*account
	byAddr   map[string]*account

	moderator *account
	modKey    keys.PrivKey

	// docs[i] is request i+1.
	docs []*docState

	height    int64
	blockTime time.Time // the latest block's time; Genesis at height 0

	// mempool is FIFO from mempool[0].
	mempool []*memTx
	cache   *txCache
	// setSlab is where keptSet's copies come from.
	setSlab []oraclev1.SubmitDataSet
	// ownFee is the fee the chain's own txs pay, shared by all (read only).
	ownFee      string
	ownFeeCoins []tx.Coin

	// Fee amounts parsed, and minimum fees computed, by their input.
	feeAmounts  map[string]*big.Int
	requiredFee map[uint64]*big.Int

	// Fault state.
	full       bool
	injectCode uint32
	injectLeft int
	skew       time.Duration
}

// account is one account in both states: committed (seq, balance) and
// check (checkSeq: CheckTx and the recheck advance it; a commit resets it
// to seq).
type account struct {
	address  string
	number   uint64
	pubKey   []byte // set by the first committed tx it signs
	seq      uint64
	checkSeq uint64
	balance  *big.Int
	// The key last seen signing as this account, parsed and matched with
	// the address once for the records' signature checks.
	sigKeyHex     string
	sigKey        keys.PubKey
	sigKeyOK      bool
	sigKeyChecked bool
}

// docState is one request: the committed doc, the submissions of each
// round by nonce (each sorted by provider), and the latest aggregate.
type docState struct {
	doc    *oraclev1.OracleRequestDoc
	rounds rounds
	data   *oraclev1.DataSet
}

// rounds are a request's submissions by round: the list of nonce n at
// n − 1. Nonces are dense (a submission is for the doc's nonce + 1), so a
// slice index does what a map did, whose lookups (every block asks each
// request for its next round, every OracleSubmitData query for one) had
// become 4 % of the oracle world's day as the map grew to every round.
type rounds struct{ lists [][]*oraclev1.SubmitDataSet }

// get is round n's list (nil when none).
func (r *rounds) get(n uint64) []*oraclev1.SubmitDataSet {
	if n == 0 || n > uint64(len(r.lists)) {
		return nil
	}
	return r.lists[n-1]
}

// set makes subs round n's list (nil: none). n is at most one above
// the highest nonce set so far, which a submission's is.
func (r *rounds) set(n uint64, subs []*oraclev1.SubmitDataSet) {
	for uint64(len(r.lists)) < n {
		r.lists = append(r.lists, nil)
	}
	r.lists[n-1] = subs
}

// keptSet is a decoded tx's data set as the chain keeps it in its
// rounds. The set the decoder gave lies in the decoding of the whole tx
// (its strings are substrings of one copy of the tx, the set a field of
// the decoder's parts, which hold the tx's bytes): kept as it is, it would
// keep the whole tx, about 2 KB, for KeepRounds rounds, and a day of the
// oracle world's rounds held a few hundred megabytes live that way. The
// copy is one string for its text (the provider shared with its account
// when it names one) and a set from a slab. A set with unknown fields is
// kept as it is, so that a query encodes them as before.
func (c *Chain) keptSet(ds *oraclev1.SubmitDataSet) *oraclev1.SubmitDataSet {
	if len(ds.ProtoReflect().GetUnknown()) > 0 {
		return ds
	}
	if len(c.setSlab) == cap(c.setSlab) {
		c.setSlab = make([]oraclev1.SubmitDataSet, 0, setSlabLen)
	}
	c.setSlab = c.setSlab[:len(c.setSlab)+1]
	k := &c.setSlab[len(c.setSlab)-1]
	raw, sig, provider := ds.GetRawData(), ds.GetSignature(), ds.GetProvider()
	k.RequestId, k.Nonce = ds.GetRequestId(), ds.GetNonce()
	text := raw + sig
	if a := c.byAddr[provider]; a != nil {
		k.Provider = a.address
	} else {
		text += provider
		k.Provider = text[len(raw)+len(sig):]
	}
	k.RawData, k.Signature = text[:len(raw)], text[len(raw):len(raw)+len(sig)]
	return k
}

// setSlabLen is how many kept data sets one slab holds. The sets of a
// slab were kept at about the same time, so they are dropped at about
// the same time too (KeepRounds rounds later).
const setSlabLen = 256

// drop forgets round n.
func (r *rounds) drop(n uint64) {
	if n > 0 && n <= uint64(len(r.lists)) {
		r.lists[n-1] = nil
	}
}

// New builds a chain at height 0 from cfg.
func New(cfg Config) (*Chain, error) {
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	price, err := oracle.ParseGasPrice(cfg.Params.MinGasPrice)
	if err != nil {
		return nil, fmt.Errorf("chain params: min gas price: %w", err)
	}
	c := &Chain{
		p:           cfg.Params,
		minGasPrice: price,
		now:         cfg.Now,
		sink:        cfg.Sink,
		omitRoutine: cfg.OmitRoutine,
		standIn:     cfg.StandIn,
		genesis:     cfg.Genesis.UTC(),
		blockTime:   cfg.Genesis.UTC(),
		byAddr:      map[string]*account{},
		cache:       newTxCache(cfg.Params.CacheSize),
		feeAmounts:  map[string]*big.Int{},
		requiredFee: map[uint64]*big.Int{},
	}
	if c.now == nil {
		c.now = func() time.Time { return c.genesis }
	}
	if !cfg.Moderator.IsZero() {
		c.modKey = cfg.Moderator
		c.moderator, err = c.addAccount(cfg.Moderator.PubKey().Address(), nil)
		if err != nil {
			return nil, err
		}
	}
	for _, f := range cfg.Accounts {
		if _, err := c.addAccount(f.Address, f.Balance); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// addAccount creates a funded account with the next account number.
func (c *Chain) addAccount(address string, balance *big.Int) (*account, error) {
	if err := keys.ValidateAddress(address); err != nil {
		return nil, fmt.Errorf("chain account: %w", err)
	}
	if _, ok := c.byAddr[address]; ok {
		return nil, fmt.Errorf("chain account %s: already exists", address)
	}
	if balance == nil {
		balance = DefaultBalance()
	}
	a := &account{address: address, number: uint64(len(c.accounts)), balance: new(big.Int).Set(balance)}
	c.accounts = append(c.accounts, a)
	c.byAddr[address] = a
	return a, nil
}

// record sends an event to the sink, stamped with at.
func (c *Chain) record(at time.Time, e history.Event) {
	if c.sink == nil {
		return
	}
	e.At = at
	c.sink(e)
}

// Params are the chain's parameters.
func (c *Chain) Params() Params { return c.p }

// Height is the latest block's height (0 before the first block).
func (c *Chain) Height() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.height
}

// BlockTime is the latest block's time (Genesis before the first block).
func (c *Chain) BlockTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blockTime
}

// Status is the `status` result (ORACLE-SPEC 6.3).
func (c *Chain) Status() cometrpc.ResultStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cometrpc.NewStatus(c.p.ChainID, c.height, c.blockTime, c.genesis)
}

// Doc is a copy of request r's committed doc; ok is false if there is none.
func (c *Chain) Doc(r uint64) (doc *oraclev1.OracleRequestDoc, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docState(r)
	if d == nil {
		return nil, false
	}
	return proto.Clone(d.doc).(*oraclev1.OracleRequestDoc), true
}

// ReadDoc runs read on the committed doc of request r, without copying
// it, and says whether there is one. read must neither keep nor change the
// doc, nor call the chain: it runs under the chain's lock. A simulator
// that looks at a doc on every round uses it instead of Doc's copy.
func (c *Chain) ReadDoc(r uint64, read func(doc *oraclev1.OracleRequestDoc)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docState(r)
	if d == nil {
		return false
	}
	read(d.doc)
	return true
}

// Docs are copies of every committed doc, by ascending request id.
func (c *Chain) Docs() []*oraclev1.OracleRequestDoc {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*oraclev1.OracleRequestDoc, len(c.docs))
	for i, d := range c.docs {
		out[i] = proto.Clone(d.doc).(*oraclev1.OracleRequestDoc)
	}
	return out
}

// Nonce is C(r): request r's completed nonce (0 for an unknown request).
func (c *Chain) Nonce(r uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.docState(r); d != nil {
		return d.doc.GetNonce()
	}
	return 0
}

// Submitted reports whether provider's submission for round (r, n) is
// committed.
func (c *Chain) Submitted(r, n uint64, provider string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docState(r)
	if d == nil {
		return false
	}
	_, found := findProvider(d.rounds.get(n), provider)
	return found
}

// AccountState is an account as both states see it.
type AccountState struct {
	Address       string
	AccountNumber uint64
	Sequence      uint64 // committed
	CheckSequence uint64 // the next sequence CheckTx accepts
	Balance       *big.Int
	PubKey        []byte
}

// Account is an account's state; ok is false for an unknown address.
func (c *Chain) Account(address string) (AccountState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.byAddr[address]
	if a == nil {
		return AccountState{}, false
	}
	return AccountState{Address: a.address, AccountNumber: a.number, Sequence: a.seq, CheckSequence: a.checkSeq,
		Balance: new(big.Int).Set(a.balance), PubKey: slices.Clone(a.pubKey)}, true
}

// Pending is a tx in the mempool.
type Pending struct {
	Hash     string
	Origin   history.Origin
	Signer   string
	Sequence uint64
}

// Mempool lists the mempool's txs in FIFO order.
func (c *Chain) Mempool() []Pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Pending, len(c.mempool))
	for i, m := range c.mempool {
		out[i] = Pending{Hash: m.txHash(), Origin: m.origin, Signer: m.signer.address, Sequence: m.seq}
	}
	return out
}

func (c *Chain) docState(r uint64) *docState {
	if r == 0 || r > uint64(len(c.docs)) {
		return nil
	}
	return c.docs[r-1]
}

// setPubKey records an account's key the first time it signs a committed tx.
func (a *account) setPubKey(pk []byte) {
	if a.pubKey == nil && pk != nil {
		a.pubKey = slices.Clone(pk)
	}
}
