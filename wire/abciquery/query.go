package abciquery

import (
	"bytes"
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	authv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	"github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/tx"
)

// The query paths the façade serves; any other path answers code 6.
const (
	PathAccount    = "/cosmos.auth.v1beta1.Query/Account"
	PathDocs       = "/guru.oracle.v1.Query/OracleRequestDocs"
	PathDoc        = "/guru.oracle.v1.Query/OracleRequestDoc"
	PathSubmitData = "/guru.oracle.v1.Query/OracleSubmitData"
	PathData       = "/guru.oracle.v1.Query/OracleData"
)

// Paths lists the five paths.
var Paths = []string{PathAccount, PathDocs, PathDoc, PathSubmitData, PathData}

// TypeURLBaseAccount is the type URL of the account in an Account response.
const TypeURLBaseAccount = "/cosmos.auth.v1beta1.BaseAccount"

// requestTypes gives each path's request message.
var requestTypes = map[string]func() proto.Message{
	PathAccount:    func() proto.Message { return &authv1beta1.QueryAccountRequest{} },
	PathDocs:       func() proto.Message { return &oraclev1.QueryOracleRequestDocsRequest{} },
	PathDoc:        func() proto.Message { return &oraclev1.QueryOracleRequestDocRequest{} },
	PathSubmitData: func() proto.Message { return &oraclev1.QueryOracleSubmitDataRequest{} },
	PathData:       func() proto.Message { return &oraclev1.QueryOracleDataRequest{} },
}

// encode is the canonical encoding; it fails only for a string field that
// is not valid UTF-8.
func encode(m proto.Message) ([]byte, error) {
	return tx.Marshal(m)
}

// AccountRequest is the data of an Account query.
func AccountRequest(address string) ([]byte, error) {
	return encode(&authv1beta1.QueryAccountRequest{Address: address})
}

// DocsRequest is the data of an OracleRequestDocs query; status 0 lists
// every doc.
func DocsRequest(status oracle.RequestStatus) ([]byte, error) {
	return encode(&oraclev1.QueryOracleRequestDocsRequest{Status: oraclev1.RequestStatus(status)})
}

// DocRequest is the data of an OracleRequestDoc query.
func DocRequest(requestID uint64) ([]byte, error) {
	return encode(&oraclev1.QueryOracleRequestDocRequest{RequestId: requestID})
}

// SubmitDataRequest is the data of an OracleSubmitData query; provider ""
// asks for every provider's submission.
func SubmitDataRequest(requestID, nonce uint64, provider string) ([]byte, error) {
	if !utf8.ValidString(provider) {
		return encode(&oraclev1.QueryOracleSubmitDataRequest{RequestId: requestID, Nonce: nonce, Provider: provider})
	}
	// Written field by field, as Marshal writes it (proto3: zero values
	// left out, fields in order): a daemon makes one per on-chain check,
	// every round, and the reflective marshaller was most of its cost.
	// TestSubmitDataRequestIsTheLibrarys compares the two.
	b := make([]byte, 0, 2*(1+protowire.SizeVarint(math.MaxUint64))+protowire.SizeBytes(len(provider))+1)
	b = appendSubmitDataRequest(b, requestID, nonce, provider)
	return b, nil
}

// appendSubmitDataRequest appends the canonical encoding of an
// OracleSubmitData request with a UTF-8 provider.
func appendSubmitDataRequest(b []byte, requestID, nonce uint64, provider string) []byte {
	if requestID != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), requestID)
	}
	if nonce != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), nonce)
	}
	if provider != "" {
		b = protowire.AppendString(protowire.AppendTag(b, 3, protowire.BytesType), provider)
	}
	return b
}

// decodeSubmitDataRequest is DecodeRequest's fast path for an
// OracleSubmitData request in the encoding SubmitDataRequest writes
// (canonical, no unknown field, a UTF-8 provider), read without the
// reflective unmarshaller; anything else returns false and goes the
// library's way, which gives the same message for these bytes.
func decodeSubmitDataRequest(data []byte) (*oraclev1.QueryOracleSubmitDataRequest, bool) {
	m := &oraclev1.QueryOracleSubmitDataRequest{}
	rest := data
	for len(rest) > 0 {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, false
		}
		rest = rest[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			m.RequestId, n = protowire.ConsumeVarint(rest)
		case num == 2 && typ == protowire.VarintType:
			m.Nonce, n = protowire.ConsumeVarint(rest)
		case num == 3 && typ == protowire.BytesType:
			var v []byte
			v, n = protowire.ConsumeBytes(rest)
			m.Provider = string(v)
		default:
			return nil, false
		}
		if n < 0 {
			return nil, false
		}
		rest = rest[n:]
	}
	var buf [64]byte
	if !utf8.ValidString(m.Provider) ||
		!bytes.Equal(appendSubmitDataRequest(buf[:0], m.RequestId, m.Nonce, m.Provider), data) {
		return nil, false // not canonical: the library decides
	}
	return m, true
}

