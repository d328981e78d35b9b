package records

import (
	"bytes"
	"encoding/hex"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	authv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// DocFromProto copies every field of a chain doc.
func DocFromProto(d *oraclev1.OracleRequestDoc) history.Doc {
	out := history.Doc{
		RequestID:       d.GetRequestId(),
		OracleType:      int32(d.GetOracleType()),
		Name:            d.GetName(),
		Description:     d.GetDescription(),
		Period:          d.GetPeriod(),
		AccountList:     append([]string(nil), d.GetAccountList()...),
		Quorum:          d.GetQuorum(),
		AggregationRule: int32(d.GetAggregationRule()),
		Status:          int32(d.GetStatus()),
		Nonce:           d.GetNonce(),
	}
	for _, e := range d.GetEndpoints() {
		out.Endpoints = append(out.Endpoints, history.Endpoint{URL: e.GetUrl(), ParseRule: e.GetParseRule()})
	}
	return out
}

// DocProto is d as a chain doc.
func DocProto(d history.Doc) *oraclev1.OracleRequestDoc {
	out := &oraclev1.OracleRequestDoc{
		RequestId:       d.RequestID,
		OracleType:      oraclev1.OracleType(d.OracleType),
		Name:            d.Name,
		Description:     d.Description,
		Period:          d.Period,
		AccountList:     append([]string(nil), d.AccountList...),
		Quorum:          d.Quorum,
		AggregationRule: oraclev1.AggregationRule(d.AggregationRule),
		Status:          oraclev1.RequestStatus(d.Status),
		Nonce:           d.Nonce,
	}
	for _, e := range d.Endpoints {
		out.Endpoints = append(out.Endpoints, &oraclev1.OracleEndpoint{Url: e.URL, ParseRule: e.ParseRule})
	}
	return out
}

// MsgOf summarises one decoded message.
func MsgOf(m proto.Message) history.Msg {
	out := history.Msg{Signer: tx.MsgSigner(m)}
	switch m := m.(type) {
	case *oraclev1.MsgSubmitOracleData:
		out.Type = oracle.TypeURLSubmit // a constant: no copy per record
		ds := m.GetDataSet()
		out.RequestID, out.Nonce = ds.GetRequestId(), ds.GetNonce()
		out.RawData, out.Provider, out.Signature = ds.GetRawData(), ds.GetProvider(), ds.GetSignature()
	case *oraclev1.MsgRegisterOracleRequestDoc:
		out.Type = oracle.TypeURLRegister
		if m.GetRequestDoc() != nil {
			d := DocFromProto(m.GetRequestDoc())
			out.Doc = &d
		}
	case *oraclev1.MsgUpdateOracleRequestDoc:
		out.Type = oracle.TypeURLUpdate
		if m.GetRequestDoc() != nil {
			d := DocFromProto(m.GetRequestDoc())
			out.Doc = &d
		}
		out.Reason = m.GetReason()
	default:
		out.Type = tx.TypeURL(m)
	}
	return out
}

// TxOf summarises a decoded tx (Sig unchecked).
func TxOf(t *tx.Tx) history.Tx { return TxOfHashed(t, t.Hash()) }

// TxOfHashed is TxOf for a tx whose hash the caller has already computed.
func TxOfHashed(t *tx.Tx, hash string) history.Tx { return txOf(t, hash, nil) }

// txOf is TxOfHashed with the public key's hex from m (nil: made anew).
func txOf(t *tx.Tx, hash string, m *TxMemo) history.Tx {
	out := history.Tx{
		Hash:          hash,
		Size:          len(t.Bytes),
		Signer:        t.Signer(),
		Signers:       len(t.AuthInfo.GetSignerInfos()),
		Signatures:    len(t.Raw.GetSignatures()),
		GasLimit:      t.GasLimit(),
		Memo:          t.Body.GetMemo(),
		TimeoutHeight: t.Body.GetTimeoutHeight(),
	}
	out.Sequence, _ = t.Sequence()
	if sis := t.AuthInfo.GetSignerInfos(); len(sis) > 0 {
		out.SignMode = int32(sis[0].GetModeInfo().GetSingle().GetMode())
		// The key's bytes as sent; parsing the point would cost a square
		// root on the curve per tx.
		if key, err := tx.PubKeyKey(sis[0].GetPublicKey().GetValue()); err == nil {
			out.PubKey = m.keyHex(key)
		}
	}
	// The common tx, one fee coin and one message, takes both lists from
	// one allocation (not three): every tx delivered or broadcast is read.
	coins := t.AuthInfo.GetFee().GetAmount()
	if len(coins) == 1 && len(t.Msgs) == 1 {
		mem := &struct {
			fee [1]history.Coin
			msg [1]history.Msg
		}{}
		out.Fee, out.Msgs = mem.fee[:], mem.msg[:]
	} else {
		if len(coins) > 0 {
			out.Fee = make([]history.Coin, len(coins))
		}
		out.Msgs = make([]history.Msg, len(t.Msgs))
	}
	for i, c := range coins {
		out.Fee[i] = history.Coin{Denom: c.GetDenom(), Amount: c.GetAmount()}
	}
	for i, m := range t.Msgs {
		out.Msgs[i] = MsgOf(m)
	}
	return out
}

// DecodeTx decodes tx bytes as the chain does; bytes that do not decode
// give a Tx with only Hash, Size and DecodeErr.
func DecodeTx(b []byte) history.Tx {
	rec, _ := DecodeTxFull(b)
	return rec
}

// DecodeTxFull is DecodeTx that also gives the decoded tx (nil when the
// bytes do not decode), for a caller that hands it on instead of having
// the same bytes decoded again.
func DecodeTxFull(b []byte) (history.Tx, *tx.Tx) {
	rec, t, _ := DecodeTxSummed(b)
	return rec, t
}

// DecodeTxSummed is DecodeTxFull that also gives the bytes' SHA-256 (the
// record's Hash is tx.HashOfSum of it), for a caller that hands the tx on
// to a chain that would hash it again.
func DecodeTxSummed(b []byte) (history.Tx, *tx.Tx, [32]byte) { return DecodeTxMemo(b, nil) }

// DecodeTxMemo is DecodeTxSummed through m (nil: none): the tx the SUT
// just built through m's signer comes back from m.Tx, not parsed and
// hashed a second time (tx.Memo), and the record shares the hex of the
// key the SUT's txs repeat.
func DecodeTxMemo(b []byte, m *TxMemo) (history.Tx, *tx.Tx, [32]byte) {
	var tm *tx.Memo
	if m != nil {
		tm = &m.Tx
	}
	t, sum, hash, err := tm.DecodeSummed(b)
	if err != nil {
		return history.Tx{Hash: hash, Size: len(b), DecodeErr: codeReason(err)}, nil, sum
	}
	return txOf(t, hash, m), t, sum
}

// TxMemo is what a simulator keeps to record the SUT's broadcasts: the
// tx.Memo the SUT's signer shares (Tx), and the last public key a record
// showed with its hex (the SUT signs every tx with one key; its hex was a
// string per broadcast). Unlike its Tx it is not safe for concurrent
// use: one world records through it.
type TxMemo struct {
	Tx  tx.Memo
	key []byte
	hex string
}

// keyHex is hexString(key), the last one again when key is the same.
func (m *TxMemo) keyHex(key []byte) string {
	if m == nil {
		return hexString(key)
	}
	if m.hex == "" || !bytes.Equal(key, m.key) {
		m.key, m.hex = append(m.key[:0], key...), hexString(key)
	}
	return m.hex
}

// CheckSig checks a tx's signature against the chain id and the signer's
// account number: SigStandIn if it is the stand-in signature of the sign
// doc (D26), SigValid if it is a real eth_secp256k1 signature the chain's
// verifying mode accepts, SigInvalid otherwise (also when the public key is
// not the signer's).
func CheckSig(t *tx.Tx, chainID string, accountNumber uint64) history.SigCheck {
	pub, err := t.PubKey()
	if err != nil {
		return history.SigInvalid
	}
	return CheckSigKey(t, chainID, accountNumber, pub)
}

// CheckSigKey is CheckSig with the tx's public key already parsed (a
// recorder that sees many txs of one signer parses its key once: parsing
// a compressed point costs a square root on the curve).
func CheckSigKey(t *tx.Tx, chainID string, accountNumber uint64, pub keys.PubKey) history.SigCheck {
	signer, err := keys.DecodeAddress(t.Signer())
	if err != nil || !bytes.Equal(signer, pub.AddressBytes()) {
		return history.SigInvalid
	}
	return CheckSigSigner(t, chainID, accountNumber, pub)
}

// CheckSigSigner is CheckSigKey for a key the caller knows to be the
// signer's (it checked the address once for many txs): only the signature
// over the sign doc is checked.
func CheckSigSigner(t *tx.Tx, chainID string, accountNumber uint64, pub keys.PubKey) history.SigCheck {
	return CheckSigMemo(t, chainID, accountNumber, pub, nil)
}

// CheckSigMemo is CheckSigSigner with the stand-in signature expected of
// the sign doc taken from memo when it holds that key and sign doc (the
// signer just made it; keys.StandInMemo), computed otherwise.
func CheckSigMemo(t *tx.Tx, chainID string, accountNumber uint64, pub keys.PubKey, memo *keys.StandInMemo) history.SigCheck {
	if len(t.Raw.GetSignatures()) != 1 {
		return history.SigInvalid
	}
	// The sign doc and the stand-in signature in arrays of this call: the
	// chain checks every tx of the SUT this way.
	var docBuf [512]byte
	signDoc := tx.AppendSignBytes(docBuf[:0], t.Raw.GetBodyBytes(), t.Raw.GetAuthInfoBytes(), chainID, accountNumber)
	var sigBuf [keys.SignatureSize]byte
	if bytes.Equal(t.Raw.Signatures[0], memo.AppendSignature(sigBuf[:0], pub, signDoc)) {
		return history.SigStandIn
	}
	if pub.Verify(signDoc, t.Raw.Signatures[0]) == nil {
		return history.SigValid
	}
	return history.SigInvalid
}

// QueryOf decodes abci_query's params for its path.
func QueryOf(p cometrpc.ABCIQueryParams) *history.Query {
	m, err := abciquery.DecodeRequest(p.Path, p.Data)
	return QueryOfRequest(p, m, err)
}

// QueryOfRequest is QueryOf for a caller that has decoded the params'
// data already: m and err must be what abciquery.DecodeRequest(p.Path,
// p.Data) returned. A simulator that records a query and answers it from
// a chain decodes the request once for both (the chain's
// ABCIQueryDecoded).
func QueryOfRequest(p cometrpc.ABCIQueryParams, m proto.Message, err error) *history.Query {
	return QueryOfRequestIn(&history.Query{}, p, m, err)
}

// QueryOfRequestIn is QueryOfRequest written into q (a caller that keeps
// the record with other memory of its own), which it returns.
func QueryOfRequestIn(q *history.Query, p cometrpc.ABCIQueryParams, m proto.Message, err error) *history.Query {
	*q = history.Query{Path: p.Path, Height: int64(p.Height), Prove: p.Prove}
	if err != nil {
		q.DecodeErr = codeReason(err)
		return q
	}
	switch m := m.(type) {
	case *authv1beta1.QueryAccountRequest:
		q.Address = m.GetAddress()
	case *oraclev1.QueryOracleRequestDocsRequest:
		q.Status = int32(m.GetStatus())
	case *oraclev1.QueryOracleRequestDocRequest:
		q.RequestID = m.GetRequestId()
	case *oraclev1.QueryOracleSubmitDataRequest:
		q.RequestID, q.Nonce, q.Provider = m.GetRequestId(), m.GetNonce(), m.GetProvider()
	case *oraclev1.QueryOracleDataRequest:
		q.RequestID = m.GetRequestId()
	}
	return q
}

// ValueOf decodes a successful query answer's value for its path (nil
// for an unknown path).
func ValueOf(path string, value []byte) *history.QueryValue {
	return valueIn(&history.QueryValue{}, path, value)
}

// valueIn is ValueOf written into v (nil is returned for an unknown path).
func valueIn(v *history.QueryValue, path string, value []byte) *history.QueryValue {
	*v = history.QueryValue{}
	var err error
	switch path {
	case abciquery.PathAccount:
		var a abciquery.Account
		if a, err = abciquery.DecodeAccountResponse(value); err == nil {
			v.Account = &history.Account{Address: a.Address, AccountNumber: a.AccountNumber, Sequence: a.Sequence,
				PubKey: hex.EncodeToString(a.PubKey)}
		}
	case abciquery.PathDocs:
		var r oraclev1.QueryOracleRequestDocsResponse
		if err = proto.Unmarshal(value, &r); err == nil {
			v.Docs = make([]history.Doc, 0, len(r.GetOracleRequestDocs()))
			for _, d := range r.GetOracleRequestDocs() {
				v.Docs = append(v.Docs, DocFromProto(d))
			}
		}
	case abciquery.PathDoc:
		var r oraclev1.QueryOracleRequestDocResponse
		if err = proto.Unmarshal(value, &r); err == nil && r.GetRequestDoc() != nil {
			d := DocFromProto(r.GetRequestDoc())
			v.Doc = &d
		}
	case abciquery.PathSubmitData:
		var sets []*oraclev1.SubmitDataSet
		if sets, err = abciquery.DecodeSubmitDataResponse(value); err == nil {
			v.Submissions = make([]history.Submission, 0, len(sets))
			for _, s := range sets {
				v.Submissions = append(v.Submissions, SubmissionFromProto(s))
			}
		}
	case abciquery.PathData:
		var ds *oraclev1.DataSet
		if ds, err = abciquery.DecodeDataResponse(value); err == nil {
			v.DataSet = &history.DataSet{RequestID: ds.GetRequestId(), Nonce: ds.GetNonce(), BlockHeight: ds.GetBlockHeight(),
				BlockTime: ds.GetBlockTime(), RawData: ds.GetRawData()}
		}
	default:
		return nil
	}
	if err != nil {
		v.DecodeErr = err.Error()
	}
	return v
}

// SubmissionFromProto copies a stored submission.
func SubmissionFromProto(s *oraclev1.SubmitDataSet) history.Submission {
	return history.Submission{RequestID: s.GetRequestId(), Nonce: s.GetNonce(), RawData: s.GetRawData(),
		Provider: s.GetProvider(), Signature: s.GetSignature()}
}

// ResultOfQuery summarises an abci_query answer, decoding a successful
// value for the path.
func ResultOfQuery(path string, r cometrpc.ResultABCIQuery) *history.RPCResult {
	return ResultOfQueryIn(&history.RPCResult{}, &history.QueryValue{}, path, r)
}

// ResultOfQueryIn is ResultOfQuery written into out, a successful value
// into v (memory the caller keeps with its other records); it returns
// out.
func ResultOfQueryIn(out *history.RPCResult, v *history.QueryValue, path string, r cometrpc.ResultABCIQuery) *history.RPCResult {
	*out = history.RPCResult{Height: int64(r.Response.Height), Code: r.Response.Code, Log: r.Response.Log,
		Codespace: r.Response.Codespace}
	if r.Response.Code == 0 {
		out.Value = valueIn(v, path, r.Response.Value)
	}
	return out
}

// ResultOfBroadcast summarises a broadcast_tx_sync answer.
func ResultOfBroadcast(r cometrpc.ResultBroadcastTx) *history.RPCResult {
	return ResultOfBroadcastIn(&history.RPCResult{}, r, "")
}

// ResultOfBroadcastIn is ResultOfBroadcast written into out, which it
// returns. txHash is the hash of the tx broadcast (tx.Hash, upper-case
// hex): when the answer's hash is those bytes, as a chain's answer is,
// the record takes that string rather than making it again.
func ResultOfBroadcastIn(out *history.RPCResult, r cometrpc.ResultBroadcastTx, txHash string) *history.RPCResult {
	*out = history.RPCResult{Code: r.Code, Log: r.Log, Codespace: r.Codespace, Hash: txHash}
	if !upperHexOf(r.Hash, txHash) {
		out.Hash = r.Hash.String()
	}
	return out
}

// upperHexOf reports whether s is the upper-case hex of b (HexBytes.String).
func upperHexOf(b []byte, s string) bool {
	const digits = "0123456789ABCDEF"
	if len(s) != 2*len(b) {
		return false
	}
	for i, c := range b {
		if s[2*i] != digits[c>>4] || s[2*i+1] != digits[c&15] {
			return false
		}
	}
	return true
}

// ResultOfStatus summarises a status answer.
func ResultOfStatus(r cometrpc.ResultStatus) *history.RPCResult {
	return &history.RPCResult{Height: int64(r.SyncInfo.LatestBlockHeight), BlockTime: r.SyncInfo.LatestBlockTime,
		Network: r.NodeInfo.Network}
}

// ResultOfError summarises a JSON-RPC error answer.
func ResultOfError(e *cometrpc.RPCError) *history.RPCResult {
	return &history.RPCResult{ErrCode: e.Code, ErrMessage: e.Message, ErrData: e.Data}
}

// codeReason is a *CodeError's log ("<reason>: <code text>"), or the
// error's text.
func codeReason(err error) string {
	var ce *oracle.CodeError
	if errors.As(err, &ce) {
		return ce.Log()
	}
	return err.Error()
}

// hexString is hex.EncodeToString in one allocation for the short byte
// strings a record carries (a public key).
func hexString(b []byte) string {
	if len(b) > 64 {
		return hex.EncodeToString(b)
	}
	var buf [128]byte
	n := hex.Encode(buf[:], b)
	return string(buf[:n])
}
