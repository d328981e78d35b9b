// Command bentoracled is the reference oracle daemon bent from outside, as
// a binary: the black-box mutants that `converge oracle conform` must
// catch (sim/oracle/conform's demonstration tests build it). Like the
// workspace mutants of scenarios/mutants, it holds no broken copy of the
// reference: it runs the unmodified refimpl/oracle and bends what crosses
// one of its ports, here the wire. Every bend but term-exit-1 puts a
// loopback reverse proxy between the daemon and chain.endpoint (HTTP and
// /websocket pass through) that rewrites the daemon's broadcasts or acts
// on their answers.
//
//	bentoracled --bend NAME --home DIR
//
// Bends:
//
//	nonce-minus-one  each submission carries nonce − 1 (a stale round)     → O2
//	value-drift      each submission's raw_data gets a digit appended       → O12
//	sequence-skip    each broadcast is signed at account sequence + 1       → O8
//	term-exit-1      a graceful stop ends with exit status 1                → O14
//	retry-after-fee  a broadcast answered code 13 is sent once more          → O5
//	stale-account    Account queries after the first get the first's answer → O9
//	resubmit         an admitted submission is sent again at sequence + 1   → O1
//	health-once      status calls after the second (the start's probe and the
//	                 first health check) get the second's answer: the
//	                 health check runs once                                 → O18 (a warning)
//	status-once      status calls after the start's probe get its answer:
//	                 no health check ever reaches the chain                 → O18 (a warning)
//	lost-as-admitted a broadcast whose connection drops before the answer
//	                 (F12) is told code 0: the daemon never retries it, so
//	                 no retry meets the cached tx (the F12 step is unmet),
//	                 and its next broadcast skips the unacknowledged
//	                 sequence                                             → O8
//	empty-signature  each submission's data-set signature is emptied: every
//	                 one is rejected with code 18, as a real daemon's were
//	                 (issue 23); the report's summary names that cause, and
//	                 `oracle conform --admit-unverified` gets past it
//
// The rewritten txs keep their signatures: the simulated chain does not
// verify them unless asked to (ORACLE-SPEC D26).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"google.golang.org/protobuf/proto"

	oracled "github.com/wsconverge/converge/refimpl/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	txv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

func main() {
	os.Exit(run())
}

func run() int {
	bend := flag.String("bend", "", "the bend: nonce-minus-one, value-drift, sequence-skip, term-exit-1, retry-after-fee, stale-account, resubmit, health-once, status-once, lost-as-admitted or empty-signature")
	home := flag.String("home", oracled.DefaultHome(), "the daemon's home")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runHome := *home
	switch *bend {
	case "term-exit-1":
	case "nonce-minus-one", "value-drift", "sequence-skip", "retry-after-fee", "stale-account", "resubmit", "health-once", "status-once",
		"lost-as-admitted", "empty-signature":
		h, err := proxied(*home, *bend)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bentoracled:", err)
			return oracled.ExitBadConfig
		}
		runHome = h
	default:
		fmt.Fprintf(os.Stderr, "bentoracled: unknown --bend %q\n", *bend)
		return oracled.ExitBadConfig
	}
	code, err := oracled.Run(ctx, oracled.Options{Home: runHome, Stdout: os.Stdout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bentoracled:", err)
	}
	if *bend == "term-exit-1" && code == oracled.ExitOK && ctx.Err() != nil {
		return 1
	}
	return code
}