// DataRequest is the data of an OracleData query.
func DataRequest(requestID uint64) ([]byte, error) {
	return encode(&oraclev1.QueryOracleDataRequest{RequestId: requestID})
}

// DecodeRequest is the chain's side: the request message of a path, one of
// *QueryAccountRequest, *QueryOracleRequestDocsRequest,
// *QueryOracleRequestDocRequest, *QueryOracleSubmitDataRequest or
// *QueryOracleDataRequest. An unknown path is code 6, data that does not
// decode is code 18.
func DecodeRequest(path string, data []byte) (proto.Message, error) {
	mk, ok := requestTypes[path]
	if !ok {
		return nil, oracle.Errorf(oracle.CodeUnknownRequest, "unknown query path %s", path)
	}
	if path == PathSubmitData {
		if m, ok := decodeSubmitDataRequest(data); ok {
			return m, nil
		}
	}
	m := mk()
	if err := proto.Unmarshal(data, m); err != nil {
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "failed to decode %s request: %v", path, err)
	}
	return m, nil
}

// Account is the part of a BaseAccount the SequenceManager reads.
type Account struct {
	Address       string
	PubKey        []byte // compressed eth_secp256k1 key; nil until the account has signed
	AccountNumber uint64
	Sequence      uint64 // the committed sequence
}

// AccountResponse is the value of an Account answer:
// account = Any{/cosmos.auth.v1beta1.BaseAccount}.
func AccountResponse(a Account) ([]byte, error) {
	base := &authv1beta1.BaseAccount{Address: a.Address, AccountNumber: a.AccountNumber, Sequence: a.Sequence}
	if a.PubKey != nil {
		pk, err := tx.Pack(&ethsecp256k1.PubKey{Key: a.PubKey})
		if err != nil {
			return nil, err
		}
		base.PubKey = pk
	}
	acc, err := encode(base)
	if err != nil {
		return nil, err
	}
	return encode(&authv1beta1.QueryAccountResponse{Account: &anypb.Any{TypeUrl: TypeURLBaseAccount, Value: acc}})
}

// DecodeAccountResponse reads an Account answer.
func DecodeAccountResponse(value []byte) (Account, error) {
	var r authv1beta1.QueryAccountResponse
	if err := proto.Unmarshal(value, &r); err != nil {
		return Account{}, fmt.Errorf("account response: %w", err)
	}
	if r.GetAccount().GetTypeUrl() != TypeURLBaseAccount {
		return Account{}, fmt.Errorf("account response: account type %q, want %q", r.GetAccount().GetTypeUrl(), TypeURLBaseAccount)
	}
	var base authv1beta1.BaseAccount
	if err := proto.Unmarshal(r.Account.GetValue(), &base); err != nil {
		return Account{}, fmt.Errorf("account response: %w", err)
	}
	a := Account{Address: base.GetAddress(), AccountNumber: base.GetAccountNumber(), Sequence: base.GetSequence()}
	if pk := base.GetPubKey(); pk != nil {
		if pk.GetTypeUrl() != tx.TypeURLPubKey {
			return Account{}, fmt.Errorf("account response: public key type %q, want %q", pk.GetTypeUrl(), tx.TypeURLPubKey)
		}
		var k ethsecp256k1.PubKey
		if err := proto.Unmarshal(pk.GetValue(), &k); err != nil {
			return Account{}, fmt.Errorf("account response: public key: %w", err)
		}
		if _, err := keys.ParsePubKey(k.GetKey()); err != nil {
			return Account{}, fmt.Errorf("account response: %w", err)
		}
		a.PubKey = k.GetKey()
	}
	return a, nil
}

// DocsResponse is the value of an OracleRequestDocs answer; the docs go in
// the order given (the chain lists them by ascending request_id).
func DocsResponse(docs []*oraclev1.OracleRequestDoc) ([]byte, error) {
	return encode(&oraclev1.QueryOracleRequestDocsResponse{OracleRequestDocs: docs})
}

// DecodeDocsResponse reads an OracleRequestDocs answer.
func DecodeDocsResponse(value []byte) ([]oracle.RequestDoc, error) {
	var r oraclev1.QueryOracleRequestDocsResponse
	if err := proto.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("request docs response: %w", err)
	}
	docs := make([]oracle.RequestDoc, 0, len(r.GetOracleRequestDocs()))
	for _, d := range r.GetOracleRequestDocs() {
		docs = append(docs, DocFromProto(d))
	}
	return docs, nil
}

