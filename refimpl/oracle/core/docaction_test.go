package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestDecideDoc(t *testing.T) {
	assigned, paused := doc(), doc(withStatus(oracle.StatusPaused))
	unassigned, noEndpoints := doc(withAccounts(peerA)), doc(withEndpoints())
	cases := []struct {
		name string
		job  *oracle.Job
		doc  *oracle.RequestDoc
		want DocAction
	}{
		{"3.3.1 Register, no job, assigned → create", nil, &assigned, DocCreate},
		{"3.3.1 Register, no job, PAUSED but assigned → create (stored, not run)", nil, &paused, DocCreate},
		{"3.3.1 Register, no job, self absent → ignore", nil, &unassigned, DocIgnore},
		{"D8 no job, no endpoints → ignore", nil, &noEndpoints, DocIgnore},
		{"D9 Register on an existing job → update", job(), &assigned, DocUpdate},
		{"3.3.1 Update, job, still assigned → update", job(), &paused, DocUpdate},
		{"3.3.1 Update, job, self left → remove", job(), &unassigned, DocRemove},
		{"3.3.1 Update, job, endpoints empty → remove", job(), &noEndpoints, DocRemove},
		{"3.3.4 job, doc gone → remove", job(), nil, DocRemove},
		{"no job, doc gone → ignore", nil, nil, DocIgnore},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, DecideDoc(tc.job, tc.doc, self))
		})
	}
}

func TestReconcileNeeds(t *testing.T) {
	cases := []struct {
		name              string
		job               *oracle.Job
		doc               oracle.RequestDoc
		submitted, lastBT bool
	}{
		{"3.3.3 create, doc.nonce = 0 → OracleSubmitData only", nil, doc(), true, false},
		{"3.3.3 create, doc.nonce > 0 → OracleSubmitData and OracleData", nil, doc(withNonce(3)), true, true},
		{"3.3.4 job, doc.nonce > Nonce → OracleData", job(), doc(withNonce(6)), false, true},
		{"3.3.4 job, doc.nonce = Nonce → nothing", job(), doc(withNonce(5)), false, false},
		{"3.3.4 job, doc.nonce < Nonce → nothing", job(), doc(withNonce(1)), false, false},
		{"3.3.4 unassigned → nothing", nil, doc(withAccounts(peerA), withNonce(4)), false, false},
		{"3.3.4 job to remove → nothing", job(), doc(withAccounts(peerA), withNonce(9)), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, l := ReconcileNeeds(tc.job, tc.doc, self)
			require.Equal(t, tc.submitted, s, "submitted")
			require.Equal(t, tc.lastBT, l, "lastBT")
		})
	}
}

func TestMissingFromList(t *testing.T) {
	mk := func(id uint64) oracle.Job { return oracle.Job{ID: JobID(id), RequestID: id} }
	jobs := []oracle.Job{mk(9), mk(2), mk(5), mk(4)}
	listed := []oracle.RequestDoc{doc(func(d *oracle.RequestDoc) { d.RequestID = 5 }), doc(func(d *oracle.RequestDoc) { d.RequestID = 1 })}
	require.Equal(t, []uint64{2, 4, 9}, MissingFromList(jobs, listed))
	require.Empty(t, MissingFromList(nil, listed))
	require.Equal(t, []uint64{2, 4, 5, 9}, MissingFromList(jobs, nil))
}

func TestAssignment(t *testing.T) {
	require.Equal(t, "req_7", JobID(7))
	require.Equal(t, "req_18446744073709551615", JobID(^uint64(0)))
	require.Equal(t, -1, AssignedIndex(nil, self))
	require.Equal(t, 1, AssignedIndex([]string{peerA, self, self}, self))

	cases := []struct {
		name     string
		accounts []string
		n        int
		wantIdx  int
		ok       bool
	}{
		{"D8 index 0, 2 endpoints → 0", []string{self, peerA}, 2, 0, true},
		{"D8 index 1, 2 endpoints → 1", []string{peerA, self}, 2, 1, true},
		{"D8 index 2, 2 endpoints → 0", []string{peerA, peerB, self}, 2, 0, true},
		{"D8 index 3, 3 endpoints → 0", []string{peerA, peerB, "x", self}, 3, 0, true},
		{"D8 index 4, 3 endpoints → 1", []string{peerA, peerB, "x", "y", self}, 3, 1, true},
		{"D8 index 2, 1 endpoint → 0", []string{peerA, peerB, self}, 1, 0, true},
		{"D8 no endpoints → none", []string{self}, 0, 0, false},
		{"D8 self absent → none", []string{peerA}, 2, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var eps []oracle.Endpoint
			for i := 0; i < tc.n; i++ {
				eps = append(eps, oracle.Endpoint{URL: JobID(uint64(i))})
			}
			d := doc(withAccounts(tc.accounts...), withEndpoints(eps...))
			ep, idx, ok := SelectEndpoint(d, self)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.ok, Assigned(d, self))
			if ok {
				require.Equal(t, tc.wantIdx, idx)
				require.Equal(t, eps[tc.wantIdx], ep)
			}
		})
	}
}

func TestDocActionString(t *testing.T) {
	require.Equal(t, "create", DocCreate.String())
	require.Equal(t, "DocAction(?)", DocAction(9).String())
}
