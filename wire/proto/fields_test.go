package oracleproto_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/wsconverge/converge/wire/proto/cosmos/auth/v1beta1"
	_ "github.com/wsconverge/converge/wire/proto/cosmos/crypto/keyring/v1"
	_ "github.com/wsconverge/converge/wire/proto/cosmos/evm/crypto/v1/ethsecp256k1"
	_ "github.com/wsconverge/converge/wire/proto/cosmos/tx/v1beta1"
	_ "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The spec's tables (ORACLE-SPEC 2.1-2.3, 6.5, 6.6), written out as
// "number name type" with "[]" for repeated fields. Every message must have
// exactly these fields.
var specFields = map[string][]string{
	"guru.oracle.v1.OracleRequestDoc": {
		"1 request_id uint64", "2 oracle_type guru.oracle.v1.OracleType", "3 name string",
		"4 description string", "5 period uint32", "6 account_list []string", "7 quorum uint32",
		"8 endpoints []guru.oracle.v1.OracleEndpoint", "9 aggregation_rule guru.oracle.v1.AggregationRule",
		"10 status guru.oracle.v1.RequestStatus", "12 nonce uint64",
	},
	"guru.oracle.v1.OracleEndpoint": {"1 url string", "2 parse_rule string"},
	"guru.oracle.v1.SubmitDataSet": {
		"1 request_id uint64", "2 nonce uint64", "3 raw_data string", "4 provider string", "5 signature string",
	},
	"guru.oracle.v1.DataSet": {
		"1 request_id uint64", "2 nonce uint64", "3 block_height uint64", "4 block_time uint64", "5 raw_data string",
	},
	"guru.oracle.v1.MsgSubmitOracleData": {"1 authority_address string", "2 data_set guru.oracle.v1.SubmitDataSet"},
	"guru.oracle.v1.MsgRegisterOracleRequestDoc": {
		"1 moderator_address string", "2 request_doc guru.oracle.v1.OracleRequestDoc",
	},
	"guru.oracle.v1.MsgUpdateOracleRequestDoc": {
		"1 moderator_address string", "2 request_doc guru.oracle.v1.OracleRequestDoc", "3 reason string",
	},
	"guru.oracle.v1.QueryOracleRequestDocsRequest":  {"1 status guru.oracle.v1.RequestStatus"},
	"guru.oracle.v1.QueryOracleRequestDocsResponse": {"1 oracle_request_docs []guru.oracle.v1.OracleRequestDoc"},
	"guru.oracle.v1.QueryOracleRequestDocRequest":   {"1 request_id uint64"},
	"guru.oracle.v1.QueryOracleRequestDocResponse":  {"1 request_doc guru.oracle.v1.OracleRequestDoc"},
	"guru.oracle.v1.QueryOracleSubmitDataRequest":   {"1 request_id uint64", "2 nonce uint64", "3 provider string"},
	"guru.oracle.v1.QueryOracleSubmitDataResponse":  {"1 submit_datas []guru.oracle.v1.SubmitDataSet"},
	"guru.oracle.v1.QueryOracleDataRequest":         {"1 request_id uint64"},
	"guru.oracle.v1.QueryOracleDataResponse":        {"1 data_set guru.oracle.v1.DataSet"},
	"cosmos.tx.v1beta1.TxRaw":                       {"1 body_bytes bytes", "2 auth_info_bytes bytes", "3 signatures []bytes"},
	"cosmos.tx.v1beta1.TxBody": {
		"1 messages []google.protobuf.Any", "2 memo string", "3 timeout_height uint64", "4 unordered bool",
		"5 timeout_timestamp google.protobuf.Timestamp", "1023 extension_options []google.protobuf.Any",
		"2047 non_critical_extension_options []google.protobuf.Any",
	},
	"cosmos.tx.v1beta1.AuthInfo": {
		"1 signer_infos []cosmos.tx.v1beta1.SignerInfo", "2 fee cosmos.tx.v1beta1.Fee", "3 tip cosmos.tx.v1beta1.Tip",
	},
	"cosmos.tx.v1beta1.SignerInfo": {
		"1 public_key google.protobuf.Any", "2 mode_info cosmos.tx.v1beta1.ModeInfo", "3 sequence uint64",
	},
	"cosmos.tx.v1beta1.ModeInfo":        {"1 single cosmos.tx.v1beta1.ModeInfo.Single"},
	"cosmos.tx.v1beta1.ModeInfo.Single": {"1 mode cosmos.tx.signing.v1beta1.SignMode"},
	"cosmos.tx.v1beta1.Fee": {
		"1 amount []cosmos.base.v1beta1.Coin", "2 gas_limit uint64", "3 payer string", "4 granter string",
	},
	"cosmos.tx.v1beta1.Tip": {"1 amount []cosmos.base.v1beta1.Coin", "2 tipper string"},
	"cosmos.tx.v1beta1.SignDoc": {
		"1 body_bytes bytes", "2 auth_info_bytes bytes", "3 chain_id string", "4 account_number uint64",
	},
	"cosmos.base.v1beta1.Coin": {"1 denom string", "2 amount string"},
	"cosmos.auth.v1beta1.BaseAccount": {
		"1 address string", "2 pub_key google.protobuf.Any", "3 account_number uint64", "4 sequence uint64",
	},
	"cosmos.auth.v1beta1.QueryAccountRequest":    {"1 address string"},
	"cosmos.auth.v1beta1.QueryAccountResponse":   {"1 account google.protobuf.Any"},
	"cosmos.evm.crypto.v1.ethsecp256k1.PubKey":   {"1 key bytes"},
	"cosmos.evm.crypto.v1.ethsecp256k1.PrivKey":  {"1 key bytes"},
	"guru.oracle.v1.MsgSubmitOracleDataResponse": {},
	// Not the spec's: the Cosmos SDK keyring's record (SDK >= 0.46), the
	// fields `oracle conform --key-format cosmos-test-keyring` writes.
	"cosmos.crypto.keyring.v1.Record": {
		"1 name string", "2 pub_key google.protobuf.Any", "3 local cosmos.crypto.keyring.v1.Record.Local",
	},
	"cosmos.crypto.keyring.v1.Record.Local":              {"1 priv_key google.protobuf.Any"},
	"guru.oracle.v1.MsgRegisterOracleRequestDocResponse": {"1 request_id uint64"},
	"guru.oracle.v1.MsgUpdateOracleRequestDocResponse":   {"1 request_id uint64"},
}