// DocResponse is the value of an OracleRequestDoc answer.
func DocResponse(doc *oraclev1.OracleRequestDoc) ([]byte, error) {
	return encode(&oraclev1.QueryOracleRequestDocResponse{RequestDoc: doc})
}

// DecodeDocResponse reads an OracleRequestDoc answer.
func DecodeDocResponse(value []byte) (oracle.RequestDoc, error) {
	var r oraclev1.QueryOracleRequestDocResponse
	if err := proto.Unmarshal(value, &r); err != nil {
		return oracle.RequestDoc{}, fmt.Errorf("request doc response: %w", err)
	}
	if r.GetRequestDoc() == nil {
		return oracle.RequestDoc{}, fmt.Errorf("request doc response: no request_doc")
	}
	return DocFromProto(r.GetRequestDoc()), nil
}

// SubmitDataResponse is the value of an OracleSubmitData answer.
func SubmitDataResponse(sets []*oraclev1.SubmitDataSet) ([]byte, error) {
	if len(sets) == 0 {
		// The empty message's encoding (what Marshal gives, without the
		// message on the heap): most of a daemon's on-chain checks, before
		// it submits a round, find nothing.
		return []byte{}, nil
	}
	return encode(&oraclev1.QueryOracleSubmitDataResponse{SubmitDatas: sets})
}

// DecodeSubmitDataResponse reads an OracleSubmitData answer.
func DecodeSubmitDataResponse(value []byte) ([]*oraclev1.SubmitDataSet, error) {
	if len(value) == 0 {
		return nil, nil // the empty message: no submission (Unmarshal's answer, without the message on the heap)
	}
	var r oraclev1.QueryOracleSubmitDataResponse
	if err := proto.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("submit data response: %w", err)
	}
	return r.GetSubmitDatas(), nil
}

// HasProvider is the on-chain check of D3: whether provider is among the
// submissions of an OracleSubmitData answer.
func HasProvider(sets []*oraclev1.SubmitDataSet, provider string) bool {
	for _, s := range sets {
		if s.GetProvider() == provider {
			return true
		}
	}
	return false
}

// DataResponse is the value of an OracleData answer.
func DataResponse(ds *oraclev1.DataSet) ([]byte, error) {
	return encode(&oraclev1.QueryOracleDataResponse{DataSet: ds})
}

// DecodeDataResponse reads an OracleData answer.
func DecodeDataResponse(value []byte) (*oraclev1.DataSet, error) {
	var r oraclev1.QueryOracleDataResponse
	if err := proto.Unmarshal(value, &r); err != nil {
		return nil, fmt.Errorf("data response: %w", err)
	}
	if r.GetDataSet() == nil {
		return nil, fmt.Errorf("data response: no data_set")
	}
	return r.GetDataSet(), nil
}

// DocFromProto keeps the fields of a chain doc the daemon reads.
func DocFromProto(d *oraclev1.OracleRequestDoc) oracle.RequestDoc {
	out := oracle.RequestDoc{
		RequestID:   d.GetRequestId(),
		Period:      d.GetPeriod(),
		AccountList: append([]string(nil), d.GetAccountList()...),
		Quorum:      d.GetQuorum(),
		Status:      oracle.RequestStatus(d.GetStatus()),
		Nonce:       d.GetNonce(),
	}
	for _, e := range d.GetEndpoints() {
		out.Endpoints = append(out.Endpoints, oracle.Endpoint{URL: e.GetUrl(), ParseRule: e.GetParseRule()})
	}
	return out
}

// The reasons the chain gives when a query finds nothing (codes 18 and 22).

// DocNotFound is OracleRequestDoc's answer for an unknown request (the
// spec's example log: "not exist RequestDoc(req_id: 7): invalid request").
func DocNotFound(requestID uint64) *oracle.CodeError {
	return oracle.Errorf(oracle.CodeInvalidRequest, "not exist RequestDoc(req_id: %d)", requestID)
}

// SubmitDataNotFound is OracleSubmitData's answer for a named provider that
// has not submitted for the round.
func SubmitDataNotFound(requestID, nonce uint64, provider string) *oracle.CodeError {
	return oracle.Errorf(oracle.CodeInvalidRequest, "not exist SubmitData(req_id: %d, nonce: %d, provider: %s)", requestID, nonce, provider)
}

// DataNotFound is OracleData's answer for a request without an aggregate yet.
func DataNotFound(requestID uint64) *oracle.CodeError {
	return oracle.Errorf(oracle.CodeInvalidRequest, "not exist DataSet(req_id: %d)", requestID)
}

// AccountNotFound is the Account answer for an unknown address.
func AccountNotFound(address string) *oracle.CodeError {
	return oracle.Errorf(oracle.CodeKeyNotFound, "account %s not found", address)
}
