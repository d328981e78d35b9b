package chain

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/internal/streams"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/tx"
)

// load is a realistic day for the chain: requests with periods of 1–60 s,
// each with the SUT and three peers (quorum 3 of 4), a SUT that answers
// every Complete one period after its block time with the on-chain check
// and a broadcast (and the status and Account polls of a daemon), and
// healthy peers. Everything runs on whole seconds; one block per second.
type load struct {
	c       *Chain
	rec     *history.Recorder
	now     time.Time
	peers   []*Peer
	members map[uint64][]int // request → its peers
	period  map[uint64]time.Duration
	due     [128][]action // by second mod 128: submissions to make then
	sutSeq  uint64
	signer  keys.Signer
	fee     string
	seed    uint64
	sutTxs  int
	peerTxs int
}

type action struct {
	r    uint64
	peer int // -1: the SUT
}

func newLoad(tb testing.TB, requests int, omitRoutine bool) *load {
	tb.Helper()
	l := &load{now: genesis, rec: history.NewLeanRecorder(), members: map[uint64][]int{},
		period: map[uint64]time.Duration{}, signer: keys.StandInSigner{Key: sutKey}, seed: 1}
	c, err := New(Config{Params: DefaultParams(), Genesis: genesis, Now: func() time.Time { return l.now },
		Sink: func(e history.Event) { l.rec.Add(e) }, OmitRoutine: omitRoutine, Moderator: modKey,
		Accounts: []Funding{{Address: sutAddr}}})
	require.NoError(tb, err)
	l.c = c
	l.fee, err = oracle.FeeAmount(oracle.DefaultGasPrices, oracle.DefaultGasLimit)
	require.NoError(tb, err)
	for i := 0; i < 12; i++ {
		p, err := c.AddPeer(keys.PrivKeyFromSeed("bench-peer-"+strconv.Itoa(i)), nil)
		require.NoError(tb, err)
		l.peers = append(l.peers, p)
	}
	for r := uint64(1); r <= uint64(requests); r++ {
		idx := []int{int(r) % 12, int(r+4) % 12, int(r+8) % 12}
		doc := newDoc(3, sutAddr, l.peers[idx[0]].Address, l.peers[idx[1]].Address, l.peers[idx[2]].Address)
		doc.Period = uint32(1 + streams.SubSeed(l.seed, r)%60)
		doc.Endpoints[0].Url = fmt.Sprintf("http://127.0.0.1:9/r/%d/e/0", r)
		adm, err := c.Register(doc)
		require.NoError(tb, err)
		require.True(tb, adm.Admitted())
		l.members[r], l.period[r] = idx, time.Duration(doc.Period)*time.Second
	}
	l.step(tb)
	// Round 1 of every request opens now.
	for r := uint64(1); r <= uint64(requests); r++ {
		l.open(r, l.now)
	}
	return l
}

// open schedules round C+1 of r: the SUT and the peers submit at
// opensAt (peers up to a second later).
func (l *load) open(r uint64, opensAt time.Time) {
	n := l.c.Nonce(r) + 1
	sec := opensAt.Unix()
	l.due[sec%128] = append(l.due[sec%128], action{r: r, peer: -1})
	for _, p := range l.members[r] {
		plan := HealthyPeers().Plan(l.seed, p, r, n)
		s := opensAt.Add(plan.Delay).Unix()
		if s <= l.now.Unix() {
			s = l.now.Unix() + 1
		}
		l.due[s%128] = append(l.due[s%128], action{r: r, peer: p})
	}
}

// step runs one second: the submissions due, then a block, then the next
// rounds of the requests it completed.
func (l *load) step(tb testing.TB) {
	l.now = l.now.Add(time.Second)
	sec := l.now.Unix()
	acts := l.due[sec%128]
	l.due[sec%128] = nil
	for _, a := range acts {
		if a.peer >= 0 {
			if _, err := l.c.PeerSubmit(l.peers[a.peer], a.r, history.PeerPrompt, "12345.678901"); err != nil {
				tb.Fatal(err)
			}
			l.peerTxs++
			continue
		}
		l.sutSubmit(tb, a.r)
	}
	if sec%30 == 0 {
		l.c.Status()
	}
	if sec%300 == 0 {
		data, _ := abciquery.AccountRequest(sutAddr)
		l.c.ABCIQuery(abciquery.PathAccount, data)
	}
	b := l.c.ProduceBlock(l.now)
	for _, cp := range b.Completes {
		l.open(cp.RequestID, time.Unix(cp.BlockTime, 0).Add(l.period[cp.RequestID]))
	}
}

// sutSubmit is a daemon's submission: the on-chain check, then the tx.
func (l *load) sutSubmit(tb testing.TB, r uint64) {
	n := l.c.Nonce(r) + 1
	data, err := abciquery.SubmitDataRequest(r, n, "")
	if err != nil {
		tb.Fatal(err)
	}
	if q := l.c.ABCIQuery(abciquery.PathSubmitData, data); q.Response.Code != 0 {
		tb.Fatalf("on-chain check: %s", q.Response.Log)
	}
	b, err := tx.Build(l.signer, tx.Envelope{ChainID: oracle.DefaultChainID, AccountNumber: 1, Sequence: l.sutSeq,
		GasLimit: oracle.DefaultGasLimit, FeeAmount: l.fee}, tx.SubmissionMsg(sutAddr, r, n, "12345.678903"))
	if err != nil {
		tb.Fatal(err)
	}
	res, rpcErr := l.c.BroadcastTxSync(b.TxBytes)
	if rpcErr != nil || res.Code != 0 {
		tb.Fatalf("SUT broadcast: %v %s", rpcErr, res.Log)
	}
	l.sutSeq++
	l.sutTxs++
}

// The load keeps every round completing: the chain, the SUT stand-in and
// the peers agree.
func TestLoadCompletesEveryRound(t *testing.T) {
	l := newLoad(t, 20, false)
	for i := 0; i < 600; i++ {
		l.step(t)
	}
	for r := uint64(1); r <= 20; r++ {
		p := l.period[r]
		want := int64(600*time.Second/(p+time.Second)) - 1 // a round takes at least a period and a block
		require.GreaterOrEqual(t, int64(l.c.Nonce(r)), want, "request %d (period %s)", r, p)
	}
	require.Positive(t, l.rec.Folded(), "the lean recorder folds the peers' routine success")
}

// BenchmarkChainDay measures blocks per wall second under the load of 100
// requests × (SUT + 3 peers), including the lean recorder's hashing; one
// op is one simulated second (one block). -benchtime 86400x runs a whole
// simulated day. sim-x is simulated seconds per wall second, sim-x/cpu
// per CPU second of the process (GC included).
func BenchmarkChainDay(b *testing.B) {
	for _, omit := range []bool{false, true} {
		b.Run(fmt.Sprintf("omit-routine=%v", omit), func(b *testing.B) { benchDay(b, omit) })
	}
}

func benchDay(b *testing.B, omitRoutine bool) {
	l := newLoad(b, 100, omitRoutine)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		l.step(b)
	}
	elapsed, cpu := time.Since(start), cpuTime()-cpu
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "sim-x")
	if cpu > 0 {
		// On a machine shared with other work the CPU time is the fairer
		// figure: simulated seconds per CPU second of this process.
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "sim-x/cpu")
	}
	b.ReportMetric(float64(l.sutTxs+l.peerTxs)/float64(b.N), "txs/block")
	b.ReportMetric(float64(l.rec.Len())/float64(b.N), "kept-records/block")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/float64(b.N), "live-B/block")
	runtime.KeepAlive(l)
}
