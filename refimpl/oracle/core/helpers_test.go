package core

import (
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	self  = "guru1self"
	peerA = "guru1peera"
	peerB = "guru1peerb"
)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

func at(d time.Duration) time.Time { return t0.Add(d) }

// doc is request 7, ENABLED, period 30 s, self at index 1 of three
// accounts, two endpoints, nonce 0; opts change it.
func doc(opts ...func(*oracle.RequestDoc)) oracle.RequestDoc {
	d := oracle.RequestDoc{
		RequestID:   7,
		Period:      30,
		AccountList: []string{peerA, self, peerB},
		Quorum:      2,
		Endpoints: []oracle.Endpoint{
			{URL: "http://src/r/7/e/0", ParseRule: "data.price"},
			{URL: "http://src/r/7/e/1", ParseRule: "result.value"},
		},
		Status: oracle.StatusEnabled,
	}
	for _, o := range opts {
		o(&d)
	}
	return d
}

func withNonce(n uint64) func(*oracle.RequestDoc) { return func(d *oracle.RequestDoc) { d.Nonce = n } }
func withStatus(s oracle.RequestStatus) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.Status = s }
}
func withAccounts(a ...string) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.AccountList = a }
}
func withPeriod(p uint32) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.Period = p }
}
func withEndpoints(e ...oracle.Endpoint) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.Endpoints = e }
}

// job is the job a creation from doc(withNonce(5)) at t0 gives, then opts.
func job(opts ...func(*oracle.Job)) *oracle.Job {
	j := oracle.Job{
		ID:            "req_7",
		RequestID:     7,
		URL:           "http://src/r/7/e/1",
		ParseRule:     "result.value",
		Nonce:         5,
		NextRunTime:   t0,
		Period:        sec(30),
		Status:        oracle.StatusEnabled,
		AccountList:   []string{peerA, self, peerB},
		AssignedIndex: 1,
		Exec:          oracle.ExecutionState{Status: oracle.ExecPending},
		CreatedAt:     t0,
		UpdatedAt:     t0,
	}
	for _, o := range opts {
		o(&j)
	}
	return &j
}

func jExec(s oracle.ExecStatus) func(*oracle.Job) { return func(j *oracle.Job) { j.Exec.Status = s } }
func jNext(t time.Time) func(*oracle.Job)         { return func(j *oracle.Job) { j.NextRunTime = t } }
func jNonce(n uint64) func(*oracle.Job)           { return func(j *oracle.Job) { j.Nonce = n } }
func jStatus(s oracle.RequestStatus) func(*oracle.Job) {
	return func(j *oracle.Job) { j.Status = s }
}
func jSuperseded() func(*oracle.Job) { return func(j *oracle.Job) { j.Exec.Superseded = true } }
func jExecNonce(n uint64) func(*oracle.Job) {
	return func(j *oracle.Job) { j.Exec.ExecNonce = n }
}
