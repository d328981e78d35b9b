package abciquery

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/keys"
	authv1beta1 "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// Requests encoded by hand from the field numbers of ORACLE-SPEC 6.5, then
// decoded by the chain's side into the same message.
func TestRequests(t *testing.T) {
	addr := keys.PrivKeyFromSeed("p").PubKey().Address()
	cases := []struct {
		name string
		path string
		enc  func() ([]byte, error)
		want []byte
		msg  proto.Message
	}{
		{"Account: 1 address", PathAccount, func() ([]byte, error) { return AccountRequest(addr) },
			append([]byte{0x0a, byte(len(addr))}, addr...), &authv1beta1.QueryAccountRequest{Address: addr}},
		{"OracleRequestDocs: 1 status ENABLED", PathDocs, func() ([]byte, error) { return DocsRequest(oracle.StatusEnabled) },
			[]byte{0x08, 0x01}, &oraclev1.QueryOracleRequestDocsRequest{Status: oraclev1.RequestStatus_REQUEST_STATUS_ENABLED}},
		{"OracleRequestDocs: status 0 lists all (empty data)", PathDocs, func() ([]byte, error) { return DocsRequest(oracle.StatusUnspecified) },
			[]byte{}, &oraclev1.QueryOracleRequestDocsRequest{}},
		{"OracleRequestDoc: 1 request_id", PathDoc, func() ([]byte, error) { return DocRequest(7) },
			[]byte{0x08, 0x07}, &oraclev1.QueryOracleRequestDocRequest{RequestId: 7}},
		{"OracleSubmitData: 1 request_id, 2 nonce, provider \"\" = all", PathSubmitData, func() ([]byte, error) { return SubmitDataRequest(7, 300, "") },
			[]byte{0x08, 0x07, 0x10, 0xac, 0x02}, &oraclev1.QueryOracleSubmitDataRequest{RequestId: 7, Nonce: 300}},
		{"OracleSubmitData: 3 provider", PathSubmitData, func() ([]byte, error) { return SubmitDataRequest(1, 1, "p") },
			[]byte{0x08, 0x01, 0x10, 0x01, 0x1a, 0x01, 'p'}, &oraclev1.QueryOracleSubmitDataRequest{RequestId: 1, Nonce: 1, Provider: "p"}},
		{"OracleData: 1 request_id", PathData, func() ([]byte, error) { return DataRequest(9) },
			[]byte{0x08, 0x09}, &oraclev1.QueryOracleDataRequest{RequestId: 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tc.enc()
			require.NoError(t, err)
			require.Equal(t, tc.want, append([]byte{}, data...))
			got, err := DecodeRequest(tc.path, data)
			require.NoError(t, err)
			require.True(t, proto.Equal(tc.msg, got), "%v", got)
		})
	}
	require.ElementsMatch(t, Paths, []string{PathAccount, PathDocs, PathDoc, PathSubmitData, PathData})
}

func TestDecodeRequestErrors(t *testing.T) {
	_, err := DecodeRequest("/cosmos.bank.v1beta1.Query/Balance", nil)
	var ce *oracle.CodeError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, uint32(oracle.CodeUnknownRequest), ce.Code)
	require.Equal(t, "unknown query path /cosmos.bank.v1beta1.Query/Balance: unknown request", ce.Log())

	_, err = DecodeRequest(PathDoc, []byte{0x08})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, uint32(oracle.CodeInvalidRequest), ce.Code)

	_, err = AccountRequest("\xff")
	require.Error(t, err, "invalid UTF-8 is an error, not a panic")
}

