package oracle

import "time"

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
func doc(opts ...func(*RequestDoc)) RequestDoc {
	d := RequestDoc{
		RequestID:   7,
		Period:      30,
		AccountList: []string{peerA, self, peerB},
		Quorum:      2,
		Endpoints: []Endpoint{
			{URL: "http://src/r/7/e/0", ParseRule: "data.price"},
			{URL: "http://src/r/7/e/1", ParseRule: "result.value"},
		},
		Status: StatusEnabled,
	}
	for _, o := range opts {
		o(&d)
	}
	return d
}

func withNonce(n uint64) func(*RequestDoc) { return func(d *RequestDoc) { d.Nonce = n } }
func withStatus(s RequestStatus) func(*RequestDoc) {
	return func(d *RequestDoc) { d.Status = s }
}
func withAccounts(a ...string) func(*RequestDoc) { return func(d *RequestDoc) { d.AccountList = a } }
func withPeriod(p uint32) func(*RequestDoc)      { return func(d *RequestDoc) { d.Period = p } }
func withEndpoints(e ...Endpoint) func(*RequestDoc) {
	return func(d *RequestDoc) { d.Endpoints = e }
}

// job is the job a creation from doc(withNonce(5)) at t0 gives, then opts.
func job(opts ...func(*Job)) *Job {
	j := Job{
		ID:            "req_7",
		RequestID:     7,
		URL:           "http://src/r/7/e/1",
		ParseRule:     "result.value",
		Nonce:         5,
		NextRunTime:   t0,
		Period:        sec(30),
		Status:        StatusEnabled,
		AccountList:   []string{peerA, self, peerB},
		AssignedIndex: 1,
		Exec:          ExecutionState{Status: ExecPending},
		CreatedAt:     t0,
		UpdatedAt:     t0,
	}
	for _, o := range opts {
		o(&j)
	}
	return &j
}

func jExec(s ExecStatus) func(*Job) { return func(j *Job) { j.Exec.Status = s } }
func jNext(t time.Time) func(*Job)  { return func(j *Job) { j.NextRunTime = t } }
func jNonce(n uint64) func(*Job)    { return func(j *Job) { j.Nonce = n } }
func jStatus(s RequestStatus) func(*Job) {
	return func(j *Job) { j.Status = s }
}
func jSuperseded() func(*Job) { return func(j *Job) { j.Exec.Superseded = true } }
func jExecNonce(n uint64) func(*Job) {
	return func(j *Job) { j.Exec.ExecNonce = n }
}
