package chain

import (
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// Chain is the simulated chain. Every method is safe for concurrent use
// (one lock), but nothing runs by itself: the caller produces blocks, and
// every result depends only on the calls made and their order.
type Chain struct {
	exec execution // the delivery in progress (deliver)
	mu   sync.Mutex
	// due and text are beginBlock's scratch: the requests whose round
	// completes, and the block's text before it is one string.
	due  []*docState
	text []byte
	// touched are the requests written since the last BeginBlock (touch).
	touched []*docState
	// docsOf is ProduceBlock's scratch: the docs each included tx wrote.
	docsOf [][]history.Doc
	// spare are forgotten rounds' lists, for new rounds.
	spare spareLists
	// spareFrames and sparePtrs are a recycled block's frames, spareOwn
	// and spareSUT the memory of recycled peer and SUT txs (Recycle).
	spareFrames []Frame
	sparePtrs   []*Frame
	spareOwn    []*ownMem
	spareSUT    []*sutMem

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
	// answerMsgs and answerPtrs are an OracleSubmitData answer's sets
	// (answerSets).
	answerMsgs []oraclev1.SubmitDataSet
	answerPtrs []*oraclev1.SubmitDataSet
	// ownFee is the fee the chain's own txs pay, shared by all (read only).
	ownFee      string
	ownFeeCoins []tx.Coin
	ownEnv      *tx.Envelope // the envelope they share (read only)

	// Fee amounts parsed, and minimum fees computed, by their input.
	feeAmounts  map[string]*big.Int
	requiredFee map[uint64]*big.Int

	// Fault state.
	full       bool
	injectCode uint32
	injectLeft int
	skew       time.Duration
	// waived counts the checks Params.AdmitUnverified let pass in
	// admitted txs.
	waived map[Waiver]int
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
	// The last peer submission signature made for this request, and what
	// it signs (submissionSignature).
	sigNonce uint64
	sigValue string
	sig      string
	// touched: in Chain.touched.
	touched bool
}

// rounds are a request's submissions by round, each round's list sorted
// by provider. Nonces are dense (a submission is for the doc's nonce + 1),
// so a slice index does what a map did, whose lookups (every block asks
// each request for its next round, every OracleSubmitData query for one)
// had become 4 % of the oracle world's day as the map grew to every round.
// lists[i] is round base + i + 1: rounds 1 … base were forgotten
// (KeepRounds), and their place in the slice went with them.
type rounds struct {
	base  uint64
	lists [][]kept
}

// kept is one provider's submission as a round keeps it. The round gives
// its request id and nonce, so only the three strings stay; a set with
// unknown fields stays whole (set), so that a query encodes them as
// before. A day of 100 requests keeps some 300,000 submissions for
// KeepRounds rounds: kept as the decoded or built messages they came in,
// they were most of the oracle world's live heap (about 100 MB), and the
// collector marked them again in every cycle.
type kept struct {
	provider, raw, sig string
	set                *oraclev1.SubmitDataSet
}

// get is round n's list (nil when none or forgotten).
func (r *rounds) get(n uint64) []kept {
	if n <= r.base || n-r.base > uint64(len(r.lists)) {
		return nil
	}
	return r.lists[n-r.base-1]
}

// set makes subs round n's list (nil: none). n is above every forgotten
// round and at most one above the highest nonce set so far, which a
// submission's is (the doc's nonce + 1).
func (r *rounds) set(n uint64, subs []kept) {
	if n <= r.base {
		panic(fmt.Sprintf("chain: round %d set after rounds 1–%d were forgotten", n, r.base))
	}
	for uint64(len(r.lists)) < n-r.base {
		r.lists = append(r.lists, nil)
	}
	r.lists[n-r.base-1] = subs
}

// drop empties round n (an undone first submission of it); the round can
// be set again.
func (r *rounds) drop(n uint64) {
	if n > r.base && n-r.base <= uint64(len(r.lists)) {
		r.lists[n-r.base-1] = nil
	}
}

// forget drops rounds 1 … n for good: they completed KeepRounds rounds
// ago, and no submission can be for them any more.
func (r *rounds) forget(n uint64) { r.forgetTo(n, nil) }

// forgetTo is forget, the lists going to spare (if not nil) for a later
// round to reuse.
func (r *rounds) forgetTo(n uint64, spare *spareLists) {
	for r.base < n && len(r.lists) > 0 {
		spare.put(r.lists[0])
		r.lists[0] = nil
		r.lists = r.lists[1:]
		r.base++
	}
}

// spareLists are forgotten rounds' lists, by capacity (1 …
// completeMemLists), for new rounds to reuse: a round's list was an
// allocation on every round. Nothing refers to a forgotten round's list
// (queries and aggregation copy what they read of a list, and only the
// round's request held it), so its memory can be the next round's.
type spareLists [completeMemLists + 1][][]kept

// put keeps list (emptied) for reuse.
func (s *spareLists) put(list []kept) {
	if c := cap(list); s != nil && c > 0 && c <= completeMemLists {
		clear(list[:c])
		s[c] = append(s[c], list[:0])
	}
}

// get is an empty list with room for n, a spare one if there is one.
func (s *spareLists) get(n int) []kept {
	for c := max(n, 1); c <= completeMemLists; c++ {
		if k := len(s[c]); k > 0 {
			list := s[c][k-1]
			s[c][k-1] = nil
			s[c] = s[c][:k-1]
			return list
		}
	}
	return make([]kept, 0, n)
}

// keep is a data set as a round keeps it. A set the decoder gave lies in
// the decoding of the whole tx (its strings are substrings of one copy of
// the tx, which holds the tx's bytes, about 2 KB), so its text is copied
// out into one string (the provider shared with its account when it names
// one); a set the chain built (a peer's) is kept by its strings.
func (c *Chain) keep(ds *oraclev1.SubmitDataSet, decoded bool) kept {
	if len(ds.ProtoReflect().GetUnknown()) > 0 {
		return kept{provider: ds.GetProvider(), raw: ds.GetRawData(), sig: ds.GetSignature(), set: ds}
	}
	raw, sig, provider := ds.GetRawData(), ds.GetSignature(), ds.GetProvider()
	if !decoded {
		return kept{provider: provider, raw: raw, sig: sig}
	}
	k := kept{}
	text := raw + sig
	if a := c.byAddr[provider]; a != nil {
		k.provider = a.address
	} else {
		text += provider
		k.provider = text[len(raw)+len(sig):]
	}
	k.raw, k.sig = text[:len(raw)], text[len(raw):len(raw)+len(sig)]
	return k
}

// answerSets are round r's kept submissions as the messages a query
// answer encodes, in the chain's scratch (valid until the next call).
func (c *Chain) answerSets(r, n uint64, subs []kept) []*oraclev1.SubmitDataSet {
	if cap(c.answerMsgs) < len(subs) {
		c.answerMsgs = make([]oraclev1.SubmitDataSet, len(subs))
		c.answerPtrs = make([]*oraclev1.SubmitDataSet, len(subs))
	}
	out := c.answerPtrs[:len(subs)]
	for i, k := range subs {
		if k.set != nil {
			out[i] = k.set
			continue
		}
		m := &c.answerMsgs[i]
		m.RequestId, m.Nonce, m.RawData, m.Provider, m.Signature = r, n, k.raw, k.provider, k.sig
		out[i] = m
	}
	return out
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