func TestAccountResponse(t *testing.T) {
	k := keys.PrivKeyFromSeed("provider")
	for _, a := range []Account{
		{Address: k.PubKey().Address(), AccountNumber: 12, Sequence: 34},
		{Address: k.PubKey().Address(), AccountNumber: 0, Sequence: 0, PubKey: k.PubKey().Bytes()},
	} {
		v, err := AccountResponse(a)
		require.NoError(t, err)
		got, err := DecodeAccountResponse(v)
		require.NoError(t, err)
		require.Equal(t, a, got)
	}

	// By hand: account = Any{1 type_url, 2 value = BaseAccount{3 account_number 12, 4 sequence 34}}.
	v, err := AccountResponse(Account{AccountNumber: 12, Sequence: 34})
	require.NoError(t, err)
	inner := []byte{0x18, 0x0c, 0x20, 0x22}
	anyBytes := append(append([]byte{0x0a, byte(len(TypeURLBaseAccount))}, TypeURLBaseAccount...), append([]byte{0x12, byte(len(inner))}, inner...)...)
	require.Equal(t, append([]byte{0x0a, byte(len(anyBytes))}, anyBytes...), v)

	bad, err := proto.Marshal(&authv1beta1.QueryAccountResponse{})
	require.NoError(t, err)
	_, err = DecodeAccountResponse(bad)
	require.Error(t, err, "no account")
	_, err = DecodeAccountResponse([]byte{0x0a, 0x05})
	require.Error(t, err, "truncated")
}

func TestDocResponses(t *testing.T) {
	d7 := &oraclev1.OracleRequestDoc{
		RequestId: 7, OracleType: oraclev1.OracleType_ORACLE_TYPE_CRYPTO, Name: "btc", Period: 30,
		AccountList: []string{"guru1a", "guru1b"}, Quorum: 2,
		Endpoints:       []*oraclev1.OracleEndpoint{{Url: "http://x/0", ParseRule: "a.b"}, {Url: "http://x/1", ParseRule: "c"}},
		AggregationRule: oraclev1.AggregationRule_AGGREGATION_RULE_MEDIAN, Status: oraclev1.RequestStatus_REQUEST_STATUS_PAUSED, Nonce: 14,
	}
	want7 := oracle.RequestDoc{
		RequestID: 7, Period: 30, AccountList: []string{"guru1a", "guru1b"}, Quorum: 2,
		Endpoints: []oracle.Endpoint{{URL: "http://x/0", ParseRule: "a.b"}, {URL: "http://x/1", ParseRule: "c"}},
		Status:    oracle.StatusPaused, Nonce: 14,
	}
	require.Equal(t, want7, DocFromProto(d7))

	v, err := DocResponse(d7)
	require.NoError(t, err)
	got, err := DecodeDocResponse(v)
	require.NoError(t, err)
	require.Equal(t, want7, got)
	_, err = DecodeDocResponse(nil)
	require.Error(t, err, "no request_doc")

	d2 := &oraclev1.OracleRequestDoc{RequestId: 2, Status: oraclev1.RequestStatus_REQUEST_STATUS_ENABLED}
	v, err = DocsResponse([]*oraclev1.OracleRequestDoc{d2, d7})
	require.NoError(t, err)
	docs, err := DecodeDocsResponse(v)
	require.NoError(t, err)
	require.Equal(t, []oracle.RequestDoc{{RequestID: 2, Status: oracle.StatusEnabled}, want7}, docs)
	v, err = DocsResponse(nil)
	require.NoError(t, err)
	docs, err = DecodeDocsResponse(v)
	require.NoError(t, err)
	require.Empty(t, docs)
}

func TestSubmitDataAndDataResponses(t *testing.T) {
	sets := []*oraclev1.SubmitDataSet{
		{RequestId: 7, Nonce: 15, RawData: "1", Provider: "guru1a", Signature: "s"},
		{RequestId: 7, Nonce: 15, RawData: "2", Provider: "guru1b", Signature: "s"},
	}
	v, err := SubmitDataResponse(sets)
	require.NoError(t, err)
	got, err := DecodeSubmitDataResponse(v)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.True(t, proto.Equal(sets[1], got[1]))
	require.True(t, HasProvider(got, "guru1b"))
	require.False(t, HasProvider(got, "guru1c"))
	none, err := DecodeSubmitDataResponse(nil)
	require.NoError(t, err, "no submissions is an empty list, not an error")
	require.Empty(t, none)
	require.False(t, HasProvider(none, "guru1a"))

	ds := &oraclev1.DataSet{RequestId: 7, Nonce: 15, BlockHeight: 57, BlockTime: 1893456057, RawData: "101.5"}
	v, err = DataResponse(ds)
	require.NoError(t, err)
	gotDS, err := DecodeDataResponse(v)
	require.NoError(t, err)
	require.True(t, proto.Equal(ds, gotDS))
	_, err = DecodeDataResponse(nil)
	require.Error(t, err)
}

