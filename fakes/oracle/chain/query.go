package chain

import (
	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	authv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// ABCIQuery answers abci_query for the five paths of ORACLE-SPEC 6.5 from
// the committed state, at the latest height: an unknown path is code 6,
// data that does not decode code 18, and a missing doc, submission or
// aggregate code 18, an unknown account code 22 (docs/decisions/oracle-4-world.md, DR27).
func (c *Chain) ABCIQuery(path string, data []byte) cometrpc.ResultABCIQuery {
	req, err := abciquery.DecodeRequest(path, data)
	return c.ABCIQueryDecoded(req, err)
}

// ABCIQueryDecoded is ABCIQuery for a caller that has decoded the data
// already: req and decodeErr must be what abciquery.DecodeRequest(path,
// data) returned (a simulator that records the query decodes it once for
// the record and the answer). The chain does not keep or change req.
func (c *Chain) ABCIQueryDecoded(req proto.Message, decodeErr error) cometrpc.ResultABCIQuery {
	c.mu.Lock()
	defer c.mu.Unlock()
	value, err := c.query(req, decodeErr)
	if err != nil {
		return cometrpc.QueryFailed(err, c.height)
	}
	return cometrpc.QueryOK(value, c.height)
}

func (c *Chain) query(req proto.Message, decodeErr error) ([]byte, *oracle.CodeError) {
	if decodeErr != nil {
		return nil, asCodeError(decodeErr)
	}
	var value []byte
	var err error
	switch req := req.(type) {
	case *authv1beta1.QueryAccountRequest:
		addr := req.GetAddress()
		if err := keys.ValidateAddress(addr); err != nil {
			return nil, oracle.Errorf(oracle.CodeInvalidAddress, "invalid address %q: %v", addr, err)
		}
		a := c.byAddr[addr]
		if a == nil {
			return nil, abciquery.AccountNotFound(addr)
		}
		value, err = abciquery.AccountResponse(abciquery.Account{Address: a.address, PubKey: a.pubKey,
			AccountNumber: a.number, Sequence: a.seq})
	case *oraclev1.QueryOracleRequestDocsRequest:
		docs := make([]*oraclev1.OracleRequestDoc, 0, len(c.docs))
		for _, st := range c.docs {
			if s := req.GetStatus(); s == oraclev1.RequestStatus_REQUEST_STATUS_UNSPECIFIED || st.doc.GetStatus() == s {
				docs = append(docs, st.doc)
			}
		}
		value, err = abciquery.DocsResponse(docs)
	case *oraclev1.QueryOracleRequestDocRequest:
		st := c.docState(req.GetRequestId())
		if st == nil {
			return nil, abciquery.DocNotFound(req.GetRequestId())
		}
		value, err = abciquery.DocResponse(st.doc)
	case *oraclev1.QueryOracleSubmitDataRequest:
		var subs []kept
		if st := c.docState(req.GetRequestId()); st != nil {
			subs = st.rounds.get(req.GetNonce())
		}
		if p := req.GetProvider(); p != "" {
			i, found := findProvider(subs, p)
			if !found {
				return nil, abciquery.SubmitDataNotFound(req.GetRequestId(), req.GetNonce(), p)
			}
			subs = subs[i : i+1]
		}
		value, err = abciquery.SubmitDataResponse(c.answerSets(req.GetRequestId(), req.GetNonce(), subs))
	case *oraclev1.QueryOracleDataRequest:
		st := c.docState(req.GetRequestId())
		if st == nil || st.data == nil {
			return nil, abciquery.DataNotFound(req.GetRequestId())
		}
		value, err = abciquery.DataResponse(st.data)
	}
	if err != nil {
		// Only a string that is not UTF-8 fails to encode; the chain
		// stores none (decoding rejects them).
		return nil, oracle.Errorf(oracle.CodeInvalidRequest, "encode answer: %v", err)
	}
	return value, nil
}
