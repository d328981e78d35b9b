package oracle

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueriesAreTheSpecStrings(t *testing.T) {
	require.Equal(t, "tm.event='Tx' AND message.action='/guru.oracle.v1.MsgRegisterOracleRequestDoc'", QueryRegister)
	require.Equal(t, "tm.event='Tx' AND message.action='/guru.oracle.v1.MsgUpdateOracleRequestDoc'", QueryUpdate)
	require.Equal(t, "tm.event='NewBlock' AND complete_oracle_data_set.request_id EXISTS", QueryComplete)
	require.Equal(t, []string{QueryRegister, QueryUpdate, QueryComplete},
		[]string{Subscriptions[0].Query(), Subscriptions[1].Query(), Subscriptions[2].Query()})
}