func describe(f protoreflect.FieldDescriptor) string {
	typ := f.Kind().String()
	switch f.Kind() {
	case protoreflect.MessageKind:
		typ = string(f.Message().FullName())
	case protoreflect.EnumKind:
		typ = string(f.Enum().FullName())
	}
	if f.Cardinality() == protoreflect.Repeated {
		typ = "[]" + typ
	}
	return fmt.Sprintf("%d %s %s", f.Number(), f.Name(), typ)
}

func TestFieldNumbersMatchTheSpec(t *testing.T) {
	for name, want := range specFields {
		t.Run(name, func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
			require.NoError(t, err)
			fields := mt.Descriptor().Fields()
			got := []string{}
			for i := 0; i < fields.Len(); i++ {
				got = append(got, describe(fields.Get(i)))
			}
			require.ElementsMatch(t, want, got)
		})
	}
}

func TestEnumValuesMatchTheSpec(t *testing.T) {
	want := map[string][]string{
		"guru.oracle.v1.RequestStatus": {"0 REQUEST_STATUS_UNSPECIFIED", "1 REQUEST_STATUS_ENABLED",
			"2 REQUEST_STATUS_PAUSED", "3 REQUEST_STATUS_DISABLED"},
		"guru.oracle.v1.OracleType": {"0 ORACLE_TYPE_UNSPECIFIED", "1 ORACLE_TYPE_MIN_GAS_PRICE",
			"2 ORACLE_TYPE_CURRENCY", "3 ORACLE_TYPE_STOCK", "4 ORACLE_TYPE_CRYPTO"},
		"guru.oracle.v1.AggregationRule": {"0 AGGREGATION_RULE_UNSPECIFIED", "1 AGGREGATION_RULE_AVG",
			"2 AGGREGATION_RULE_MIN", "3 AGGREGATION_RULE_MAX", "4 AGGREGATION_RULE_MEDIAN"},
		"cosmos.tx.signing.v1beta1.SignMode": {"0 SIGN_MODE_UNSPECIFIED", "1 SIGN_MODE_DIRECT",
			"2 SIGN_MODE_TEXTUAL", "3 SIGN_MODE_DIRECT_AUX", "127 SIGN_MODE_LEGACY_AMINO_JSON", "191 SIGN_MODE_EIP_191"},
	}
	for name, values := range want {
		et, err := protoregistry.GlobalTypes.FindEnumByName(protoreflect.FullName(name))
		require.NoError(t, err, name)
		vs := et.Descriptor().Values()
		got := []string{}
		for i := 0; i < vs.Len(); i++ {
			got = append(got, fmt.Sprintf("%d %s", vs.Get(i).Number(), vs.Get(i).Name()))
		}
		require.ElementsMatch(t, values, got, name)
	}
}

// The abci_query paths of ORACLE-SPEC 6.5 are "/<service>/<method>" of the
// declared services, and the type URLs of 6.6 are "/<message full name>".
func TestServicePathsMatchTheSpec(t *testing.T) {
	want := []string{
		"/cosmos.auth.v1beta1.Query/Account",
		"/guru.oracle.v1.Query/OracleRequestDocs",
		"/guru.oracle.v1.Query/OracleRequestDoc",
		"/guru.oracle.v1.Query/OracleSubmitData",
		"/guru.oracle.v1.Query/OracleData",
		"/guru.oracle.v1.Msg/RegisterOracleRequestDoc",
		"/guru.oracle.v1.Msg/UpdateOracleRequestDoc",
		"/guru.oracle.v1.Msg/SubmitOracleData",
	}
	for _, path := range want {
		svc, method, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		require.True(t, ok)
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
		require.NoError(t, err, path)
		sd, ok := d.(protoreflect.ServiceDescriptor)
		require.True(t, ok, path)
		require.NotNil(t, sd.Methods().ByName(protoreflect.Name(method)), path)
	}
}