// proxied starts the bending proxy in front of home's chain.endpoint and
// writes a second home (home/bent) whose config points at it and whose
// keyring is the original one.
func proxied(home, bend string) (string, error) {
	cfg, err := oracled.LoadConfig(home)
	if err != nil {
		return "", err
	}
	target, err := url.Parse(cfg.Chain.Endpoint)
	if err != nil {
		return "", fmt.Errorf("chain.endpoint: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("proxy: %w", err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &poster{url: target.String(), bend: bend}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			rp.ServeHTTP(w, r) // the WebSocket passes through
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := p.exchange(bendRequest(body, bend))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	go func() { _ = http.Serve(ln, h) }()
	cfg.Chain.Endpoint = "http://" + ln.Addr().String()
	bent := filepath.Join(home, "bent")
	if err := os.RemoveAll(bent); err != nil {
		return "", err
	}
	if _, err := oracled.WriteConfig(bent, cfg); err != nil {
		return "", err
	}
	return bent, nil
}

// poster forwards the daemon's JSON-RPC POSTs to the chain endpoint and
// applies the bends that act on answers.
type poster struct {
	url  string
	bend string

	mu      sync.Mutex
	account json.RawMessage // stale-account: the first Account answer's result
	status  json.RawMessage // health-once, status-once: the status answer replayed
	probes  int             // health-once: status calls forwarded
}

// cache is where a bend keeps the first answer to req that it replays
// (nil: req is not replayed).
func (p *poster) cache(req cometrpc.Request) *json.RawMessage {
	switch {
	case p.bend == "stale-account" && isAccountQuery(req):
		return &p.account
	case p.bend == "health-once" && req.Method == cometrpc.MethodStatus:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.probes++; p.probes < 2 {
			return nil // the start's probe passes; the first health check is kept
		}
		return &p.status
	case p.bend == "status-once" && req.Method == cometrpc.MethodStatus:
		return &p.status // the start's probe passes, every later call is its echo
	}
	return nil
}

// exchange sends body upstream and returns the answer the daemon gets.
func (p *poster) exchange(body []byte) ([]byte, error) {
	req, ok := single(body)
	var slot *json.RawMessage
	if ok {
		slot = p.cache(req)
	}
	if slot != nil {
		p.mu.Lock()
		cached := *slot
		p.mu.Unlock()
		if cached != nil {
			return json.Marshal(cometrpc.Response{JSONRPC: cometrpc.Version, ID: req.ID, Result: cached})
		}
	}
	out, err := post(p.url, body)
	if err != nil && ok && p.bend == "lost-as-admitted" && req.Method == cometrpc.MethodBroadcastTxSync {
		return admitted(req) // the dropped connection read as an admission
	}
	if err != nil || !ok {
		return out, err
	}
	var resp cometrpc.Response
	if json.Unmarshal(out, &resp) != nil || resp.Error != nil {
		return out, nil
	}
	switch {
	case slot != nil:
		p.mu.Lock()
		if *slot == nil {
			*slot = resp.Result
		}
		p.mu.Unlock()
	case req.Method == cometrpc.MethodBroadcastTxSync:
		var res cometrpc.ResultBroadcastTx
		if json.Unmarshal(resp.Result, &res) != nil {
			return out, nil
		}
		switch {
		case p.bend == "retry-after-fee" && res.Code == 13:
			return post(p.url, body) // a second try after a terminal code
		case p.bend == "resubmit" && res.Code == 0:
			if again := bendRequest(body, "sequence-skip"); !bytes.Equal(again, body) {
				_, _ = post(p.url, again) // the copy's answer is nobody's business
			}
		}
	}
	return out, nil
}

// admitted is the code 0 answer to broadcast request req.
func admitted(req cometrpc.Request) ([]byte, error) {
	var p cometrpc.BroadcastTxParams
	if rpcErr := req.DecodeParams(&p); rpcErr != nil {
		return nil, fmt.Errorf("proxy: broadcast params: %v", rpcErr)
	}
	sum := sha256.Sum256(p.Tx)
	resp, err := cometrpc.NewResult(req.ID, cometrpc.BroadcastAdmitted(sum[:]))
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return b, nil
}

// single decodes a body holding one JSON-RPC request.
func single(body []byte) (cometrpc.Request, bool) {
	reqs, batch, rpcErr := cometrpc.ParseRequests(body)
	if rpcErr != nil || batch || len(reqs) != 1 {
		return cometrpc.Request{}, false
	}
	return reqs[0], true
}

func isAccountQuery(req cometrpc.Request) bool {
	var p cometrpc.ABCIQueryParams
	return req.Method == cometrpc.MethodABCIQuery && req.DecodeParams(&p) == nil && p.Path == abciquery.PathAccount
}

// post sends one JSON-RPC body to url and returns the answer's body.
func post(url string, body []byte) ([]byte, error) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return out, nil
}

// bendRequest rewrites a broadcast_tx_sync request's tx; anything else
// (and anything it cannot read) passes unchanged.
func bendRequest(body []byte, bend string) []byte {
	switch bend {
	case "nonce-minus-one", "value-drift", "sequence-skip", "empty-signature":
	default:
		return body // the bend acts on answers
	}
	reqs, batch, rpcErr := cometrpc.ParseRequests(body)
	if rpcErr != nil || batch || len(reqs) != 1 || reqs[0].Method != cometrpc.MethodBroadcastTxSync {
		return body
	}
	var p cometrpc.BroadcastTxParams
	if reqs[0].DecodeParams(&p) != nil {
		return body
	}
	bent, err := bendTx(p.Tx, bend)
	if err != nil {
		return body
	}
	out, err := cometrpc.NewRequest(reqs[0].ID, reqs[0].Method, cometrpc.BroadcastTxParams{Tx: bent})
	if err != nil {
		return body
	}
	b, err := json.Marshal(out)
	if err != nil {
		return body
	}
	return b
}

func bendTx(txBytes []byte, bend string) ([]byte, error) {
	var raw txv1beta1.TxRaw
	if err := proto.Unmarshal(txBytes, &raw); err != nil {
		return nil, err
	}
	switch bend {
	case "sequence-skip":
		var auth txv1beta1.AuthInfo
		if err := proto.Unmarshal(raw.AuthInfoBytes, &auth); err != nil {
			return nil, err
		}
		if len(auth.SignerInfos) == 0 {
			return nil, errors.New("no signer")
		}
		auth.SignerInfos[0].Sequence++
		b, err := tx.Marshal(&auth)
		if err != nil {
			return nil, err
		}
		raw.AuthInfoBytes = b
	default:
		var body txv1beta1.TxBody
		if err := proto.Unmarshal(raw.BodyBytes, &body); err != nil {
			return nil, err
		}
		for i, a := range body.Messages {
			var m oraclev1.MsgSubmitOracleData
			if a.TypeUrl != tx.TypeURL(&m) || proto.Unmarshal(a.Value, &m) != nil || m.DataSet == nil {
				continue
			}
			switch bend {
			case "nonce-minus-one":
				m.DataSet.Nonce--
			case "value-drift":
				m.DataSet.RawData += "7"
			case "empty-signature":
				m.DataSet.Signature = ""
			}
			packed, err := tx.Pack(&m)
			if err != nil {
				return nil, err
			}
			body.Messages[i] = packed
		}
		b, err := tx.Marshal(&body)
		if err != nil {
			return nil, err
		}
		raw.BodyBytes = b
	}
	return tx.Marshal(&raw)
}
