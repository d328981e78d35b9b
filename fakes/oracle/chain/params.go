package chain

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/keys"
)

// Params are the chain's parameters (ORACLE-SPEC 4.1).
type Params struct {
	ChainID string
	Denom   string
	// BlockInterval is how often the caller produces a block; the chain
	// only reports it (the caller owns the clock).
	BlockInterval time.Duration
	// MinGasPrice is the minimum gas price in Denom per unit of gas, a plain
	// decimal; CheckTx wants a fee ≥ ceil(MinGasPrice × gas_limit).
	MinGasPrice string
	// GasRequired is the gas every tx needs; a lower gas_limit is code 11.
	GasRequired uint64
	// MempoolSize caps the txs in the mempool; MaxTxsBytes their bytes (it
	// only appears in the "mempool is full" text).
	MempoolSize int
	MaxTxsBytes int64
	// CacheSize is the capacity of the LRU cache of admitted tx hashes.
	CacheSize int
	// MaxBlockTxs caps the txs a block includes.
	MaxBlockTxs int
	// EnableOracle turns BeginBlock aggregation on.
	EnableOracle bool
	// KeepRounds is how many completed rounds of a request keep their
	// submissions: when round n completes, the submissions of round
	// n − KeepRounds go (a query for it then answers as for a round nobody
	// submitted to). 0 keeps every round. A day of 100 requests is two
	// million submissions; daemons only ask about the open round.
	KeepRounds uint64
	// VerifySignatures is D26's verifying mode: CheckTx also checks the
	// eth_secp256k1 signature (off by default), and the chain's own
	// moderator, peers and intruder sign for real.
	VerifySignatures bool
	// AdmitUnverified is a diagnostic knob, never a chain a daemon is
	// judged against: the SUT's txs that fail only row 4's message checks
	// (codes 7 and 18), its one-signer-one-signature check (code 4) or, in
	// verifying mode, the signature check are admitted all the same, so
	// that what a daemon does after admission can be seen. Each waived
	// check of an admitted tx is counted (Chain.Waived). Rows 1–3 and 5–8
	// (mempool, cache, decode, fee, gas, funds, sequence) still hold.
	AdmitUnverified bool
}

// DefaultParams are the defaults of ORACLE-SPEC 4.1.
func DefaultParams() Params {
	return Params{
		ChainID:       oracle.DefaultChainID,
		Denom:         oracle.Denom,
		BlockInterval: time.Second,
		MinGasPrice:   oracle.DefaultGasPrices,
		GasRequired:   50000,
		MempoolSize:   5000,
		MaxTxsBytes:   1 << 30,
		CacheSize:     10000,
		MaxBlockTxs:   1000,
		EnableOracle:  true,
		KeepRounds:    1000,
	}
}

// Validate reports the first parameter that cannot work.
func (p Params) Validate() error {
	switch {
	case p.ChainID == "":
		return errors.New("chain params: empty chain id")
	case p.Denom == "":
		return errors.New("chain params: empty denom")
	case p.BlockInterval <= 0:
		return fmt.Errorf("chain params: block interval %s must be positive", p.BlockInterval)
	case p.MempoolSize <= 0 || p.CacheSize <= 0 || p.MaxBlockTxs <= 0 || p.MaxTxsBytes <= 0:
		return fmt.Errorf("chain params: mempool size %d, max txs bytes %d, cache size %d and max block txs %d must be positive",
			p.MempoolSize, p.MaxTxsBytes, p.CacheSize, p.MaxBlockTxs)
	}
	if _, err := oracle.ParseGasPrice(p.MinGasPrice); err != nil {
		return fmt.Errorf("chain params: min gas price: %w", err)
	}
	return nil
}

// Funding is an account that exists from genesis with a balance in Denom.
type Funding struct {
	Address string
	Balance *big.Int // nil: DefaultBalance
}

// DefaultBalance funds an account for far more fees than any run pays
// (10^30 agxn; a default fee is 4.41 × 10^16).
func DefaultBalance() *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
}

// Config builds a chain.
type Config struct {
	Params Params
	// Genesis is the genesis time: the status's earliest block time and
	// the time of height 0.
	Genesis time.Time
	// Now is the caller's clock (virtual in the simulator, the wall clock
	// behind the façade); records are stamped with it. Nil: every record
	// carries Genesis.
	Now func() time.Time
	// Sink receives every record the chain makes, in order, under the
	// chain's lock (it must not call the chain). Nil: records are dropped.
	Sink func(history.Event)
	// OmitRoutine: the peers' routine (history.Routine: a prompt or late
	// submission, its admission, its successful delivery) is neither built
	// nor sent to the sink. A long simulation saves most of its recording
	// work; its fingerprint then covers the peers through the blocks'
	// Completes (providers and values) and their misbehaviours only.
	OmitRoutine bool
	// Moderator signs the operator workload; it is account number 0 and
	// funded. The zero key disables the workload methods.
	Moderator keys.PrivKey
	// Accounts exist from genesis, numbered 1, 2, … in order (the SUT's
	// among them).
	Accounts []Funding
	// StandIn (optional) is the memo of the SUT's stand-in signer when it
	// runs in the caller's process (keys.StandInMemo): the check of a SUT
	// tx's signature finds the signature just made there instead of
	// hashing its sign doc again. The check is the same.
	StandIn *keys.StandInMemo
}