// TestEmptySubmitDataIsTheLibrarys: the shortcuts for no submission give
// what the marshaller and the unmarshaller give.
func TestEmptySubmitDataIsTheLibrarys(t *testing.T) {
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&oraclev1.QueryOracleSubmitDataResponse{})
	require.NoError(t, err)
	for _, sets := range [][]*oraclev1.SubmitDataSet{nil, {}} {
		v, err := SubmitDataResponse(sets)
		require.NoError(t, err)
		require.Equal(t, want, v)
		require.NotNil(t, v)
	}
	var r oraclev1.QueryOracleSubmitDataResponse
	require.NoError(t, proto.Unmarshal([]byte{}, &r))
	for _, v := range [][]byte{nil, {}} {
		got, err := DecodeSubmitDataResponse(v)
		require.NoError(t, err)
		require.Equal(t, r.GetSubmitDatas(), got)
	}
	require.Zero(t, testing.AllocsPerRun(10, func() { _, _ = DecodeSubmitDataResponse(nil) }))
}

func TestNotFoundLogs(t *testing.T) {
	require.Equal(t, "not exist RequestDoc(req_id: 7): invalid request", DocNotFound(7).Log())
	require.Equal(t, uint32(18), SubmitDataNotFound(7, 2, "guru1a").Code)
	require.Equal(t, uint32(18), DataNotFound(7).Code)
	require.Equal(t, uint32(22), AccountNotFound("guru1a").Code)
	require.Equal(t, "account guru1a not found: key not found", AccountNotFound("guru1a").Log())
}

// SubmitDataRequest writes what the library's marshaller writes, and
// DecodeRequest reads any bytes as the library's unmarshaller does: the
// fast path's message when it takes them, the library's answer otherwise.
func TestSubmitDataRequestIsTheLibrarys(t *testing.T) {
	num := rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64Range(1, 1000), rapid.Uint64())
	str := rapid.OneOf(rapid.Just(""), rapid.String(), rapid.StringMatching(`[a-z0-9]{1,80}`))
	rapid.Check(t, func(rt *rapid.T) {
		m := &oraclev1.QueryOracleSubmitDataRequest{RequestId: num.Draw(rt, "r"), Nonce: num.Draw(rt, "n"), Provider: str.Draw(rt, "p")}
		want, wantErr := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		got, err := SubmitDataRequest(m.RequestId, m.Nonce, m.Provider)
		if wantErr != nil {
			require.Error(rt, err)
			return
		}
		require.NoError(rt, err)
		require.Equal(rt, want, got)

		data := append([]byte(nil), got...)
		switch rapid.IntRange(0, 3).Draw(rt, "mangle") {
		case 1:
			if len(data) > 0 {
				data[rapid.IntRange(0, len(data)-1).Draw(rt, "at")] ^= byte(rapid.IntRange(1, 255).Draw(rt, "xor"))
			}
		case 2:
			data = data[:rapid.IntRange(0, len(data)).Draw(rt, "cut")]
		case 3:
			data = append(data, rapid.SliceOfN(rapid.Byte(), 1, 4).Draw(rt, "tail")...)
		}
		lib := &oraclev1.QueryOracleSubmitDataRequest{}
		libErr := proto.Unmarshal(data, lib)
		dec, err := DecodeRequest(PathSubmitData, data)
		if libErr != nil {
			require.Error(rt, err)
			return
		}
		require.NoError(rt, err)
		require.True(rt, proto.Equal(lib, dec), "%x: %v, want %v", data, dec, lib)
	})
}
