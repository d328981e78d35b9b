package history

import (
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// Kind classifies an event; it names the payload that is set.
type Kind string

// Event kinds (ORACLE-SPEC 4.10).
const (
	KindProc    Kind = "proc"
	KindRPC     Kind = "rpc"
	KindWS      Kind = "ws"
	KindCheckTx Kind = "checktx"
	KindBlock   Kind = "block"
	KindDeliver Kind = "deliver"
	KindEvict   Kind = "evict"
	KindOp      Kind = "op"
	KindPeer    Kind = "peer"
	KindSrc     Kind = "src"
	KindFault   Kind = "fault"
	KindWhite   Kind = "white"
)

// Event is one recorded fact. Exactly the payload named by Kind is set.
type Event struct {
	Seq  int64
	At   time.Time
	Kind Kind
	// Life is the SUT lifetime the record belongs to: 1 for the first
	// process (or in-process instance), 2 after the first restart, and so
	// on; 0 for records of the world (chain, moderator, peers, faults).
	// Producers that do not know it leave 0 and the world's sink stamps it.
	Life int

	Proc    *Proc
	RPC     *RPC
	WS      *WS
	CheckTx *CheckTx
	Block   *Block
	Deliver *Deliver
	Evict   *Evict
	Op      *Op
	Peer    *Peer
	Src     *Src
	Fault   *Fault
	White   *White
}

// Phase says which half of a two-record exchange (rpc, src) a record is.
type Phase string

const (
	// PhaseRecv: the request arrived (t_recv is the record's time).
	PhaseRecv Phase = "recv"
	// PhaseDone: the answer was delivered, lost or aborted.
	PhaseDone Phase = "done"
)

// ---- proc ----

// ProcAction is what happened to the SUT's process.
type ProcAction string

const (
	// ProcStart: a lifetime began (Detail: the command line, or "in-process").
	ProcStart ProcAction = "start"
	// ProcSignal: the harness signalled it (Signal: SIGTERM, SIGINT, SIGKILL),
	// or, in sim mode, crashed it (Signal "crash", CrashCall: from which port
	// call on every call fails).
	ProcSignal ProcAction = "signal"
	// ProcExit: the lifetime ended (Status; Signal when a signal ended it).
	ProcExit ProcAction = "exit"
	// ProcTrace: the output held a Go "panic:" or "fatal error:" trace
	// (Output: its first line).
	ProcTrace ProcAction = "trace"
)

// Proc is a proc record.
type Proc struct {
	Action    ProcAction
	Signal    string
	Status    int
	CrashCall int
	Output    string
	Detail    string
}

// ExitText says how an exit record's lifetime ended: "killed by SIGKILL"
// when a signal ended the process (its status is then -1, which says
// nothing), otherwise "exit status N".
func (p *Proc) ExitText() string {
	if p.Signal != "" && p.Status < 0 {
		return "killed by " + p.Signal
	}
	return "exit status " + strconv.Itoa(p.Status)
}

// ---- rpc ----

// RPC is one half of a JSON-RPC call the SUT made.
type RPC struct {
	// Call numbers the calls of a run; the recv and done records of one call
	// share it.
	Call int64
	// Conn is the WebSocket connection the call came on; 0 for HTTP.
	Conn   int64
	Phase  Phase
	Method string
	// ID is the request's id as its JSON text ("" for none).
	ID string
	// Query holds abci_query's params, decoded.
	Query *Query
	// Tx holds broadcast_tx_sync's tx, decoded.
	Tx *Tx
	// Done records only.
	Result     *RPCResult
	TRecv      time.Time
	TDelivered time.Time // zero when Lost
	// Lost: the response never reached the SUT (dropped by a fault,
	// connection closed, the SUT gone).
	Lost bool
}

// Query is abci_query's params with the request decoded: the fields of
// the path's request message (Address for Account; Status for
// OracleRequestDocs; RequestID for OracleRequestDoc and OracleData;
// RequestID, Nonce and Provider for OracleSubmitData).
type Query struct {
	Path      string
	Height    int64
	Prove     bool
	Address   string
	Status    int32
	RequestID uint64
	Nonce     uint64
	Provider  string
	// DecodeErr says why the data did not decode for the path ("" if it did).
	DecodeErr string
}

// RPCResult summarises a call's answer: a JSON-RPC error (ErrCode ≠ 0), or
// the method's result.
type RPCResult struct {
	ErrCode    int
	ErrMessage string
	ErrData    string
	// status: the latest block and the chain id.
	Height    int64
	BlockTime time.Time
	Network   string
	// abci_query and broadcast_tx_sync: the ABCI code, log and codespace.
	Code      uint32
	Log       string
	Codespace string
	// broadcast_tx_sync: the tx hash (upper-case hex).
	Hash string
	// abci_query: the answer's value, decoded for the path.
	Value *QueryValue
}

// QueryValue is a query answer's value decoded for its path: one of the
// fields is set (Docs may be empty: an empty list).
type QueryValue struct {
	Account     *Account
	Docs        []Doc
	Doc         *Doc
	Submissions []Submission
	DataSet     *DataSet
	// DecodeErr says why the value did not decode ("" if it did).
	DecodeErr string
}

// ---- ws ----

// WSAction is what happened on the SUT's WebSocket.
type WSAction string

const (
	WSConnect        WSAction = "connect"
	WSRefuse         WSAction = "refuse" // a connection attempt refused (F1)
	WSClose          WSAction = "close"  // By: "server" or "client"
	WSSubscribe      WSAction = "subscribe"
	WSUnsubscribe    WSAction = "unsubscribe"
	WSUnsubscribeAll WSAction = "unsubscribe_all"
	WSFrame          WSAction = "frame"
)

// WS is a ws record.
type WS struct {
	Conn   int64
	Action WSAction
	By     string
	Query  string
	ID     string
	// Err is a refused (un)subscribe's error data ("already subscribed", …).
	Err   string
	Frame *Frame
}

// Frame is an event frame delivered to the SUT (the record's time is the
// delivery).
type Frame struct {
	// Type is the frame's tm.event: NewBlock or Tx.
	Type   string
	Height int64
	Index  int    // Tx frames: the tx's index in its block
	TxHash string // Tx frames
	// Events is the frame's events map.
	Events map[string][]string
	// Published is when the chain published the frame (its block's
	// production time); a delay, reorder or duplicate (F4–F6) delivers it
	// later.
	Published time.Time
}

// ---- chain ----

// Origin says who sent a tx to the simulated chain.
type Origin string

const (
	OriginSUT       Origin = "sut"       // broadcast_tx_sync from the SUT
	OriginPeer      Origin = "peer"      // a peer provider (§4.7)
	OriginModerator Origin = "moderator" // the operator workload
	OriginIntruder  Origin = "intruder"  // F9: signed as the SUT, sent by the harness
)

// Tx is a decoded transaction, as the chain saw it.
type Tx struct {
	Hash string // upper-case hex SHA-256 of the bytes
	Size int
	// DecodeErr is the code 2 reason when the bytes did not decode; the
	// other fields are then zero.
	DecodeErr     string
	Signer        string // the first message's signer
	Signers       int    // number of signer infos
	Signatures    int
	Sequence      uint64 // signer_infos[0].sequence
	PubKey        string // hex of signer_infos[0]'s compressed key
	SignMode      int32
	GasLimit      uint64
	Fee           []Coin
	Memo          string
	TimeoutHeight uint64
	Msgs          []Msg
	// Sig is the signature check the recorder made, if any.
	Sig SigCheck
}

// SigCheck is the outcome of checking a tx's signature against the chain
// id and the signer's account number.
type SigCheck string

const (
	SigUnchecked SigCheck = ""
	SigValid     SigCheck = "valid"    // a real eth_secp256k1 signature
	SigStandIn   SigCheck = "stand-in" // the reference's stand-in (D26)
	SigInvalid   SigCheck = "invalid"  // neither
)

// Coin is a fee coin.
type Coin struct{ Denom, Amount string }

// Msg is one message of a tx.
type Msg struct {
	Type   string // the type URL
	Signer string
	// MsgSubmitOracleData.
	RequestID uint64
	Nonce     uint64
	RawData   string
	Provider  string
	Signature string
	// MsgRegisterOracleRequestDoc and MsgUpdateOracleRequestDoc.
	Doc    *Doc
	Reason string
}

// Doc is an OracleRequestDoc, every field.
type Doc struct {
	RequestID       uint64
	OracleType      int32
	Name            string
	Description     string
	Period          uint32
	AccountList     []string
	Quorum          uint32
	Endpoints       []Endpoint
	AggregationRule int32
	Status          int32
	Nonce           uint64
}

// Endpoint is a doc's data source.
type Endpoint struct{ URL, ParseRule string }

// Submission is a SubmitDataSet stored on chain.
type Submission struct {
	RequestID uint64
	Nonce     uint64
	RawData   string
	Provider  string
	Signature string
}

// DataSet is an aggregate written by the chain.
type DataSet struct {
	RequestID   uint64
	Nonce       uint64
	BlockHeight uint64
	BlockTime   uint64 // unix seconds
	RawData     string
}

// Account is the part of an account an Account query answers.
type Account struct {
	Address       string
	AccountNumber uint64
	Sequence      uint64 // committed
	PubKey        string // hex; "" until the account signed a committed tx
}

// CheckTx is one admission attempt: rows 1–2 of §4.3 answer with an RPC
// error (RPCError set, Code 0), CheckTx with a code.
type CheckTx struct {
	Origin   Origin
	Tx       Tx
	RPCError string
	Code     uint32
	Log      string
	// Injected: the code was injected by fault F11, not computed.
	Injected bool
	// Mempool is the number of txs in the mempool after the attempt.
	Mempool int
}

// Block is one produced block as BeginBlock leaves it: its height and
// time, the rounds it completed, and how many mempool txs it includes (one
// deliver record each follows it).
type Block struct {
	Height int64
	// Time is the block time (clock time plus any F16 skew); the record's
	// time is when it was produced.
	Time      time.Time
	Completes []Complete
	Txs       int
}

// Complete is one round completed at BeginBlock: the DataSet written and
// the Complete event emitted.
type Complete struct {
	RequestID   uint64
	Nonce       uint64
	RawData     string
	BlockHeight int64
	BlockTime   int64 // unix seconds
	Rule        int32 // the aggregation rule
	// Providers and Values are the submissions counted, by provider.
	Providers []string
	Values    []string
	// Unparsable counts the values that were not decimals: skipped in the
	// arithmetic, counted for the quorum.
	Unparsable int
}

// Deliver is an included tx and its block-execution result: the tx is
// committed when Code is 0.
type Deliver struct {
	Height   int64
	Index    int
	Hash     string
	Origin   Origin
	Signer   string
	Sequence uint64
	GasLimit uint64
	Fee      []Coin
	Code     uint32
	Log      string
	Msgs     []Msg
	// Docs are the docs written by the tx's register and update messages,
	// as stored after it (code 0 only).
	Docs []Doc
}

// EvictCause says why a mempool tx was dropped.
type EvictCause string

const (
	EvictRecheck EvictCause = "recheck" // CheckTx failed again after a block
	EvictFault   EvictCause = "fault"   // F13
)

// Evict is a tx dropped from the mempool (and the cache).
type Evict struct {
	Cause    EvictCause
	Hash     string
	Origin   Origin
	Signer   string
	Sequence uint64
	Code     uint32
	Log      string
}

// OpAction is a moderator action (§4.7).
type OpAction string

const (
	OpRegister    OpAction = "register"
	OpUpdate      OpAction = "update"
	OpDisable     OpAction = "disable"
	OpBogusUpdate OpAction = "bogus-nonce-update" // an update whose message nonce is bogus (D10)
)

// Op is a moderator action: the doc in its message and the tx that
// carries it (the doc that results is in the block record).
type Op struct {
	Action    OpAction
	RequestID uint64 // 0 for a register: the chain assigns it
	Doc       Doc
	Reason    string
	Hash      string
	Sequence  uint64
}

// PeerBehaviour is what a peer provider does for one round (§4.7).
type PeerBehaviour string

const (
	PeerPrompt     PeerBehaviour = "prompt"
	PeerLate       PeerBehaviour = "late"
	PeerAbsent     PeerBehaviour = "absent"
	PeerWrongNonce PeerBehaviour = "wrong-nonce"
	PeerDuplicate  PeerBehaviour = "duplicate"
)

// Peer is a peer provider's action for one round: the txs it sent (none
// when absent, two when it duplicates).
type Peer struct {
	Provider  string
	Behaviour PeerBehaviour
	RequestID uint64
	Nonce     uint64 // the nonce submitted (C+1, or a wrong one)
	Value     string
	Hashes    []string
}

// ---- data sources ----

// Src is one half of a data-source GET.
type Src struct {
	// Exchange numbers the GETs of a run; recv and done share it.
	Exchange  int64
	Phase     Phase
	RequestID uint64
	Endpoint  int
	Path      string
	// Headers are the request's headers, sorted by name then value.
	Headers []Header
	// Done records: the response class, status and body served.
	Class  string
	Status int
	Body   string
	TRecv  time.Time
	// Aborted: the client went away before the answer was complete (the
	// record's time is the abort).
	Aborted bool
}

// Header is one request header.
type Header struct{ Name, Value string }

// ---- faults ----

// FaultPhase says whether a fault record opens, closes or is a one-off.
type FaultPhase string

const (
	FaultStart FaultPhase = "start"
	FaultEnd   FaultPhase = "end"
	FaultPoint FaultPhase = "point"
)

// Fault is a fault of the catalogue (§4.9).
type Fault struct {
	ID     string // "F1" … "F18"
	Phase  FaultPhase
	Target string
	Params []Param
	// Until is a window's planned end (start records).
	Until time.Time
}

// Param is one fault parameter.
type Param struct{ Key, Value string }

// ---- white box ----

// WhitePoint is a reference trace point.
type WhitePoint string

const (
	WhiteJob        WhitePoint = "job"        // a job transition
	WhiteStop       WhitePoint = "stop"       // a component stopped
	WhiteDrained    WhitePoint = "drained"    // the task group drained
	WhiteClose      WhitePoint = "close"      // a channel closed
	WhiteGoroutines WhitePoint = "goroutines" // a goroutine count
	WhiteHealth     WhitePoint = "health"     // HealthStatus changed
)

// White is a white-box trace point of the reference.
type White struct {
	Point WhitePoint
	// Name is the component, the channel or the job id.
	Name      string
	RequestID uint64
	// Job transitions: the trigger, the rows of the table applied, the job
	// before and after (nil: it did not exist / was removed).
	Trigger string
	Rows    []string
	Before  *JobState
	After   *JobState
	// Value is a goroutine count; Detail a health status or a note.
	Value  int64
	Detail string
}

// JobState is the part of a job the checkers' model compares.
type JobState struct {
	ExecStatus  int // oracle.ExecStatus
	ReqStatus   int32
	Nonce       uint64
	ExecNonce   uint64
	NextRunTime time.Time
	Superseded  bool
	URL         string
}

// RequestDoc is the part of d the daemon reads, for the checkers' model.
func (d Doc) RequestDoc() oracle.RequestDoc {
	out := oracle.RequestDoc{
		RequestID:   d.RequestID,
		Period:      d.Period,
		AccountList: append([]string(nil), d.AccountList...),
		Quorum:      d.Quorum,
		Status:      oracle.RequestStatus(d.Status),
		Nonce:       d.Nonce,
	}
	for _, ep := range d.Endpoints {
		out.Endpoints = append(out.Endpoints, oracle.Endpoint{URL: ep.URL, ParseRule: ep.ParseRule})
	}
	return out
}
